package netsim

import (
	"math"
	"testing"
	"time"
)

var (
	lkSrc = Addr{Host: 1, Port: 1000}
	lkDst = Addr{Host: 2, Port: 443}
)

// lkOneWay is a sender on host 1 and a sink on host 2; the link under
// test carries 1 -> 2, the way back is ideal.
type lkOneWay struct {
	sim  *Sim
	net  *Network
	link *Link
	sink *tsSink
}

func newOneWay(seed uint64, cfg LinkConfig, src Endpoint) *lkOneWay {
	sim := NewSim()
	n := NewNetwork(sim, seed)
	p := n.Connect(1, 2, cfg, LinkConfig{})
	sink := &tsSink{trackDups: true}
	n.Attach(lkSrc, src)
	n.Attach(lkDst, sink)
	return &lkOneWay{sim, n, p.AB, sink}
}

func at(d time.Duration) time.Time { return Epoch().Add(d) }

// within reports whether got is within tol (relative) of want.
func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

func TestLinkPropagationDelayExact(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  LinkConfig
		want time.Duration
	}{
		{"no bandwidth", LinkConfig{Delay: 37*time.Millisecond + 1}, 37*time.Millisecond + 1},
		// 1250 bytes at 10 Mbit/s serialize in 1 ms.
		{"10 Mbit/s", LinkConfig{Delay: 37 * time.Millisecond, Bandwidth: 10e6}, 38 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cbr := newCBR(lkDst, 1250, 1e6) // one every 10 ms: never queued
			cbr.stop = at(time.Second)
			w := newOneWay(1, tc.cfg, cbr)
			w.sink.record = true
			w.sim.RunFor(2 * time.Second)
			if len(w.sink.arrivals) != 100 {
				t.Fatalf("%d arrivals", len(w.sink.arrivals))
			}
			for _, a := range w.sink.arrivals {
				if d := a.arrived.Sub(a.sent); d != tc.want {
					t.Fatalf("datagram %d took %v, want %v", a.seq, d, tc.want)
				}
			}
		})
	}
}

func TestLinkSerializationDoesNotDrift(t *testing.T) {
	// 1000 datagrams of 25 bytes (200 bits) at 7 Mbit/s, all sent at
	// once: datagram k leaves at exactly floor((k+1) × 200 / 7e6 s),
	// although each one alone takes a fractional 28571.43 ns.
	sizes := make([]int, 1000)
	for i := range sizes {
		sizes[i] = 25
	}
	w := newOneWay(1, LinkConfig{Bandwidth: 7e6}, &tsOnce{to: lkDst, sizes: sizes})
	w.sink.record = true
	w.sim.RunFor(time.Second)
	if len(w.sink.arrivals) != 1000 {
		t.Fatalf("%d arrivals", len(w.sink.arrivals))
	}
	for k, a := range w.sink.arrivals {
		want := time.Duration(int64(k+1) * 200 * 1e9 / 7e6)
		if got := a.arrived.Sub(Epoch()); got != want || a.seq != uint64(k) {
			t.Fatalf("datagram %d (seq %d) arrived at %v, want %v", k, a.seq, got, want)
		}
	}
}

func TestLinkThroughputIsMinOfRateAndBandwidth(t *testing.T) {
	for _, tc := range []struct {
		name            string
		rate, bandwidth int64
	}{
		{"under", 5e6, 10e6},
		{"equal", 10e6, 10e6},
		{"over", 15e6, 10e6},
		{"unlimited link", 3e6, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := LinkConfig{Bandwidth: tc.bandwidth, Delay: 5 * time.Millisecond, QueuePackets: 100}
			w := newOneWay(1, cfg, newCBR(lkDst, 1500, tc.rate))
			w.sim.RunFor(12 * time.Second)
			want := float64(tc.rate)
			if tc.bandwidth > 0 {
				want = float64(min(tc.rate, tc.bandwidth))
			}
			st := w.link.StatsBetween(at(2*time.Second), at(12*time.Second))
			if got := st.Throughput(); !within(got, want, 0.002) {
				t.Errorf("throughput %.0f bit/s, want %.0f", got, want)
			}
			if tc.rate > tc.bandwidth && tc.bandwidth > 0 {
				if st.DroppedQueue == 0 {
					t.Error("overdriven link dropped nothing")
				}
			} else if w.link.Stats().Dropped() != 0 {
				t.Errorf("dropped %d", w.link.Stats().Dropped())
			}
			if tot := w.link.Stats(); tot.DeliveredPackets != w.sink.packets {
				t.Errorf("link delivered %d, sink received %d", tot.DeliveredPackets, w.sink.packets)
			}
		})
	}
}

