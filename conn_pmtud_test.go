package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/netsim"
)

// DPLPMTUD (RFC 8899 for QUIC, RFC 9000, Section 14.3) finds the largest
// datagram a path carries: on links whose MTU is 1350 bytes of UDP
// payload, both ends search upward from 1252 with PING+PADDING probes and
// settle on exactly 1350. Lost probes are not congestion (RFC 9000,
// Section 14.4): no congestion event is reported while nothing else is
// lost.
func TestSimPathMTUConverges(t *testing.T) {
	link := linkWith(func(l *netsim.LinkConfig) { l.MTU = 1350 })
	// Cubic shows a congestion event as the end of its slow start.
	p := newSimPair(t, link, &Config{Congestion: congestion.NewCubic}, 93)
	p.connect(t)
	p.run(t, 10*time.Second, func() bool {
		return !p.client.c.pmtud.searching && !p.server.c.pmtud.searching
	})
	for _, c := range []*connState{p.client.c, p.server.c} {
		if c.maxDatagramSize != 1350 {
			t.Errorf("%v: maximum datagram size %d, want 1350", c.role, c.maxDatagramSize)
		}
		if n := c.sent.LostPackets(); n == 0 {
			t.Errorf("%v: no probe was lost: the search never went above the MTU", c.role)
		}
		// An idle connection is application-limited, which the phase
		// shows; it must still be in slow start, never in recovery.
		if st := c.cc.State(); st.InRecovery || !st.InSlowStart {
			t.Errorf("%v: congestion controller in %q after losing only probes", c.role, st.Phase)
		}
	}
	t.Logf("converged in %v of simulated time; probes lost: client %d, server %d", p.sim.Elapsed(),
		p.client.c.sent.LostPackets(), p.server.c.sent.LostPackets())
	// A transfer uses the size found.
	simTransfer(t, p, 1, 2<<20, 10*time.Second, nil)
	if d := p.path.AB.Stats().DroppedMTU; d > 10 {
		t.Errorf("%d datagrams too large for the link during the transfer", d)
	}
}

// The MTU drops mid-transfer from 1500 to 1300 bytes: every full-size
// packet is lost from then on (a black hole, RFC 8899, Section 4.3). The
// sender falls back to 1200 bytes, the transfer completes, and the search
// finds the new MTU.
func TestSimPathMTUBlackHole(t *testing.T) {
	p := newSimPair(t, testLink, nil, 94)
	p.connect(t)
	p.run(t, 10*time.Second, func() bool { return !p.client.c.pmtud.searching })
	if got := p.client.c.maxDatagramSize; got != defaultMaxPacketSize {
		t.Fatalf("maximum datagram size %d before the drop, want %d", got, defaultMaxPacketSize)
	}
	drop := p.sim.Now().Add(200 * time.Millisecond)
	dropped := false
	simTransfer(t, p, 1, 8<<20, 30*time.Second, func() bool {
		if !dropped && !p.sim.Now().Before(drop) {
			dropped = true
			p.path.AB.SetConfig(linkWith(func(l *netsim.LinkConfig) { l.MTU = 1300 }))
		}
		return true
	})
	c := p.client.c
	if c.pmtud.blackHoles == 0 {
		t.Fatal("no black hole detected")
	}
	p.run(t, 10*time.Second, func() bool { return !c.pmtud.searching })
	if c.maxDatagramSize != 1300 {
		t.Errorf("maximum datagram size %d after the search, want 1300", c.maxDatagramSize)
	}
	t.Logf("black holes %d; %d datagrams too large dropped; done at %v", c.pmtud.blackHoles, p.path.AB.Stats().DroppedMTU, p.sim.Elapsed())
}

// The search starts again after PMTU_RAISE_TIMER (10 minutes, RFC 8899,
// Section 5.1.1): a path whose MTU grew is found out.
func TestSimPathMTURaise(t *testing.T) {
	link := linkWith(func(l *netsim.LinkConfig) { l.MTU = 1350 })
	p := newSimPair(t, link, &Config{KeepAlivePeriod: 10 * time.Second}, 100)
	p.connect(t)
	c := p.client.c
	p.run(t, 10*time.Second, func() bool { return !c.pmtud.searching })
	if c.maxDatagramSize != 1350 {
		t.Fatalf("maximum datagram size %d, want 1350", c.maxDatagramSize)
	}
	p.path.AB.SetConfig(testLink)
	p.path.BA.SetConfig(testLink)
	p.sim.RunFor(9 * time.Minute)
	if c.maxDatagramSize != 1350 {
		t.Fatalf("searched again before 10 minutes: %d", c.maxDatagramSize)
	}
	p.sim.RunFor(2 * time.Minute)
	if c.maxDatagramSize != defaultMaxPacketSize || c.closeState != stateActive {
		t.Fatalf("maximum datagram size %d after 11 minutes (state %v), want %d", c.maxDatagramSize, c.closeState, defaultMaxPacketSize)
	}
}

