package fleettest

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMeasureReusePort measures, with FLEET_BENCH=1 (make fleet-bench),
// handshakes per second and bulk throughput of an example/fleet server
// process with one socket and with a ReusePortGroup of two sockets per
// generation (one per core here), the clients running in the test
// process on the same machine.
func TestMeasureReusePort(t *testing.T) {
	if os.Getenv("FLEET_BENCH") == "" {
		t.Skip("set FLEET_BENCH=1 (make fleet-bench) to measure")
	}
	bin, files := buildFleet(t), writeFleetFiles(t)
	const d = 8 * time.Second
	type result struct {
		name       string
		handshakes float64
		mbps       float64
	}
	var results []result
	for _, c := range []struct {
		name    string
		sockets string
	}{{"one socket", "0"}, {"reuseport group, 2 sockets", "2"}} {
		s := startServer(t, "", bin, "-listen", "127.0.0.1:0", "-sockets", c.sockets,
			"-cert", files.cert, "-key", files.key, "-secret", files.secret, "-server-id", "01")
		var addr string
		s.mu.Lock()
		fmt.Sscanf(s.log[len(s.log)-1], "fleet: listening %s", &addr)
		s.mu.Unlock()
		ua, _ := net.ResolveUDPAddr("udp", addr)
		r := result{name: c.name}
		r.handshakes = measure(t, d, 16, func(ctx context.Context) (int64, error) {
			conn, done, err := clientConn(ctx, "", ua, files.ctls)
			if err != nil {
				return 0, err
			}
			done()
			_ = conn
			return 1, nil
		})
		bytes := measure(t, d, 8, func(ctx context.Context) (int64, error) {
			conn, done, err := clientConn(ctx, "", ua, files.ctls)
			if err != nil {
				return 0, err
			}
			defer done()
			const n = 16 << 20
			if err := download(ctx, conn, n, nil); err != nil {
				return 0, err
			}
			return n, nil
		})
		r.mbps = bytes * 8 / 1e6
		results = append(results, r)
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
	t.Logf("fleet: %d CPUs, %v per measure, clients in the same machine", runtimeCPUs(), d)
	t.Logf("fleet: | server | handshakes/s (16 clients) | throughput, 8 connections |")
	t.Logf("fleet: |---|---|---|")
	for _, r := range results {
		t.Logf("fleet: | %s | %.0f | %.0f Mbit/s |", r.name, r.handshakes, r.mbps)
	}
}

// measure runs f from workers goroutines for d and returns the sum of
// what it returned per second.
func measure(t *testing.T, d time.Duration, workers int, f func(context.Context) (int64, error)) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancel()
	var total, errs atomic.Int64
	start := time.Now()
	stop := start.Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				n, err := f(ctx)
				if err != nil {
					errs.Add(1)
					continue
				}
				total.Add(n)
			}
		})
	}
	wg.Wait()
	if errs.Load() > 0 {
		t.Errorf("%d errors", errs.Load())
	}
	return float64(total.Load()) / time.Since(start).Seconds()
}
