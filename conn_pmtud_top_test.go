package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// The search's first probe is its ceiling (an Ethernet MTU: 1472 bytes
// on Linux sockets, 1452 elsewhere and in the simulator): on a path that carries it, as loopback and most Ethernet
// paths do, one probe per side ends the search, where a binary search
// from 1252 took eight or nine, each with its acknowledgment; accepting
// 10,000 idle connections spent about a third of the server's protocol
// time on them (issue 28). A path with a smaller MTU loses that probe and
// the binary search finds its MTU as before (TestSimPathMTUConverges).
func TestSimPathMTUFirstProbeIsCeiling(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mtu       int // 0: netsim's default, no limit
		want      int
		maxProbes int
	}{
		{"full", 0, defaultMaxPacketSize, 1}, // the simulator's sockets: no jumbo ceiling
		{"1400", 1400, 1400, 13},             // 12 before: the lost ceiling probe is one more
	} {
		t.Run(tc.name, func(t *testing.T) {
			link := linkWith(func(l *netsim.LinkConfig) { l.MTU = tc.mtu })
			p := newSimPair(t, link, nil, 107)
			probes := map[*simEndpoint]int{}
			for _, e := range []*simEndpoint{p.client, p.server} {
				e.dropOut = func(_ time.Time, d []byte) bool {
					if len(d) > 1300 && e.c != nil && e.c.handshakeConfirmed {
						probes[e]++ // nothing else is that large on an idle connection
					}
					return false
				}
			}
			p.connect(t)
			p.run(t, 10*time.Second, func() bool {
				return !p.client.c.pmtud.searching && !p.server.c.pmtud.searching
			})
			for _, e := range []*simEndpoint{p.client, p.server} {
				if e.c.maxDatagramSize != tc.want {
					t.Errorf("%v: maximum datagram size %d, want %d", e.c.role, e.c.maxDatagramSize, tc.want)
				}
				if n := probes[e]; n == 0 || n > tc.maxProbes {
					t.Errorf("%v: %d probes, want 1 to %d", e.c.role, n, tc.maxProbes)
				}
			}
			t.Logf("probes: client %d, server %d; %v of simulated time", probes[p.client], probes[p.server], p.sim.Elapsed())
		})
	}
}