// Black hole detection counts bursts of lost full-size packets, not
// packets: congestion drops several consecutive packets at once (a full
// queue or socket buffer), and when only a small packet sent after them
// is acknowledged that burst alone used to end a correct search (seen
// over a real veth pair under load). Three separate bursts with no
// full-size packet acknowledged in between are a black hole (RFC 8899,
// Section 4.3).
func TestPathMTUBlackHoleCountsBursts(t *testing.T) {
	p := newSimPair(t, testLink, nil, 95)
	p.connect(t)
	c := p.client.c
	p.run(t, 10*time.Second, func() bool { return !c.pmtud.searching })
	size := c.maxDatagramSize
	if size <= pmtuBase {
		t.Fatalf("maximum datagram size %d after the search", size)
	}
	pn := c.pmtud.largestAckedLarge + 10
	lose := func(n int) {
		for range n {
			pn++
			c.pmtuOnLost(pn, size)
		}
		pn += 5 // packets that were not lost separate the bursts
	}
	lose(8) // one burst of eight
	if c.pmtud.blackHoles != 0 || c.maxDatagramSize != size {
		t.Fatalf("one burst of lost packets taken for a black hole (size now %d)", c.maxDatagramSize)
	}
	lose(1)
	c.pmtuOnAcked(pn, size) // a full-size packet got through: start again
	lose(3)
	lose(2)
	if c.pmtud.blackHoles != 0 {
		t.Fatal("bursts before an acknowledged full-size packet counted")
	}
	lose(1)
	if c.pmtud.blackHoles != 1 || c.maxDatagramSize != pmtuBase {
		t.Fatalf("three bursts: black holes %d, size %d, want 1 and %d", c.pmtud.blackHoles, c.maxDatagramSize, pmtuBase)
	}
}

// A probe the local network stack refuses as larger than the interface's
// MTU (EMSGSIZE, reported through handleSendTooBig) ends the search below
// its size at once: "MAX_PLPMTU ... has to be less than or equal to the
// maximum size of the PL packet that can be sent on the outgoing
// interface" (RFC 8899, Section 5.1.2), and the probe stops counting in
// flight. Searching up to 9000 bytes over a 1500-byte interface takes a
// probe per size that fits, where three lost probes per size too large
// would take seconds more.
// newSimPairLocalMTU1500 connects nothing yet: it returns a pair that
// may send up to 9000 bytes whose client's local stack refuses every
// datagram above 1500 bytes, as the kernel does with EMSGSIZE, and the
// count of datagrams refused so far.
func newSimPairLocalMTU1500(t *testing.T) (*simPair, *int) {
	t.Helper()
	// Cubic shows a congestion event as the end of its slow start.
	p := newSimPair(t, testLink, &Config{MaxPacketSize: 9000, Congestion: congestion.NewCubic}, 101)
	p.server.maxRecvPayload = 9000
	p.client.buf = make([]byte, 0, 9000)
	refused := 0
	p.client.dropOut = func(now time.Time, d []byte) bool {
		if len(d) <= 1500 {
			return false
		}
		refused++
		p.client.c.handleSendTooBig(now, len(d))
		return true
	}
	return p, &refused
}

func TestSimPathMTULocalRefusal(t *testing.T) {
	p, refused := newSimPairLocalMTU1500(t)
	p.connect(t)
	start := p.sim.Now()
	c := p.client.c
	c.bytesSent = pmtuJumboAfter // the search goes above 1472 after 4 MB sent
	p.run(t, 10*time.Second, func() bool { return !c.pmtud.searching && c.pmtud.jumboMax == 0 })
	if c.maxDatagramSize != 1500 {
		t.Errorf("maximum datagram size %d, want 1500", c.maxDatagramSize)
	}
	// The 13 sizes that fit (8 up to 1472, then 5 above) take a round
	// trip and the peer's ACK delay each, 45 ms; those refused nothing.
	if d := p.sim.Now().Sub(start); d > 700*time.Millisecond {
		t.Errorf("search took %v", d)
	}
	if *refused == 0 || *refused > 10 {
		t.Errorf("%d probes refused", *refused)
	}
	if st := c.cc.State(); st.InRecovery || !st.InSlowStart {
		t.Errorf("congestion controller in %q after refused probes", st.Phase)
	}
	t.Logf("converged in %v; %d probes refused", p.sim.Now().Sub(start), *refused)
}

