package quic_test

import (
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/qlog"
	"github.com/quicstack/quic/wire"
)

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration { return cli.CPUTime() }

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

// BenchmarkDirectTransferQlog measures the CPU cost of qlog tracing on a
// bulk transfer between two connections' state machines, driven directly
// on one goroutine (no sockets, no scheduler), so that the ratio between
// tracing off and on is steady even on a busy machine. The qlog goes to a
// writer that discards it.
func BenchmarkDirectTransferQlog(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "qlog=off"
		if traced {
			name = "qlog=on"
		}
		b.Run(name, func(b *testing.B) {
			d := quic.NewDirectTransfer(b)
			if traced {
				id := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
				d.SetTracers(qlog.NewTracer(discard{}, true, id), qlog.NewTracer(discard{}, false, id))
			}
			for range 2000 {
				d.Step()
			}
			start := d.Step()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			var n int
			for range b.N {
				n = d.Step()
			}
			// CPU time is steadier than wall time on a busy machine.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			b.SetBytes(int64(n-start) / int64(b.N))
		})
	}
}
