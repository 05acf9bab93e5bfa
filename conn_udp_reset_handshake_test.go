package quic

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// dropPacketConn is a server socket that loses received datagrams while
// drop says so.
type dropPacketConn struct {
	net.PacketConn
	drop    func() bool
	dropped atomic.Int64
}

func (c *dropPacketConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.PacketConn.ReadFrom(b)
		if err != nil || !c.drop() {
			return n, addr, err
		}
		c.dropped.Add(1)
	}
}

// A server whose handshake timed out before the client's Finished arrived
// has forgotten a connection the client considers established, but not
// yet confirmed: the client may send only Handshake packets (long headers)
// until HANDSHAKE_DONE, "An endpoint MUST NOT set its PTO timer for the
// Application Data packet number space until the handshake is confirmed"
// (RFC 9002, Section 6.2.1). The server answers them with a stateless
// reset, "An endpoint MAY send a Stateless Reset in response to a packet
// with a long header" (RFC 9000, Section 10.3), which the client can
// recognise since the server's stateless_reset_token transport parameter
// came with the handshake. Without it the client probes for its whole idle
// timeout (the load test of docs/weaknet-analysis.md: a third of 1,000
// clients hung after their server's handshakes timed out under load).
func TestUDPStatelessResetForgottenHandshake(t *testing.T) {
	ctls, stls := testTLS(t)
	ctls = ctls.Clone()
	ctls.CurvePreferences = []tls.CurveID{tls.X25519} // a ClientHello of one datagram
	var ts *Transport
	var reads atomic.Int64
	sock := &dropPacketConn{PacketConn: pathListenUDP(t)}
	// The server reads the ClientHello, then nothing until its handshake
	// has timed out.
	sock.drop = func() bool {
		return reads.Add(1) > 1 && ts.Stats().HandshakesFailed == 0
	}
	ts = &Transport{Conn: sock}
	defer ts.Close()
	if _, err := ts.Listen(stls, &Config{HandshakeIdleTimeout: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	tc := &Transport{Conn: pathListenUDP(t)}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The client's idle timeout is far beyond the test's wait.
	c, err := tc.Dial(ctx, ts.Conn.LocalAddr(), ctls, &Config{HandshakeIdleTimeout: 5 * time.Minute, MaxIdleTimeout: 5 * time.Minute})
	if err == nil {
		select {
		case <-c.Context().Done():
			err = context.Cause(c.Context())
		case <-time.After(60 * time.Second):
			t.Fatalf("client still open 60 s after the server forgot its handshake (server dropped %d datagrams, sent %d stateless resets)",
				sock.dropped.Load(), ts.Stats().StatelessResetsSent)
		}
	}
	if !errors.As(err, new(*StatelessResetError)) {
		t.Fatalf("client ended with %v, want a stateless reset", err)
	}
	if sock.dropped.Load() == 0 {
		t.Fatal("the server lost none of the client's handshake")
	}
}

// Only Handshake packets for unknown connection IDs get a stateless reset
// among long headers, smaller than the packet: not those of a live
// connection (which the connection processes), not an Initial too small
// to start a connection, not a 0-RTT packet (whose ID the client chose:
// it has no token for it).
func TestUDPStatelessResetLongHeaders(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts := &Transport{Conn: pathListenUDP(t)}
	defer ts.Close()
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)
	c, err := DialAddr(ctx, ts.Conn.LocalAddr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	srv := <-conns
	pathEcho(t, c, []byte("hello"))
	var live wire.ConnectionID
	for i := range ts.ep.routes.shards {
		s := &ts.ep.routes.shards[i]
		s.mu.RLock()
		for cid, r := range s.m {
			if r.c == srv {
				live = cid
			}
		}
		s.mu.RUnlock()
	}
	attacker := pathListenUDP(t)
	replies := make(chan int, 16)
	go func() {
		b := make([]byte, 2048)
		for {
			n, _, err := attacker.ReadFrom(b)
			if err != nil {
				return
			}
			replies <- n
		}
	}()
	// A Version 1 long header of type bits typ (RFC 9000, Section 17.2),
	// an empty Source Connection ID and 64 bytes of payload.
	send := func(typ byte, cid wire.ConnectionID) int {
		pkt := []byte{0xc0 | typ<<4, 0, 0, 0, 1, byte(cid.Len())}
		pkt = append(pkt, cid.Bytes()...)
		pkt = append(pkt, 0, 0x40, 0x40)
		pkt = append(pkt, bytes.Repeat([]byte{0xaa}, 64)...)
		if _, err := attacker.WriteTo(pkt, ts.Conn.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		return len(pkt)
	}
	unknown := wire.NewConnectionID([]byte{9, 9, 9, 9, 9, 9, 9, 9})
	const initial, zeroRTT, handshakeType = 0, 1, 2
	send(handshakeType, live)
	send(initial, unknown)
	send(zeroRTT, unknown)
	n := send(handshakeType, unknown)
	// The socket reads the four in order: once the last is answered, the
	// others were handled.
	pathPollUntil(t, "a reset for the unknown ID", func() bool { return ts.Stats().StatelessResetsSent >= 1 })
	if got := ts.Stats().StatelessResetsSent; got != 1 {
		t.Errorf("%d stateless resets sent, want 1 (for the unknown ID's Handshake packet)", got)
	}
	select {
	case m := <-replies:
		if m >= n || m < 21 {
			t.Errorf("stateless reset of %d bytes for a packet of %d", m, n)
		}
	case <-ctx.Done():
		t.Fatal("no stateless reset received")
	}
	pathEcho(t, c, []byte("still there"))
}
