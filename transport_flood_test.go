package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicstack/quic/wire"
)

// These tests run Transports over in-memory sockets in a testing/synctest
// bubble: hostile peers that flood, spoof addresses or stall, with
// timeouts that take no real time.

// floodConn is a server's socket reachable from any address: the test
// puts datagrams in its queue with the source address it likes, as a
// spoofing attacker would. What the server writes to the one real client
// reaches it; what it writes elsewhere is counted per address and lost.
type floodConn struct {
	*memConn
	client net.Addr
	mu     sync.Mutex
	sent   map[string]int  // bytes written to each other address
	retry  map[string]bool // a Retry packet was among them
	other  map[string]bool // so was something else
}

func newFloodConn() (*floodConn, *memConn) {
	sc, cc := newMemConnPair()
	return &floodConn{memConn: sc, client: cc.LocalAddr(), sent: map[string]int{},
		retry: map[string]bool{}, other: map[string]bool{}}, cc
}

func (f *floodConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if addr.String() == f.client.String() {
		return f.memConn.WriteTo(p, addr)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	a := addr.String()
	f.sent[a] += len(p)
	if hasPacketType(p, wire.PacketTypeRetry) {
		f.retry[a] = true
	} else {
		f.other[a] = true
	}
	return len(p), nil
}

// inject delivers d to the server as if from addr.
func (f *floodConn) inject(d []byte, addr net.Addr) { f.in <- memPacket{data: d, from: addr} }

func spoofedAddr(i int) *net.UDPAddr {
	return &net.UDPAddr{IP: net.IPv4(198, 51, byte(i>>8), byte(i)), Port: 1024 + i}
}

// clientInitial returns the first datagram (a padded Initial) of a fresh
// client connection whose Destination Connection ID depends on i. Its
// ClientHello offers X25519 only, so that it fits the one datagram and the
// server can answer it with its whole flight.
func clientInitial(t *testing.T, ctls *tls.Config, i int) []byte {
	t.Helper()
	return makeClientInitial(t, ctls, i, false)
}

// failingInitial is clientInitial with a Source Connection ID other than
// the initial_source_connection_id of its transport parameters: the
// server authenticates it, parses the ClientHello, and fails the
// handshake at once with TRANSPORT_PARAMETER_ERROR (RFC 9000,
// Section 7.3).
func failingInitial(t *testing.T, ctls *tls.Config, i int) []byte {
	t.Helper()
	return makeClientInitial(t, ctls, i, true)
}

func makeClientInitial(t *testing.T, ctls *tls.Config, i int, badSCID bool) []byte {
	t.Helper()
	ctls = ctls.Clone()
	ctls.CurvePreferences = []tls.CurveID{tls.X25519}
	dcid := wire.NewConnectionID([]byte{0xf1, byte(i >> 8), byte(i), 3, 4, 5, 6, 7})
	c, err := newConnState(time.Now(), wire.RoleClient, (*Config)(nil).withDefaults(), connParams{
		tls: ctls, connIDGen: &testConnIDGen{next: uint64(i) << 16}, peerConnID: dcid, origDstConnID: dcid,
		version: wire.Version1, seed: uint64(i),
	})
	if err != nil {
		t.Fatal(err)
	}
	if badSCID {
		c.localConnID = wire.NewConnectionID([]byte{0xbd, byte(i >> 8), byte(i), 3, 4, 5, 6, 7})
	}
	d := append([]byte(nil), c.pollTransmit(time.Now(), make([]byte, 0, 1500))...)
	more := c.pollTransmit(time.Now(), make([]byte, 0, 1500))
	c.tls.Close()
	if len(d) < minInitialPacketSize || more != nil {
		t.Fatalf("client Initial of %d bytes, then %d more", len(d), len(more))
	}
	return d
}

// TestInitialFloodFromSpoofedAddresses floods a listener with valid client
// Initials from 200 addresses that never answer, then has a real client
// connect. The server answers each address with at most three times what
// it received from it (RFC 9000, Section 8.1); once half of MaxHandshakes
// handshakes are in flight it answers with Retry and keeps no state
// (Section 8.1.2); the real client, which echoes the Retry token, still
// connects; and the flood's connections end at HandshakeIdleTimeout.
func TestInitialFloodFromSpoofedAddresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctls, stls := testTLS(t)
		fc, cc := newFloodConn()
		const maxHS, n = 16, 200
		st := &Transport{Conn: fc, MaxHandshakes: maxHS}
		// Long enough for several loss-recovery probes of the server's
		// flight to the silent addresses.
		l, err := st.Listen(stls, &Config{HandshakeIdleTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			fc.inject(clientInitial(t, ctls, i), spoofedAddr(i))
		}
		synctest.Wait()
		if hs, conns := l.handshakes.Load(), st.conns.Load(); hs != maxHS/2 || conns != maxHS/2 {
			t.Errorf("%d handshakes in flight, %d connections after the flood; want %d (Retry beyond)", hs, conns, maxHS/2)
		}
		// A real client during the flood: Retry, then the handshake.
		ct := &Transport{Conn: cc}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := ct.Dial(ctx, fc.LocalAddr(), ctls, nil)
		if err != nil {
			t.Fatalf("a real client could not connect during the flood: %v", err)
		}
		sc, err := l.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Loss recovery resends the server's flight to the silent
		// addresses until the handshake idle timeout.
		time.Sleep(11 * time.Second)
		synctest.Wait()
		if hs, conns := l.handshakes.Load(), st.conns.Load(); hs != 0 || conns != 1 {
			t.Errorf("after HandshakeIdleTimeout: %d handshakes in flight, %d connections; want 0 and the real one", hs, conns)
		}
		fc.mu.Lock()
		var nRetry, nOther int
		for i := range n {
			a := spoofedAddr(i).String()
			if got := fc.sent[a]; got > 3*len(clientInitial(t, ctls, i)) {
				t.Errorf("%s: %d bytes sent for one %d-byte Initial: amplification above 3x", a, got, minInitialPacketSize)
			}
			if fc.retry[a] {
				nRetry++
			}
			if fc.other[a] {
				nOther++
			}
		}
		fc.mu.Unlock()
		if nOther != maxHS/2 || nRetry != n-maxHS/2 {
			t.Errorf("%d addresses got a handshake and %d a Retry; want %d and %d", nOther, nRetry, maxHS/2, n-maxHS/2)
		}
		// The real client's first Initial(s) got a Retry too.
		if r := st.Stats().RetriesSent; r <= uint64(nRetry) {
			t.Errorf("%d Retry packets sent, %d of them to the flood: none to the real client", r, nRetry)
		}
		c.CloseWithError(0, "")
		sc.CloseWithError(0, "")
		time.Sleep(10 * time.Second) // closing periods end
		l.Close()
		ct.Close()
		st.Close()
		cc.Close()
		fc.Close()
	})
}

