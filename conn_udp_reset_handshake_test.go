package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"
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
