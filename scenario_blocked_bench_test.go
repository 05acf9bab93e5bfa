package quic

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// BenchmarkSimBulkBlockedStreams is BenchmarkSimBulk beside streams that
// wait for stream credit the receiver never gives (it does not read
// them): the cost of a packet must not grow with their number.
//
//	go test -run X -bench BenchmarkSimBulkBlockedStreams -benchtime 20x
func BenchmarkSimBulkBlockedStreams(b *testing.B) {
	for _, blocked := range []int{0, 1000} {
		b.Run(fmt.Sprintf("blocked=%d", blocked), func(b *testing.B) {
			link := netsim.LinkConfig{Bandwidth: 10_000_000_000, Delay: 50 * time.Microsecond, QueuePackets: 10000}
			cfg := blockedStreamsConfig(blocked)
			cfg.MaxStreamReceiveWindow = 16 << 20
			p := newSimPair(b, link, cfg, 303)
			p.connect(b)
			openBlockedStreams(b, p, blocked)
			s, _, err := p.client.c.streams.openStream(true)
			if err != nil || s == nil {
				b.Fatalf("openStream: %v %v", s, err)
			}
			chunk := make([]byte, 64<<10)
			buf := make([]byte, 64<<10)
			var srv *stream
			var got int64
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
			const n = 16 << 20
			transfer(16 << 20) // warm-up: the stream window grows from 1 KiB
			b.SetBytes(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				got = 0
				transfer(n)
			}
		})
	}
}