// TestHandshakeFloodBoundedByMaxHandshakes: with Retry turned off
// (RequireAddressValidation says no), handshakes that never finish fill at
// most MaxHandshakes connection states; Initials beyond it are dropped
// unanswered; HandshakeIdleTimeout releases every state, and the counter
// of handshakes in flight returns to 0 (a slowloris of handshakes).
func TestHandshakeFloodBoundedByMaxHandshakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctls, stls := testTLS(t)
		fc, cc := newFloodConn()
		const maxHS, n = 8, 40
		st := &Transport{Conn: fc, MaxHandshakes: maxHS, RequireAddressValidation: func(net.Addr) bool { return false }}
		l, err := st.Listen(stls, &Config{HandshakeIdleTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			fc.inject(clientInitial(t, ctls, i), spoofedAddr(i))
		}
		synctest.Wait()
		if hs, conns := l.handshakes.Load(), st.conns.Load(); hs != maxHS || conns != maxHS {
			t.Errorf("%d handshakes in flight, %d connections; want MaxHandshakes, %d", hs, conns, maxHS)
		}
		fc.mu.Lock()
		if len(fc.sent) != maxHS {
			t.Errorf("%d addresses answered, want %d", len(fc.sent), maxHS)
		}
		fc.mu.Unlock()
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		if hs, conns := l.handshakes.Load(), st.conns.Load(); hs != 0 || conns != 0 {
			t.Errorf("after HandshakeIdleTimeout: %d handshakes in flight, %d connections", hs, conns)
		}
		// The states are gone from the routing table too: a new Initial
		// from the same connection ID starts a new handshake.
		fc.inject(clientInitial(t, ctls, 0), spoofedAddr(0))
		synctest.Wait()
		if hs := l.handshakes.Load(); hs != 1 {
			t.Errorf("%d handshakes in flight after a new Initial", hs)
		}
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		l.Close()
		st.Close()
		cc.Close()
		fc.Close()
	})
}