func TestLinkQueueWhenOverdriven(t *testing.T) {
	// 120 Mbit/s into 100 Mbit/s: the queue fills to its limit, after
	// which a datagram waits for the queue ahead of it to drain,
	// (limit − 1500 bytes) / bandwidth, and 1 in 6 is dropped.
	for _, tc := range []struct {
		name    string
		cfg     LinkConfig
		maxWait time.Duration
	}{
		{"bytes", LinkConfig{QueueBytes: 150_000}, (150_000 - 1500) * 8 * time.Second / 100e6},
		{"packets", LinkConfig{QueuePackets: 50}, 49 * 1500 * 8 * time.Second / 100e6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Bandwidth, cfg.Delay = 100e6, 10*time.Millisecond
			w := newOneWay(1, cfg, newCBR(lkDst, 1500, 120e6))
			var early int
			w.net.Trace = func(ev TraceEvent) {
				if ev.Kind != TraceDropQueue {
					return
				}
				// Drops happen only at the queue limit.
				pk, by := ev.Link.Queued()
				if (cfg.QueueBytes > 0 && by+1500 <= cfg.QueueBytes) || (cfg.QueuePackets > 0 && pk < cfg.QueuePackets) {
					early++
				}
			}
			w.sim.RunFor(3 * time.Second)
			if early > 0 {
				t.Errorf("%d drops before the queue was full", early)
			}
			st := w.link.StatsBetween(at(time.Second), at(3*time.Second))
			if st.QueueDelayMax > tc.maxWait || st.QueueDelayMax < tc.maxWait-120*time.Microsecond {
				t.Errorf("max queueing delay %v, want %v", st.QueueDelayMax, tc.maxWait)
			}
			if avg := st.AvgQueueDelay(); avg < tc.maxWait-120*time.Microsecond {
				t.Errorf("average queueing delay %v, want ~%v", avg, tc.maxWait)
			}
			if f := float64(st.DroppedQueue) / float64(st.OfferedPackets); !within(f, 1.0/6, 0.01) {
				t.Errorf("dropped %.4f of offered, want 1/6", f)
			}
			if tc.cfg.QueueBytes > 0 && st.MaxQueueBytes > tc.cfg.QueueBytes {
				t.Errorf("queue reached %d bytes", st.MaxQueueBytes)
			}
			// The sink sees the same delay: propagation +
			// serialization + queueing.
			if maxD := 10*time.Millisecond + 120*time.Microsecond + tc.maxWait; w.sink.delayMax != maxD {
				t.Errorf("sink's max one-way delay %v, want %v", w.sink.delayMax, maxD)
			}
		})
	}
}

func TestLinkLossRate(t *testing.T) {
	// 100,000 datagrams with 5% loss: the standard deviation of the
	// loss fraction is sqrt(0.05 × 0.95 / 1e5) = 0.00069; allow 5 σ.
	const n, p = 100_000, 0.05
	var first int64
	for _, seed := range []uint64{1, 2, 1} {
		cbr := newCBR(lkDst, 100, 80e6) // one every 10 µs
		cbr.stop = at(n * 10 * time.Microsecond)
		w := newOneWay(seed, LinkConfig{LossProb: p, Delay: time.Millisecond}, cbr)
		w.sim.RunFor(2 * time.Second)
		st := w.link.Stats()
		if st.OfferedPackets != n || st.DroppedLoss+st.DeliveredPackets != n || w.sink.packets != st.DeliveredPackets {
			t.Fatalf("offered %d, lost %d, delivered %d, received %d", st.OfferedPackets, st.DroppedLoss, st.DeliveredPackets, w.sink.packets)
		}
		if f := float64(st.DroppedLoss) / n; math.Abs(f-p) > 5*0.00069 {
			t.Errorf("seed %d: loss %.4f, want %.2f", seed, f, p)
		}
		switch seed {
		case 1:
			if first != 0 && st.DroppedLoss != first {
				t.Errorf("seed 1 lost %d then %d", first, st.DroppedLoss)
			}
			first = st.DroppedLoss
		case 2:
			if st.DroppedLoss == first {
				t.Errorf("seeds 1 and 2 both lost %d", first)
			}
		}
	}
}

