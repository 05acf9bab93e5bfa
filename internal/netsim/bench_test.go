package netsim

import (
	"testing"
	"time"
)

// BenchmarkSimulate60sAt100Mbps simulates one minute of a 100 Mbit/s path
// (2 × 10 ms, 100-datagram queue) kept full by the toy window sender: about
// 500,000 datagrams of 1500 bytes and as many acknowledgements. One op is
// the whole minute, setup included.
func BenchmarkSimulate60sAt100Mbps(b *testing.B) {
	b.ReportAllocs()
	var delivered int64
	for b.Loop() {
		cfg := LinkConfig{Bandwidth: 100e6, Delay: 10 * time.Millisecond, QueuePackets: 100}
		ts := newToyScenario(1, cfg, 200)
		ts.sim.RunFor(60 * time.Second)
		delivered = ts.path.AB.Stats().DeliveredPackets
		if u := ts.path.AB.Utilization(Epoch().Add(time.Second), Epoch().Add(60*time.Second)); u < 0.99 {
			b.Fatalf("utilization %.3f", u)
		}
	}
	b.ReportMetric(float64(delivered), "datagrams/op")
}

// BenchmarkDatagram measures one datagram's trip in steady state: sent by
// a constant-rate sender, queued, serialized, delivered to a sink.
func BenchmarkDatagram(b *testing.B) {
	sim := NewSim()
	n := NewNetwork(sim, 1)
	cfg := LinkConfig{Bandwidth: 100e6, Delay: 10 * time.Millisecond, QueuePackets: 100, StatsInterval: time.Hour}
	n.Connect(1, 2, cfg, cfg)
	n.Attach(Addr{1, 1}, newCBR(Addr{2, 1}, 1500, 90e6))
	sink := &tsCounter{}
	n.Attach(Addr{2, 1}, sink)
	sim.RunFor(time.Second)
	b.ReportAllocs()
	b.ResetTimer()
	before := sink.packets
	// 90 Mbit/s of 1500-byte datagrams is one every 133.3 µs.
	sim.RunFor(time.Duration(b.N) * 133333 * time.Nanosecond)
	if got := sink.packets - before; got < int64(b.N)-1 {
		b.Fatalf("%d datagrams delivered for b.N = %d", got, b.N)
	}
}
