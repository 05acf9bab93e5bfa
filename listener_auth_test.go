package quic

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// corruptFirst corrupts one byte of the first datagram written through it.
type corruptFirst struct {
	net.PacketConn
	at   int
	once sync.Once
	scid []byte // the client's Source Connection ID, from that datagram
}

func (c *corruptFirst) WriteTo(p []byte, addr net.Addr) (int, error) {
	c.once.Do(func() {
		c.scid = append([]byte(nil), p[15:15+int(p[14])]...)
		q := append([]byte(nil), p...)
		q[c.at] ^= 0x55
		p = q
	})
	return c.PacketConn.WriteTo(p, addr)
}

// serverSniff records the Destination Connection IDs of the long-header
// packets a server writes.
type serverSniff struct {
	net.PacketConn
	mu    sync.Mutex
	dcids [][]byte
}

func (s *serverSniff) WriteTo(p []byte, addr net.Addr) (int, error) {
	if h, err := wire.ParseInvariantHeader(p, 0); err == nil && h.IsLong {
		s.mu.Lock()
		s.dcids = append(s.dcids, append([]byte(nil), h.DstConnID...))
		s.mu.Unlock()
	}
	return s.PacketConn.WriteTo(p, addr)
}

// A client Initial corrupted in transit (here a byte of its Source
// Connection ID) fails authentication, and the listener must not build a
// connection on its header: the server answers the client's intact second
// Initial datagram, to the connection ID the client chose, and the
// handshake completes.
func TestListenerIgnoresUnauthenticatedInitial(t *testing.T) {
	ctls, stls := testTLS(t)
	su, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	sniff := &serverSniff{PacketConn: su}
	str := &Transport{Conn: sniff}
	defer str.Close()
	l, err := str.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	cu, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	// Byte 16 lies in the Source Connection ID: first byte, version,
	// DCID length, 8-byte DCID, SCID length, then the SCID at 15.
	cf := &corruptFirst{PacketConn: cu, at: 16}
	ctr := &Transport{Conn: cf}
	defer ctr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		if c, err := l.Accept(ctx); err == nil {
			<-c.Context().Done()
		}
	}()
	c, err := ctr.Dial(ctx, su.LocalAddr(), ctls, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.CloseWithError(0, "")
	sniff.mu.Lock()
	defer sniff.mu.Unlock()
	if len(sniff.dcids) == 0 {
		t.Fatal("the server sent no long-header packet")
	}
	scid := cf.scid
	for _, d := range sniff.dcids {
		if !bytes.Equal(d, scid) {
			t.Fatalf("server sent a packet to %x, not to the client's connection ID %x", d, scid)
		}
	}
}
