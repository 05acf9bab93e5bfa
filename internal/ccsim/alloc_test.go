package ccsim

import (
	"testing"
	"time"
)

// In steady state the sender and the receiver, with the loss recovery,
// controllers and pacer under them, do not allocate per packet: 100
// simulated milliseconds at 10 Mbit/s (about 90 data packets and 45 ACK
// frames) allocate at most once on average, for the amortized growth of
// the windows of statistics.
func TestSteadyStateAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, c := range controllers {
		p := newPathSetup(c.f, 0)
		lossy := p.fwd
		lossy.LossProb = 0.01
		p.path.AB.SetConfig(lossy)
		p.sim.RunFor(10 * time.Second)
		allocs := testing.AllocsPerRun(50, func() { p.sim.RunFor(100 * time.Millisecond) })
		t.Logf("%s: %.2f allocations per 100 ms (%d packets sent so far)", c.name, allocs, p.s.Stats().SentPackets)
		if allocs > 1 {
			t.Errorf("%s: %.1f allocations per 100 ms of simulation", c.name, allocs)
		}
		if p.s.Err() != nil {
			t.Fatal(p.s.Err())
		}
	}
}
