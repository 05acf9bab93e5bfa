package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// Hostile review of the ceiling-first probe (issue 28): a client moves to
// a path with a smaller MTU while the old path's ceiling probe is in
// flight. The new path's search probes the same ceiling (both searches
// start there), and the old probe's acknowledgment, which says nothing
// about the new path, must not raise the new path's maximum datagram
// size: "the new path's MTU is unknown" and a size is confirmed only by a
// probe "successfully sent across the path" (RFC 8899, Section 5.3.1);
// "An endpoint MUST NOT ... assume that the PMTU of the new path is the
// same" is the spirit of RFC 9000, Section 9.4 ("the PMTU of the new path
// ... could differ").
func TestSimPathMTUOldPathProbeAckAfterMigration(t *testing.T) {
	oldLink := linkWith(func(l *netsim.LinkConfig) { l.Delay = 150 * time.Millisecond })
	newLink := linkWith(func(l *netsim.LinkConfig) { l.Delay = 2 * time.Millisecond; l.MTU = 1300 })
	p := newSimPair(t, oldLink, nil, 95)
	newAddr := netsim.Addr{Host: 6, Port: 7000}
	p.net.Connect(6, 2, newLink, newLink)
	p.cnode.AddAddr(newAddr)
	probeSent := false
	p.client.dropOut = func(_ time.Time, d []byte) bool {
		if len(d) > 1300 && p.client.c != nil && p.client.c.handshakeConfirmed {
			probeSent = true
		}
		return false
	}
	p.connect(t)
	cl := p.client.c
	target := pathAddrs{local: newAddr.AddrPort(), remote: cl.activePath().addrs.remote}
	stage := 0
	var validated []bool
	worst := 0
	p.run(t, 10*time.Second, func() bool {
		switch {
		case stage == 0 && probeSent:
			// The old path's ceiling probe is on its way (150 ms each way).
			if err := cl.probePath(p.sim.Now(), target, false, false, func(ok bool) { validated = append(validated, ok) }); err != nil {
				t.Fatalf("probePath: %v", err)
			}
			stage++
		case stage == 1 && len(validated) > 0:
			if !validated[0] {
				t.Fatal("new path did not validate")
			}
			if err := cl.switchPath(p.sim.Now(), target); err != nil {
				t.Fatalf("switchPath: %v", err)
			}
			stage++
		case stage == 2:
			worst = max(worst, cl.maxDatagramSize)
		}
		return stage == 2 && p.sim.Elapsed() > 2*time.Second
	})
	if stage != 2 {
		t.Fatalf("stopped at stage %d", stage)
	}
	if worst > 1300 {
		t.Errorf("on the new path (MTU 1300) the maximum datagram size went to %d", worst)
	}
	t.Logf("now %d; black holes %d", cl.maxDatagramSize, cl.pmtud.blackHoles)
}
