package quic

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// waitStats polls f until it reports true, failing after a few seconds:
// counters are updated by other goroutines.
func waitStats(t *testing.T, what string, f func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !f(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Transport.Stats and Conn.Stats count handshakes, Retry, 0-RTT,
// stateless resets, version negotiation and drops over real sockets.
func TestUDPTransportStats(t *testing.T) {
	var cache *countingCache
	p := newConnPair(t, connPairOpts{NoDial: true, Retry: true, Early: true, Server: &Config{Allow0RTT: true},
		TLS: func(t testing.TB) (ctls, stls *tls.Config) {
			ctls, stls, cache = resumeTLS(t)
			return ctls, stls
		}})
	srv, cli, l, ctls := p.serverT, p.clientT, p.listener, p.ctls
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				io.Copy(s, s)
				s.CloseWrite()
			}()
		}
	}()
	var last *Conn
	for i := range 2 {
		dial := cli.Dial
		if i == 1 {
			dial = cli.DialEarly
		}
		c, err := dial(ctx, l.Addr(), ctls, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("ping"))
		s.CloseWrite()
		if b, err := io.ReadAll(s); err != nil || string(b) != "ping" {
			t.Fatalf("echo %q, %v", b, err)
		}
		<-c.HandshakeComplete()
		if i == 0 {
			waitStats(t, "a session ticket", func() bool { return cache.stored() > 0 })
		}
		last = c
	}
	cs := last.Stats()
	if !cs.HandshakeComplete || !cs.Used0RTT || !cs.Resumed || cs.Version != wire.Version2 || cs.CipherSuite == 0 ||
		cs.ALPN != "test" || cs.HandshakeDuration <= 0 || cs.PacketsSent == 0 || cs.BytesReceived == 0 {
		t.Errorf("client connection stats %+v", cs)
	}
	waitStats(t, "the server's handshakes", func() bool { return srv.Stats().HandshakesCompleted == 2 })
	ss := srv.Stats()
	if ss.HandshakesStarted != 2 || ss.HandshakesFailed != 0 || ss.RetriesSent < 2 || ss.ZeroRTTAccepted != 1 || ss.ZeroRTTRejected != 0 {
		t.Errorf("server stats %+v", ss)
	}
	if st := cli.Stats(); st.HandshakesStarted != 2 || st.HandshakesCompleted != 2 || st.ZeroRTTAccepted != 1 || st.ConnectionsOpen != 2 {
		t.Errorf("client stats %+v", st)
	}

	// Garbage for the server: a long header of an unknown version in a
	// full-size datagram, and a short header for no connection.
	raw, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	long := make([]byte, 1200)
	long[0] = 0xc0
	binary.BigEndian.PutUint32(long[1:], 0x1a2a3a4a)
	long[5] = 8
	long[14] = 8
	raw.WriteTo(long, l.Addr())
	short := make([]byte, 60)
	short[0] = 0x40
	copy(short[1:], "unknown!")
	// Stateless resets are rate-limited, with no budget in the
	// Transport's first second: send until one comes back.
	waitStats(t, "version negotiation and a stateless reset", func() bool {
		raw.WriteTo(short, l.Addr())
		time.Sleep(20 * time.Millisecond)
		s := srv.Stats()
		return s.VersionNegotiationsSent == 1 && s.StatelessResetsSent >= 1
	})
	ss = srv.Stats()
	if ss.PacketsDropped[DropUnsupportedVersion] != 1 || ss.PacketsDropped[DropUnknownConnection] < ss.StatelessResetsSent {
		t.Errorf("server drops %v", ss.PacketsDropped)
	}
	// Both ends of the datagram exchange see their answers.
	buf := make([]byte, 1500)
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := range 2 {
		if _, _, err := raw.ReadFrom(buf); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
	}
}
