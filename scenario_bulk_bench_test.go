package quic

import (
	"io"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// BenchmarkSimBulk measures the CPU cost of the protocol logic of a bulk
// transfer, both sides, without sockets or goroutines: one stream over a
// simulated 10 Gbit/s path with a 100 µs RTT. Unlike the socket
// benchmarks it is deterministic, so it shows per-packet costs that the
// noise of a loaded machine hides.
func BenchmarkSimBulk(b *testing.B) {
	link := netsim.LinkConfig{Bandwidth: 10_000_000_000, Delay: 50 * time.Microsecond, QueuePackets: 10000}
	p := newSimPair(b, link, nil, 7)
	p.run(b, 5*time.Second, func() bool { return p.client.c.handshakeComplete })
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		b.Fatalf("openStream: %v %v", s, err)
	}
	chunk := make([]byte, 64<<10)
	buf := make([]byte, 64<<10)
	var srv *stream
	var got int64
	const n = 16 << 20
	transfer := func(total int64) {
		var written int64
		p.run(b, time.Minute, func() bool {
			for written < total {
				k := simWrite(s, chunk[:min(int64(len(chunk)), total-written)])
				if k == 0 {
					break
				}
				written += int64(k)
			}
			p.cnode.Wake()
			if srv == nil && p.server.c != nil {
				srv, _, _ = p.server.c.streams.acceptStream(true)
			}
			for srv != nil {
				k, err := simRead(srv, buf)
				got += int64(k)
				if err != nil && err != io.EOF {
					b.Fatal(err)
				}
				if k == 0 {
					break
				}
			}
			p.snode.Wake()
			return got >= total
		})
	}
	transfer(4 << 20) // warm-up: windows grow, path MTU discovery
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got = 0
		transfer(n)
	}
	b.ReportMetric(float64(p.client.c.maxDatagramSize), "datagram-bytes")
}
