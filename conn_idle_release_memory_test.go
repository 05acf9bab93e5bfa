package quic

import (
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicstack/quic/internal/freelist"
)

var idleHeapProfile = flag.String("idleheapprofile", "", "TestIdleServerConnMemory writes the heap profile (every allocation sampled) with the idle server connections open to this file")

// idleMemory is what idleServerConnMemory measured, per server connection.
type idleMemory struct {
	live   float64 // bytes of live heap objects (HeapAlloc after GC)
	inuse  float64 // bytes of heap spans in use (HeapInuse after GC)
	stack  float64 // bytes of goroutine stacks (StackInuse)
	parked int     // connections whose goroutine had exited
	loops  int     // goroutines running connection loops (Conn.run, runners)
}

// idleServerConnMemory establishes n connections from a client Transport
// to a server Transport over an in-memory PacketConn pair, waits until
// every server connection went quiet and parked (or until timeout), then
// cuts the client off (its datagrams vanish) and closes it, so that only
// the server's connections remain, idle. It measures the growth of the
// heap and of the goroutine stacks, after garbage collection, per server
// connection.
func idleServerConnMemory(t testing.TB, n int, timeout time.Duration) idleMemory {
	t.Helper()
	if *idleHeapProfile != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	conf := &Config{MaxIdleTimeout: time.Hour}
	p := newConnPair(t, connPairOpts{Mem: true, RealTime: true, Config: conf, NoDial: true})
	defer p.shutdown()
	clientT, l, ctls, addr := p.clientT, p.listener, p.ctls, p.serverT.Conn.LocalAddr()
	cc := clientT.Conn.(*memConn)
	live0, inuse0, stack0 := gcMemStats()

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	server := make([]*Conn, 0, n)
	accepted := make(chan error, 1)
	go func() {
		for len(server) < n {
			c, err := l.Accept(ctx)
			if err != nil {
				accepted <- err
				return
			}
			server = append(server, c)
		}
		accepted <- nil
	}()
	// Dial a few at a time, as many clients would.
	const parallel = 8
	var wg sync.WaitGroup
	errs := make(chan error, parallel)
	for w := range parallel {
		wg.Go(func() {
			for i := w; i < n; i += parallel {
				if _, err := clientT.Dial(ctx, addr, ctls, conf); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("dial: %v", err)
	default:
	}
	if err := <-accepted; err != nil {
		t.Fatalf("accept: %v", err)
	}
	// A connection parks once it was quiet for idleReleaseDelay: every
	// packet it sent was acknowledged, and its memory was released.
	parked := func() int {
		k := 0
		for _, c := range server {
			if c.parked.Load() {
				k++
			}
		}
		return k
	}
	for parked() < n && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	// The runners that ran the connections (conn_driver_runner.go) wait
	// for more work for runnerIdleTime before they exit: up to
	// maxIdleRunners goroutines whose stacks a handshake grew, which the
	// Transport keeps, not the idle connections.
	time.Sleep(2 * runnerIdleTime)
	// Take the client away without the server noticing.
	cc.blackhole.Store(true)
	clientT.Close()
	cc.Close()
	for _, c := range server {
		if c.Context().Err() != nil {
			t.Fatalf("server connection closed: %v", context.Cause(c.Context()))
		}
	}
	live1, inuse1, stack1 := gcMemStats()
	if *idleHeapProfile != "" {
		f, err := os.Create(*idleHeapProfile)
		if err != nil {
			t.Fatal(err)
		}
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	m := idleMemory{parked: parked(), loops: connLoopGoroutines()}
	runtime.KeepAlive(server)
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	m.live, m.inuse, m.stack = per(live1, live0), per(inuse1, inuse0), per(stack1, stack0)
	return m
}

// connLoopGoroutines counts the goroutines of the process that run a
// connection's loop or wait for one to run (conn_driver_runner.go).
func connLoopGoroutines() int {
	k := 0
	for _, g := range goroutineStacks() { // lifecycle_stress_test.go
		if strings.Contains(g.stack, "quic.(*Transport).runner(") || strings.Contains(g.stack, "quic.(*Conn).run(") {
			k++
		}
	}
	return k
}

// gcMemStats returns the live heap objects, the heap spans in use and
// the goroutine stacks in use after garbage collection, without the
// buffers the free lists keep for reuse (liveHeap).
func gcMemStats() (live, inuse, stack uint64) {
	freelist.TrimNow()
	freelist.TrimNow()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.HeapInuse, ms.StackInuse
}

// An idle established server connection keeps little: no goroutine (it
// parked), no expanded keys or buffers, about 9 KB of live heap objects
// (docs/performance.md, "Idle connections"; the target is 15 KB
// of heap and stacks per connection, 150 MB of RSS for 10,000).
//
// The bound is on live heap objects (HeapAlloc) rather than on the heap
// spans in use (HeapInuse): with a few hundred connections whose client
// runs in the same process, the spans in use mostly measure the garbage
// the handshakes of both sides left interleaved with what stays, which
// BenchmarkIdleConnMemory in internal/interop measures apart, with 10,000
// connections and the client in another process. The stacks of exited
// goroutines that the runtime keeps for reuse show in StackInuse as a
// few hundred bytes per connection here.
func TestIdleServerConnMemory(t *testing.T) {
	const (
		n = 200
		// maxLive is about 6% above what the connections keep now,
		// 12.2 KB here, where the Transports' buffers and pools count too
		// (and under the 15 KB target of the performance work). It was
		// 12,000 at 10.6 KB; this round added about 1.6 KB: BBR as the
		// default controller keeps more state than Cubic (+0.8 KB), the
		// early-listener and logging state of the Go-user work (+0.4 KB)
		// and the datagram and qlog accounting of the hardening work
		// (+0.3 KB), measured at each merge.
		maxLive = 13000
	)
	// In a synctest bubble: in real time, a machine busy enough to
	// starve the handshakes of CPU for the handshake idle timeout failed
	// a dial now and then.
	synctest.Test(t, func(t *testing.T) {
		// Measured twice, the first time to grow what the process keeps
		// once it ran that many goroutines and connections (the
		// runtime never frees the descriptors of exited goroutines; it
		// reuses them), which the first run counted as about 1.1 KB per
		// connection.
		idleServerConnMemory(t, n, time.Minute)
		m := idleServerConnMemory(t, n, time.Minute)
		t.Logf("per idle server connection: live heap %.0f B, heap in use %.0f B, goroutine stacks %.0f B; %d of %d parked",
			m.live, m.inuse, m.stack, m.parked, n)
		if m.parked < n {
			t.Errorf("%d of %d idle server connections parked", m.parked, n)
		}
		if m.live > maxLive {
			t.Errorf("idle server connections keep %.0f bytes of heap each, more than %d", m.live, maxLive)
		}
		// The stacks an idle connection keeps are those of goroutines
		// running its loop: none once it parked and the runners left.
		// StackInuse (logged) is the whole process's: in a long
		// test-under-load run, other tests' goroutines starting and
		// exiting meanwhile showed as 7,864 B per connection once, with
		// every connection parked.
		if m.loops > 0 {
			t.Errorf("%d goroutines run connection loops with %d idle server connections parked", m.loops, m.parked)
		}
	})
}
