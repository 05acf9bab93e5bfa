package quic

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkBulkTransferUDP1452 measures one stream over loopback UDP with
// packets of an Ethernet path (Config.MaxPacketSize 1452) and reports the
// receiver's packets (nearly all ACK-only) per GB sent: the count the
// acknowledgment policy sets (once per drained read, ACK frequency).
func BenchmarkBulkTransferUDP1452(b *testing.B) {
	p := newBulkPair(b, &Config{MaxPacketSize: 1452})
	defer p.close()
	chunk := make([]byte, 64<<10)
	const n = 64 << 20
	p.transfer(b, 16<<20, chunk) // windows grown
	acks0 := p.srv.Stats().PacketsSent
	b.SetBytes(n)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		p.transfer(b, n, chunk)
	}
	b.StopTimer()
	// Both endpoints run in this process: CPU time of the whole process.
	b.ReportMetric((cpuTime()-cpu0).Seconds()/(float64(n)*float64(b.N)/1e9), "cpu-s/GB")
	acks := p.srv.Stats().PacketsSent - acks0
	b.ReportMetric(float64(acks)/(float64(n)*float64(b.N)/1e9), "acks/GB")
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
