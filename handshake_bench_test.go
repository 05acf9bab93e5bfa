package quic

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHandshakeUDP measures full handshakes over loopback UDP through
// the public API (Transport.Listen and Transport.Dial; both sides in this
// process): "serial" is one handshake at a time (its ns/op is the latency
// of a dial), "parallel32" keeps 32 dials in flight on one client
// Transport (what the interop module's BenchmarkHandshakes and make perf
// compare with quic-go). Allocations per op (-benchmem) count both sides.
// Profile with -cpuprofile; for issue 28 (handshakes and accept).
func BenchmarkHandshakeUDP(b *testing.B) {
	for _, par := range []int{1, 32} {
		name := "serial"
		if par > 1 {
			name = "parallel32"
		}
		b.Run(name, func(b *testing.B) { benchHandshakeUDP(b, par) })
	}
}

func benchHandshakeUDP(b *testing.B, par int) {
	ctls, stls := testTLS(b)
	sudp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer sudp.Close()
	str := &Transport{Conn: sudp}
	defer str.Close()
	l, err := str.Listen(stls, nil)
	if err != nil {
		b.Fatal(err)
	}
	cudp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer cudp.Close()
	ctr := &Transport{Conn: cudp}
	defer ctr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			// The server side ends when the client's CONNECTION_CLOSE arrives.
			if _, err := l.Accept(ctx); err != nil {
				return
			}
		}
	}()
	var next atomic.Int64
	var failed atomic.Int64
	var firstErr atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
				c, err := ctr.Dial(dctx, sudp.LocalAddr(), ctls, nil)
				dcancel()
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				c.CloseWithError(0, "")
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d handshakes failed, first: %v", n, b.N, firstErr.Load())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
}
