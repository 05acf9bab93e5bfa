package ccsim

import (
	"testing"
	"time"
)

// With step ECN marking at a fifth of a BDP of queue, the receivers echo
// the CE marks (RFC 9000, Section 13.4.1), the senders validate ECN and
// every controller treats the marks as congestion (RFC 9002, Section
// 7.1: "an increase in ECN-CE counters"): the queue stays short and
// nothing is dropped for lack of buffer.
func TestECNMarkingIsCongestion(t *testing.T) {
	t.Parallel()
	for _, c := range controllers {
		r := runChecked(t, Scenario{
			Name: "ecn", Bandwidth: 20_000_000, RTT: 40 * time.Millisecond, BufferBDP: 2, CEThresholdBDP: 0.2,
			Duration: 10 * time.Second, MeasureFrom: 3 * time.Second, Seed: 1,
			Flows: []Flow{{Controller: c.f}},
		})
		logResult(t, r)
		f := r.Flows[0]
		if f.Sender.ECNEvents == 0 || f.Receiver.CE == 0 || r.Link.MarkedCE == 0 {
			t.Fatalf("%s: %d ECN congestion events, %d CE packets received, %d marked", c.name, f.Sender.ECNEvents, f.Receiver.CE, r.Link.MarkedCE)
		}
		if r.Link.DroppedQueue != 0 {
			t.Errorf("%s: %d drops with ECN marking at 0.2 BDP", c.name, r.Link.DroppedQueue)
		}
		if r.Utilization < 0.8 {
			t.Errorf("%s: utilisation %.3f with ECN", c.name, r.Utilization)
		}
	}
}

// With host jitter the flows still run, deterministically, and the
// RTT grows by at most the jitter.
func TestJitter(t *testing.T) {
	t.Parallel()
	sc := Scenario{
		Name: "jitter", Bandwidth: 20_000_000, RTT: 40 * time.Millisecond, Jitter: 300 * time.Microsecond,
		Duration: 6 * time.Second, Seed: 5,
		Flows: []Flow{{Controller: controllers[1].f}, {Controller: controllers[2].f, Start: time.Second}},
	}
	a, b := runChecked(t, sc), runChecked(t, sc)
	if a.Utilization != b.Utilization || a.Flows[1].Sender != b.Flows[1].Sender {
		t.Fatal("two runs with jitter differ")
	}
	if a.Utilization < 0.8 || a.MinRTT < sc.RTT || a.MinRTT > sc.RTT+2*time.Millisecond {
		t.Fatalf("utilisation %.3f, min RTT %v", a.Utilization, a.MinRTT)
	}
	sc.Jitter = 0
	if c := Run(sc); c.Flows[0].Sender == a.Flows[0].Sender {
		t.Fatal("jitter changed nothing")
	}
}

// A BandwidthChange takes effect at its time: the link delivers at the
// old rate before it and at the new rate after it.
func TestBandwidthChanges(t *testing.T) {
	t.Parallel()
	sc := Scenario{
		Name: "bandwidth-change", Bandwidth: 20_000_000, RTT: 20 * time.Millisecond,
		BandwidthChanges: []BandwidthChange{{At: 3 * time.Second, Bandwidth: 5_000_000}, {At: 6 * time.Second, Bandwidth: 10_000_000}},
		Duration:         8 * time.Second, Seed: 3,
		Flows: []Flow{{Controller: controllers[1].f}},
	}
	r := runChecked(t, sc)
	for _, w := range []struct {
		from, to time.Duration
		rate     float64
	}{{2 * time.Second, 3 * time.Second, 20e6}, {4 * time.Second, 6 * time.Second, 5e6}, {7 * time.Second, 8 * time.Second, 10e6}} {
		g := r.Goodput(0, w.from, w.to)
		t.Logf("goodput over %v-%v: %.2f Mbit/s", w.from, w.to, g/1e6)
		// Goodput counts stream bytes, about 96% of the wire bytes.
		if g < 0.85*w.rate || g > w.rate {
			t.Errorf("goodput over %v-%v %.2f Mbit/s, want about %.0f Mbit/s", w.from, w.to, g/1e6, w.rate/1e6)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a BandwidthChange without a Bandwidth")
		}
	}()
	sc.BandwidthChanges = []BandwidthChange{{At: time.Second}}
	Run(sc)
}
