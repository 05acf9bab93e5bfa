package netsim

import (
	"testing"
	"time"
)

// TestSteadyStateAllocs checks that scheduling and delivering datagrams,
// with every impairment active, endpoint timers and pacing, allocates
// nothing once buffers have grown.
func TestSteadyStateAllocs(t *testing.T) {
	sim := NewSim()
	n := NewNetwork(sim, 1)
	cfg := LinkConfig{
		Bandwidth: 100e6, Delay: 10 * time.Millisecond, QueuePackets: 100, MTU: 1500,
		LossProb: 0.01, ReorderProb: 0.01, ReorderDelay: time.Millisecond,
		DuplicateProb: 0.01, CEProb: 0.01, CEThresholdBytes: 50_000, CorruptProb: 0.01,
		StatsInterval: time.Hour, // no new windows during the measurement
	}
	n.Connect(1, 2, cfg, cfg)
	n.Attach(Addr{1, 1}, newToySender(Addr{2, 1}, 250, 1500, 100*time.Millisecond))
	n.Attach(Addr{2, 1}, &toyReceiver{})
	cbr := newCBR(Addr{2, 2}, 1500, 20e6) // overdrives the link with the toy
	cbr.ecn = ECT0
	n.Attach(Addr{1, 2}, cbr)
	n.Attach(Addr{2, 2}, &tsSink{})
	n.Attach(Addr{1, 3}, &tsPinger{to: Addr{2, 3}, size: 100, count: 1 << 30, gap: time.Millisecond})
	n.Attach(Addr{2, 3}, &tsEcho{})
	sim.RunFor(3 * time.Second)
	before := n.Stats().Sent
	allocs := testing.AllocsPerRun(100, func() { sim.RunFor(10 * time.Millisecond) })
	if sent := n.Stats().Sent - before; sent < 10_000 {
		t.Fatalf("only %d datagrams sent during the measurement", sent)
	}
	if allocs != 0 {
		t.Errorf("%v allocations per 10 ms of simulation", allocs)
	}
}

// TestTimerAllocs checks that moving timers and scheduling non-capturing
// functions allocates nothing.
func TestTimerAllocs(t *testing.T) {
	s := NewSim()
	fired := 0
	tm := s.NewTimer(func() { fired++ })
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		tm.Reset(s.Now().Add(time.Duration(i%7) * time.Millisecond))
		tm.Reset(s.Now().Add(time.Duration(i%5) * time.Millisecond))
		s.After(time.Millisecond, allocNoop)
		s.RunFor(2 * time.Millisecond)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
	if fired == 0 {
		t.Error("timer never fired")
	}
}

func allocNoop() {}
