//go:build linux && (amd64 || arm64)

package quic

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
)

// Over a veth pair between two network namespaces, a server listening on
// the wildcard address of a host with two addresses answers each of two
// clients from the address that client reached it at (IP_PKTINFO, RFC
// 9000, Section 9: a client drops or migrates on packets from elsewhere;
// behind LVS direct routing the wrong source breaks the flow), while both
// connections run at once.
func TestNetnsWildcardServerTwoAddresses(t *testing.T) {
	nsA, nsB := pathNetnsPair(t, 1500)
	veth := fmt.Sprintf("qpa%d", os.Getpid()%100000)
	if out, err := exec.Command("ip", "-n", nsA, "addr", "add", "10.99.0.3/24", "dev", veth).CombinedOutput(); err != nil {
		t.Fatalf("adding a second address: %v: %s", err, out)
	}
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	su := pathListenUDPIn(t, nsA, "0.0.0.0:0")
	ts := &Transport{Conn: su}
	defer ts.Close()
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	go pathEchoServer(ctx, l, make(chan *Conn, 2))
	port := uint16(su.LocalAddr().(*net.UDPAddr).Port)

	type client struct {
		at  netip.AddrPort
		rec *addrRecorder
		c   *Conn
	}
	var clients []*client
	for _, ip := range []string{"10.99.0.1", "10.99.0.3"} {
		cl := &client{
			at:  netip.AddrPortFrom(netip.MustParseAddr(ip), port),
			rec: &addrRecorder{PacketConn: pathListenUDPIn(t, nsB, "10.99.0.2:0"), froms: map[string]int{}},
		}
		tc := &Transport{Conn: cl.rec}
		defer tc.Close()
		if cl.c, err = tc.Dial(ctx, net.UDPAddrFromAddrPort(cl.at), ctls, nil); err != nil {
			t.Fatalf("dialing %v: %v", cl.at, err)
		}
		defer cl.c.CloseWithError(0, "")
		clients = append(clients, cl)
	}
	done := make(chan struct{}, len(clients))
	for i, cl := range clients {
		go func() {
			defer func() { done <- struct{}{} }()
			pathEcho(t, cl.c, bytes.Repeat([]byte{byte('a' + i)}, 300000))
		}()
	}
	for range clients {
		<-done
	}
	for _, cl := range clients {
		cl.rec.mu.Lock()
		if len(cl.rec.froms) != 1 || cl.rec.froms[cl.at.String()] == 0 {
			t.Errorf("client of %v received from %v; want only %v", cl.at, cl.rec.froms, cl.at)
		}
		cl.rec.mu.Unlock()
	}
}

// ECN marks cross a veth pair between two network namespaces: both ends
// mark their packets ECT(0), read the marks of what they receive, report
// them in ACK frames, and so validate ECN (RFC 9000, Section 13.4.2).
func TestNetnsECN(t *testing.T) {
	ts, tc, c, conns := netnsEchoPair(t, 1500)
	if !ts.SocketInfo().ECN || !tc.SocketInfo().ECN {
		t.Fatalf("sockets without ECN: %+v, %+v", ts.SocketInfo(), tc.SocketInfo())
	}
	pathEcho(t, c, make([]byte, 256<<10))
	sc := <-conns
	c.CloseWithError(0, "")
	<-c.done
	<-sc.done
	for _, x := range []*Conn{c, sc} {
		if st := x.state.sent.ECNState(); st != ackhandler.ECNCapable {
			t.Errorf("%v: ECN state %v after a transfer over the veth pair; want capable", x.state.role, st)
		}
	}
}