func TestLinkReordering(t *testing.T) {
	// One datagram per ms; 5% are held back 3.5 ms and are overtaken by
	// the next three.
	cbr := newCBR(lkDst, 1000, 8e6)
	cbr.stop = at(10 * time.Second)
	cfg := LinkConfig{Delay: 10 * time.Millisecond, ReorderProb: 0.05, ReorderDelay: 3500 * time.Microsecond}
	w := newOneWay(1, cfg, cbr)
	w.sink.record = true
	w.sim.RunFor(11 * time.Second)
	st := w.link.Stats()
	if !within(float64(st.Reordered), 500, 0.2) {
		t.Errorf("reordered %d of 10000, want ~500", st.Reordered)
	}
	if w.sink.reordered != st.Reordered {
		t.Errorf("sink saw %d out of order, link reordered %d", w.sink.reordered, st.Reordered)
	}
	for _, a := range w.sink.arrivals {
		if d := a.arrived.Sub(a.sent); d != 10*time.Millisecond && d != 13500*time.Microsecond {
			t.Fatalf("datagram %d took %v", a.seq, d)
		}
	}
	if st.DeliveredPackets != 10000 {
		t.Errorf("delivered %d", st.DeliveredPackets)
	}
}

func TestLinkDuplication(t *testing.T) {
	cbr := newCBR(lkDst, 1000, 8e6)
	cbr.stop = at(10 * time.Second)
	w := newOneWay(1, LinkConfig{Delay: 10 * time.Millisecond, Bandwidth: 10e6, DuplicateProb: 0.1}, cbr)
	w.sim.RunFor(11 * time.Second)
	st := w.link.Stats()
	if !within(float64(st.Duplicated), 1000, 0.1) {
		t.Errorf("duplicated %d of 10000, want ~1000", st.Duplicated)
	}
	if w.sink.dups != st.Duplicated || st.DeliveredPackets != st.OfferedPackets+st.Duplicated {
		t.Errorf("sink saw %d duplicates; link offered %d, duplicated %d, delivered %d",
			w.sink.dups, st.OfferedPackets, st.Duplicated, st.DeliveredPackets)
	}
	if w.sink.reordered != 0 {
		t.Errorf("%d duplicates arrived out of order", w.sink.reordered)
	}
}

func TestLinkECNRandomMarking(t *testing.T) {
	// RFC 3168, Section 5: "Routers treat the ECT(0) and ECT(1)
	// codepoints as equivalent." Not-ECT datagrams are never marked, and
	// Section 12: "The CE codepoint in a packet header MUST NOT be reset
	// by a router."
	const n = 10000
	for _, tc := range []struct {
		ecn        ECN
		markedFrac float64 // of the datagrams sent
	}{{ECT0, 0.2}, {ECT1, 0.2}, {NotECT, 0}, {CE, 0}} {
		cbr := newCBR(lkDst, 1000, 8e6)
		cbr.stop, cbr.ecn = at(n*time.Millisecond), tc.ecn
		w := newOneWay(1, LinkConfig{Delay: time.Millisecond, CEProb: 0.2}, cbr)
		w.sim.RunFor(n*time.Millisecond + time.Second)
		marked := w.link.Stats().MarkedCE
		if w.sink.packets != n {
			t.Fatalf("%v: received %d", tc.ecn, w.sink.packets)
		}
		if f := float64(marked) / n; math.Abs(f-tc.markedFrac) > 0.02 {
			t.Errorf("%v: marked %.4f, want %.2f", tc.ecn, f, tc.markedFrac)
		}
		if tc.ecn != CE && (w.sink.ecn[CE] != marked || w.sink.ecn[tc.ecn] != n-marked) {
			t.Errorf("%v: sink saw %v", tc.ecn, w.sink.ecn)
		}
		if tc.ecn == CE && w.sink.ecn[CE] != n {
			t.Errorf("CE: sink saw %v", w.sink.ecn)
		}
	}
}