// A datagram of the size in force refused by the local stack (the route
// moved to an interface with a smaller MTU) is a black hole: the
// connection falls back to BASE_PLPMTU and searches again.
func TestSimPathMTULocalRefusalInForce(t *testing.T) {
	p := newSimPair(t, testLink, nil, 102)
	p.connect(t)
	c := p.client.c
	p.run(t, 10*time.Second, func() bool { return !c.pmtud.searching })
	if c.maxDatagramSize != defaultMaxPacketSize {
		t.Fatalf("maximum datagram size %d, want %d", c.maxDatagramSize, defaultMaxPacketSize)
	}
	c.handleSendTooBig(p.sim.Now(), defaultMaxPacketSize)
	if c.maxDatagramSize != pmtuBase || c.pmtud.blackHoles != 1 || !c.pmtud.searching {
		t.Errorf("after a refusal: size %d, black holes %d, searching %v", c.maxDatagramSize, c.pmtud.blackHoles, c.pmtud.searching)
	}
}

// The simulated counterpart of TestUDPLoopbackJumboPackets
// (conn_udp_jumbo_test.go), without its real time: with Linux's default
// MaxPacketSize, the search stops at an Ethernet MTU (1472 bytes) until
// the connection sent 4 MB, then goes up over a loopback-like path, whose
// local stack refuses datagrams above 65507 bytes (the largest UDP
// payload over IPv4) with EMSGSIZE, and stops within 1.5% of it; the
// receiving end, which sends little, stays at 1472.
func TestSimPathMTULoopbackJumbo(t *testing.T) {
	const loopbackMax = 65507
	p := newSimPair(t, testLink, &Config{MaxPacketSize: jumboMaxPacketSize}, 103)
	p.server.maxRecvPayload = jumboMaxPacketSize
	p.client.buf = make([]byte, 0, jumboMaxPacketSize)
	refused := 0
	p.client.dropOut = func(now time.Time, d []byte) bool {
		if len(d) <= loopbackMax {
			return false
		}
		refused++
		p.client.c.handleSendTooBig(now, len(d))
		return true
	}
	p.connect(t)
	c := p.client.c
	p.run(t, 10*time.Second, func() bool { return !c.pmtud.searching })
	if c.maxDatagramSize != pmtuEthernet {
		t.Fatalf("before 4 MB: maximum datagram size %d, want %d", c.maxDatagramSize, pmtuEthernet)
	}
	simTransfer(t, p, 1, 8<<20, 30*time.Second, nil)
	p.run(t, 10*time.Second, func() bool { return c.pmtud.jumboMax == 0 && !c.pmtud.searching })
	if n := c.maxDatagramSize; n <= loopbackMax-loopbackMax/64 || n > loopbackMax {
		t.Errorf("maximum datagram size %d, want within 1.5%% below %d", n, loopbackMax)
	}
	if n := c.pmtud.blackHoles; n != 0 {
		t.Errorf("%d black holes", n)
	}
	if p.server.c.maxDatagramSize != pmtuEthernet {
		t.Errorf("the receiving end, which sent little: maximum datagram size %d, want %d", p.server.c.maxDatagramSize, pmtuEthernet)
	}
	t.Logf("client: maximum datagram size %d, %d probes refused", c.maxDatagramSize, refused)
}

// A MaxPacketSize below the default initial packet size (1252) caps the
// initial size too: no datagram either side sends, the handshake's
// included, is larger than MaxPacketSize (hostile review of issue 28: the
// initial size was used unchanged, so 1252-byte datagrams went out with
// MaxPacketSize 1220).
func TestSimMaxPacketSizeBelowInitialSize(t *testing.T) {
	cfg := &Config{MaxPacketSize: 1220}
	p := newSimPair(t, linkWith(func(*netsim.LinkConfig) {}), cfg, 11)
	largest := 0
	for _, e := range []*simEndpoint{p.client, p.server} {
		e.dropOut = func(_ time.Time, d []byte) bool {
			largest = max(largest, len(d))
			return false
		}
	}
	p.connect(t)
	p.sim.RunFor(5 * time.Second) // the PMTU search ends meanwhile
	if largest == 0 || largest > 1220 {
		t.Fatalf("largest datagram %d bytes, want at most MaxPacketSize (1220)", largest)
	}
}
