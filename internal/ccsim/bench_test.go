package ccsim

import (
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
)

// BenchmarkScenario60s simulates one minute of a single bulk flow on the
// 100 Mbit/s, 40 ms, 1-BDP link: about 500,000 data packets and 250,000
// ACK frames through the real loss recovery, controller and pacer. One op
// is the whole minute, setup included.
func BenchmarkScenario60s(b *testing.B) {
	for _, c := range []struct {
		name string
		f    congestion.ControllerFactory
	}{{"cubic", congestion.NewCubic}, {"bbr", congestion.NewBBR}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var r Result
			for b.Loop() {
				r = Run(Scenario{
					Bandwidth: 100e6, RTT: 40 * time.Millisecond, BufferBDP: 1,
					Duration: 60 * time.Second, Seed: 1,
					Flows: []Flow{{Controller: c.f}},
				})
			}
			if r.Utilization < 0.9 {
				b.Fatalf("utilisation %.3f", r.Utilization)
			}
			b.ReportMetric(float64(r.Flows[0].Sender.SentPackets), "packets/op")
			b.ReportMetric(float64(r.Events), "events/op")
		})
	}
}
