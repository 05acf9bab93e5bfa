package quic

import (
	"testing"
	"time"

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
	p := newSimPair(t, link, nil, 93)
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
		if st := c.cc.State(); st.Phase != "slow_start" {
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