func TestLinkECNThresholdMarking(t *testing.T) {
	// 120 Mbit/s into 100 Mbit/s with a 150 kB queue that marks above
	// 30 kB: ECT datagrams are marked once 30 kB wait ahead of them
	// (2.4 ms of queueing at 100 Mbit/s), never before.
	for _, ecn := range []ECN{ECT0, NotECT} {
		cfg := LinkConfig{Bandwidth: 100e6, Delay: 10 * time.Millisecond, QueueBytes: 150_000, CEThresholdBytes: 30_000}
		cbr := newCBR(lkDst, 1500, 120e6)
		cbr.ecn = ecn
		w := newOneWay(1, cfg, cbr)
		w.sink.record = true
		w.sim.RunFor(time.Second)
		st := w.link.Stats()
		if ecn == NotECT {
			if st.MarkedCE != 0 || st.DroppedQueue == 0 {
				t.Errorf("Not-ECT: %d marked, %d dropped", st.MarkedCE, st.DroppedQueue)
			}
			continue
		}
		if st.MarkedCE == 0 {
			t.Fatal("nothing marked")
		}
		for _, a := range w.sink.arrivals {
			// The queue ahead is at least the bytes still to
			// serialize: 28.5 kB + a part of a datagram.
			q := a.arrived.Sub(a.sent) - 10*time.Millisecond - 120*time.Microsecond
			if a.ecn == CE && q < 2280*time.Microsecond {
				t.Fatalf("datagram %d marked after %v of queueing", a.seq, q)
			}
			if a.ecn != CE && q >= 2400*time.Microsecond {
				t.Fatalf("datagram %d not marked after %v of queueing", a.seq, q)
			}
		}
	}
}

func TestLinkMTU(t *testing.T) {
	o := &tsOnce{to: lkDst, sizes: []int{1200, 1201, 1199, 9000}}
	w := newOneWay(1, LinkConfig{MTU: 1200}, o)
	var dropped []int
	w.net.Trace = func(ev TraceEvent) {
		if ev.Kind == TraceDropMTU {
			dropped = append(dropped, len(ev.Datagram.Payload))
		}
	}
	w.sink.record = true
	w.sim.RunFor(time.Second)
	if st := w.link.Stats(); st.DroppedMTU != 2 || st.DeliveredPackets != 2 {
		t.Fatalf("dropped %d, delivered %d", st.DroppedMTU, st.DeliveredPackets)
	}
	if len(dropped) != 2 || dropped[0] != 1201 || dropped[1] != 9000 {
		t.Errorf("dropped sizes %v", dropped)
	}
	if a := w.sink.arrivals; a[0].seq != 0 || a[1].seq != 2 {
		t.Errorf("delivered %d and %d", a[0].seq, a[1].seq)
	}
}

func TestLinkCorruption(t *testing.T) {
	cbr := newCBR(lkDst, 200, 1.6e6) // one per ms
	cbr.stop = at(20 * time.Second)
	w := newOneWay(1, LinkConfig{Delay: time.Millisecond, CorruptProb: 0.1}, cbr)
	w.sim.RunFor(21 * time.Second)
	st := w.link.Stats()
	if w.sink.corrupted != st.Corrupted || w.sink.packets != 20000 {
		t.Fatalf("sink found %d corrupted of %d, link corrupted %d", w.sink.corrupted, w.sink.packets, st.Corrupted)
	}
	if !within(float64(st.Corrupted), 2000, 0.1) {
		t.Errorf("corrupted %d of 20000, want ~2000", st.Corrupted)
	}
}

