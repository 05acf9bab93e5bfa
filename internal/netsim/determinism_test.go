package netsim

import (
	"encoding/binary"
	"hash/fnv"
	"testing"
	"time"
)

// detScenario runs a busy, impaired scenario for 4 simulated seconds and
// returns a hash of every trace event (time, kind, link, datagram ID,
// addresses, ECN, payload) and the number of events.
func detScenario(seed uint64) (uint64, int) {
	sim := NewSim()
	n := NewNetwork(sim, seed)
	h := fnv.New64a()
	events := 0
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	n.Trace = func(ev TraceEvent) {
		events++
		d := ev.Datagram
		put(uint64(ev.Time.Sub(Epoch())))
		put(uint64(ev.Kind))
		if ev.Link != nil {
			put(uint64(ev.Link.index))
		}
		put(d.ID)
		put(uint64(d.Src.Host)<<16 | uint64(d.Src.Port))
		put(uint64(d.Dst.Host)<<16 | uint64(d.Dst.Port))
		put(uint64(d.ECN))
		h.Write(d.Payload)
	}
	impaired := LinkConfig{
		Bandwidth: 50e6, Delay: 15 * time.Millisecond, QueueBytes: 100_000,
		LossProb: 0.01, ReorderProb: 0.02, ReorderDelay: 2 * time.Millisecond,
		DuplicateProb: 0.01, CEProb: 0.01, CEThresholdBytes: 60_000, CorruptProb: 0.005,
	}
	n.Connect(1, 2, impaired, impaired)
	n.Connect(3, 2, LinkConfig{Bandwidth: 20e6, Delay: 5 * time.Millisecond, LossProb: 0.02}, LinkConfig{Delay: 5 * time.Millisecond})

	n.Attach(Addr{1, 1000}, newToySender(Addr{2, 443}, 150, 1200, 200*time.Millisecond))
	n.Attach(Addr{2, 443}, &toyReceiver{})
	cbr := newCBR(Addr{2, 9}, 1000, 10e6)
	cbr.ecn = ECT1
	n.Attach(Addr{3, 1}, cbr)
	n.Attach(Addr{2, 9}, &tsEcho{max: 30})
	n.Attach(Addr{1, 7}, &tsPinger{to: Addr{2, 7}, size: 200, count: 1000, gap: 7 * time.Millisecond})
	n.Attach(Addr{2, 7}, &tsEcho{})
	n.SetNAT(Addr{1, 7}, Addr{1, 50000})
	sim.At(at(2500*time.Millisecond), func() { n.SetNAT(Addr{1, 7}, Addr{1, 50001}) })
	sim.RunFor(4 * time.Second)
	return h.Sum64(), events
}

func TestDeterministicReplay(t *testing.T) {
	h1, n1 := detScenario(42)
	h2, n2 := detScenario(42)
	if h1 != h2 || n1 != n2 {
		t.Fatalf("same seed: %x (%d events) vs %x (%d events)", h1, n1, h2, n2)
	}
	if n1 < 50_000 {
		t.Fatalf("only %d events", n1)
	}
	h3, n3 := detScenario(43)
	if h3 == h1 {
		t.Fatalf("seeds 42 and 43 gave the same trace (%d, %d events)", n1, n3)
	}
}
