package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// Hostile review of the ceiling-first probe (issue 28): on a path whose
// MTU is below the ceiling, the lost ceiling probe must not count against
// the next size the search probes. Here the first probe of the binary
// search (1352 bytes, which the 1400-byte path carries) is lost twice to
// random loss; with the ceiling's loss counted too, the third loss in a
// row made 1352 "not supported" (hi = 1352) and the search ended below
// the path's MTU. MAX_PROBES counts the probes of one size: "the PL ...
// determines that the probed size is not supported" (RFC 8899, Section
// 5.2).
func TestSimPathMTUCeilingLossNotCountedForNextSize(t *testing.T) {
	link := linkWith(func(l *netsim.LinkConfig) { l.MTU = 1400 })
	p := newSimPair(t, link, nil, 107)
	var sizes []int
	e := p.client
	e.dropOut = func(_ time.Time, d []byte) bool {
		if len(d) <= 1300 || e.c == nil || !e.c.handshakeConfirmed {
			return false
		}
		sizes = append(sizes, len(d)) // only probes are that large on an idle connection
		// The first is the ceiling (lost on the link); the next two are
		// the first size of the binary search, both lost.
		return len(sizes) == 2 || len(sizes) == 3
	}
	p.connect(t)
	p.run(t, 20*time.Second, func() bool { return !p.client.c.pmtud.searching })
	if len(sizes) < 3 || sizes[0] != defaultMaxPacketSize || sizes[1] != sizes[2] || sizes[1] > 1400 {
		t.Fatalf("probe sizes %v: want the ceiling, then twice one size the path carries", sizes)
	}
	if got := p.client.c.maxDatagramSize; got != 1400 {
		t.Errorf("maximum datagram size %d, want 1400 (probes %v)", got, sizes)
	}
}
