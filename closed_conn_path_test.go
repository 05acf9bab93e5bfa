package quic

import (
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicstack/quic/wire"
)

// A connection that closed while its active path was not validated (an
// attacker's address it migrated to) hands over a closedConn that
// answers only datagrams from that address, within three times the bytes
// the address sent over the connection's life: "an endpoint MUST limit
// the amount of data it sends to the unvalidated address to three times
// the amount of data received from that address" (RFC 9000,
// Section 9.3.1). Datagrams from the client's own address, routed by the
// same connection ID, buy the attacker nothing.
func TestClosedConnUnvalidatedPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, peer := newMemConnPair()
		tr := &Transport{Conn: tc}
		if err := tr.init(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			tr.Close()
			tc.Close()
			peer.Close()
		}()
		cid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
		c := newConn(tr, peer.LocalAddr(), nil)
		tr.conns.Add(1)
		tr.ep.routes.add(cid, c)
		closeDatagram := make([]byte, 60)
		closeDatagram[0] = 0x4c
		ap, _ := addrPortOf(peer.LocalAddr())
		cc := &closedConn{
			datagram: closeDatagram, t: tr, addr: peer.LocalAddr(), ap: ap, only: unmappedAddrPort(peer.LocalAddr()),
			deadline: time.Now().Add(time.Second), cids: []wire.ConnectionID{cid}, transports: []*Transport{tr},
		}
		cc.rxBytes.Store(34) // what the attacker's address sent
		cc.txBytes.Store(90) // and got: a PATH_CHALLENGE
		tr.addClosed(c, cc)
		pkt := append([]byte{0x40}, cid.Bytes()...)
		pkt = append(pkt, make([]byte, 40-len(pkt))...)
		client := &net.UDPAddr{IP: net.IPv4(10, 0, 0, 9), Port: 5000}
		answers := func() int {
			n := 0
			for {
				peer.SetReadDeadline(time.Now().Add(time.Millisecond))
				buf := make([]byte, 1500)
				if _, _, err := peer.ReadFrom(buf); err != nil {
					return n
				}
				n++
			}
		}
		for range 64 {
			tc.in <- memPacket{data: pkt, from: client}
			synctest.Wait()
		}
		if n := answers(); n != 0 {
			t.Fatalf("%d answers to the unvalidated address for datagrams from another one", n)
		}
		// From the address itself: answered within its allowance.
		for range 8 {
			peer.WriteTo(pkt, tc.LocalAddr())
			synctest.Wait()
		}
		n := answers()
		if rx, tx := cc.rxBytes.Load(), cc.txBytes.Load(); n == 0 || tx > 3*rx {
			t.Errorf("%d answers; %d bytes sent to the address for %d received", n, tx, rx)
		}
	})
}