func TestLinkOverhead(t *testing.T) {
	// 1222 bytes of payload + 28 of headers = 1250 bytes = 1 ms at
	// 10 Mbit/s; byte statistics count the headers.
	w := newOneWay(1, LinkConfig{Bandwidth: 10e6, Overhead: 28}, &tsOnce{to: lkDst, sizes: []int{1222, 1222}})
	w.sink.record = true
	w.sim.RunFor(time.Second)
	if a := w.sink.arrivals; len(a) != 2 || a[0].arrived != at(time.Millisecond) || a[1].arrived != at(2*time.Millisecond) {
		t.Fatalf("arrivals %+v", a)
	}
	if st := w.link.Stats(); st.DeliveredBytes != 2500 || st.OfferedBytes != 2500 {
		t.Errorf("offered %d delivered %d bytes", st.OfferedBytes, st.DeliveredBytes)
	}
}

func TestLinkStatsWindows(t *testing.T) {
	// 8 Mbit/s over 10 Mbit/s: utilization 0.8 over seconds 5 to 30.
	w := newOneWay(1, LinkConfig{Bandwidth: 10e6, Delay: 20 * time.Millisecond}, newCBR(lkDst, 1500, 8e6))
	w.sim.RunFor(30 * time.Second)
	if u := w.link.Utilization(at(5*time.Second), at(30*time.Second)); !within(u, 0.8, 1e-3) {
		t.Errorf("utilization %.5f, want 0.8", u)
	}
	win := w.link.StatsBetween(at(5*time.Second), at(30*time.Second))
	if win.Duration != 25*time.Second || !within(win.Throughput(), 8e6, 1e-3) {
		t.Errorf("window %v, throughput %.0f", win.Duration, win.Throughput())
	}
	// Rounding down to the interval: [5.05 s, 30.09 s) is [5 s, 30 s).
	if w2 := w.link.StatsBetween(at(5050*time.Millisecond), at(30090*time.Millisecond)); w2 != win {
		t.Errorf("rounded window %+v, want %+v", w2, win)
	}
	all, tot := w.link.StatsBetween(Epoch(), at(time.Hour)), w.link.Stats()
	if all.DeliveredBytes != tot.DeliveredBytes || all.OfferedPackets != tot.OfferedPackets || all.QueueDelayCount != tot.QueueDelayCount {
		t.Errorf("windows sum to %+v, totals %+v", all, tot)
	}
	if tot.Duration != 30*time.Second {
		t.Errorf("total duration %v", tot.Duration)
	}
	if e := w.link.StatsBetween(at(time.Second), at(time.Second)); e.Duration != 0 || e.Throughput() != 0 {
		t.Errorf("empty window %+v", e)
	}
	ws := w.link.Windows(at(5*time.Second), at(30*time.Second))
	if len(ws) != 250 {
		t.Fatalf("%d windows", len(ws))
	}
	var sum LinkStats
	for i := range ws {
		if ws[i].Duration != DefaultStatsInterval || !within(ws[i].Throughput(), 8e6, 0.02) {
			t.Fatalf("window %d: %v, %.0f bit/s", i, ws[i].Duration, ws[i].Throughput())
		}
		sum.add(&ws[i])
	}
	sum.Duration = win.Duration
	if sum != win {
		t.Errorf("windows sum to %+v, want %+v", sum, win)
	}
	if ws := w.link.Windows(at(time.Hour), at(time.Hour+time.Second)); len(ws) != 10 || ws[0].DeliveredPackets != 0 {
		t.Errorf("windows past the end: %d", len(ws))
	}
}

func TestLinkSetConfig(t *testing.T) {
	cfg := LinkConfig{Bandwidth: 10e6, Delay: 10 * time.Millisecond, QueuePackets: 100}
	w := newOneWay(1, cfg, newCBR(lkDst, 1500, 8e6))
	w.sim.At(at(5*time.Second), func() {
		c := w.link.Config()
		c.Bandwidth = 5e6
		w.link.SetConfig(c)
	})
	w.sim.RunFor(10 * time.Second)
	if th := w.link.StatsBetween(at(time.Second), at(5*time.Second)).Throughput(); !within(th, 8e6, 1e-3) {
		t.Errorf("before: %.0f bit/s", th)
	}
	if th := w.link.StatsBetween(at(6*time.Second), at(10*time.Second)).Throughput(); !within(th, 5e6, 1e-3) {
		t.Errorf("after: %.0f bit/s", th)
	}
}