// TestSlowlorisStreamsIdleTimeout: a client that opens every stream the
// server allows, sends a byte on each and then nothing, and never reads,
// cannot open more, and the idle timeout ends the connection on both
// sides; the bubble then checks that every goroutine exited.
func TestSlowlorisStreamsIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 4
		p := newConnPair(t, connPairOpts{Mem: true, Client: &Config{MaxIdleTimeout: 2 * time.Second}, Server: &Config{MaxIdleTimeout: 2 * time.Second, MaxIncomingStreams: limit}})
		for i := range limit {
			s, err := p.client.OpenStream()
			if err != nil {
				t.Fatalf("stream %d: %v", i, err)
			}
			s.Write([]byte{byte(i)})
		}
		if _, err := p.client.OpenStream(); err == nil {
			t.Fatal("opened a stream beyond the server's limit")
		}
		synctest.Wait()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		for _, c := range []*Conn{p.client, p.server} {
			if !isDone(c.Context()) {
				t.Fatal("connection still open after the idle timeout")
			}
			var ie *IdleTimeoutError
			if err := context.Cause(c.Context()); !errors.As(err, &ie) {
				t.Errorf("closed by %v, want the idle timeout", err)
			}
		}
		if n := p.serverT.conns.Load(); n != 0 {
			t.Errorf("%d server connections left", n)
		}
	})
}

// TestFailingInitialFloodTriggersRetry floods a listener with client
// Initials that fail at once (transport parameters that do not match the
// packet's Source Connection ID). Each failed handshake counts toward the
// automatic Retry trigger for a second, as if still in progress: past
// half of MaxHandshakes, the flood gets Retry packets and costs the
// server no handshake. Each connection that failed, before its client's
// address was validated, answered with one CONNECTION_CLOSE and kept no
// closing state (RFC 9000, Section 10.2.3): no connection is left. A
// second later the trigger has decayed and an Initial starts a handshake
// again.
func TestFailingInitialFloodTriggersRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctls, stls := testTLS(t)
		fc, cc := newFloodConn()
		const maxHS, n = 16, 40
		st := &Transport{Conn: fc, MaxHandshakes: maxHS}
		l, err := st.Listen(stls, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			fc.inject(failingInitial(t, ctls, i), spoofedAddr(i))
			synctest.Wait()
		}
		s := st.Stats()
		if s.HandshakesStarted != maxHS/2 || s.HandshakesFailed != maxHS/2 || s.RetriesSent != n-maxHS/2 {
			t.Errorf("%d handshakes started, %d failed, %d Retry packets; want %d, %d and %d",
				s.HandshakesStarted, s.HandshakesFailed, s.RetriesSent, maxHS/2, maxHS/2, n-maxHS/2)
		}
		if conns := st.conns.Load(); conns != 0 {
			t.Errorf("%d connections left (closing state) after failed handshakes", conns)
		}
		fc.mu.Lock()
		var closed int
		for i := range n {
			a := spoofedAddr(i).String()
			if fc.other[a] {
				closed++
				if got := fc.sent[a]; got > 3*minInitialPacketSize {
					t.Errorf("%s: %d bytes sent for one Initial", a, got)
				}
			}
		}
		fc.mu.Unlock()
		if closed != maxHS/2 {
			t.Errorf("%d addresses got a CONNECTION_CLOSE, want %d", closed, maxHS/2)
		}
		// The failures age out of the trigger.
		time.Sleep(2 * time.Second)
		fc.inject(failingInitial(t, ctls, n), spoofedAddr(n))
		synctest.Wait()
		if s := st.Stats(); s.HandshakesStarted != maxHS/2+1 {
			t.Errorf("2 s after the flood: %d handshakes started, want %d (no Retry)", s.HandshakesStarted, maxHS/2+1)
		}
		l.Close()
		st.Close()
		cc.Close()
		fc.Close()
	})
}
