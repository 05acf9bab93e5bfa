package quic

import (
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"
)

var idleHeapProfile = flag.String("idleheapprofile", "", "TestIdleServerConnMemory writes the heap profile with the idle server connections open to this file")

// idleServerConnMemory establishes n connections from a client Transport
// to a server Transport over an in-memory PacketConn pair, lets them go
// quiet, then cuts the client off (its datagrams vanish) and closes it, so
// that only the server's connections remain, idle. It returns the growth
// of the heap in use and of the goroutine stacks, each per server
// connection, measured after garbage collection.
func idleServerConnMemory(t testing.TB, n int) (live, heap, stack float64) {
	t.Helper()
	if *idleHeapProfile != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	ctls, stls := testTLS(t)
	sc, cc := newMemConnPair()
	serverT, clientT := &Transport{Conn: sc}, &Transport{Conn: cc}
	defer func() {
		serverT.Close()
		sc.Close()
	}()
	conf := &Config{MaxIdleTimeout: time.Hour}
	l, err := serverT.Listen(stls, conf)
	if err != nil {
		t.Fatal(err)
	}
	live0, heap0, stack0 := gcMemStats()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
				if _, err := clientT.Dial(ctx, sc.LocalAddr(), ctls, conf); err != nil {
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
	// Let the last acknowledgments cross, then take the client away
	// without the server noticing.
	time.Sleep(200 * time.Millisecond)
	cc.blackhole.Store(true)
	clientT.Close()
	cc.Close()
	// Let the connections go quiet for long enough to release memory.
	time.Sleep(idleReleaseDelay + 300*time.Millisecond)
	for _, c := range server {
		if c.Context().Err() != nil {
			t.Fatalf("server connection closed: %v", context.Cause(c.Context()))
		}
	}
	live1, heap1, stack1 := gcMemStats()
	if *idleHeapProfile != "" {
		f, err := os.Create(*idleHeapProfile)
		if err != nil {
			t.Fatal(err)
		}
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	runtime.KeepAlive(server)
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	return per(live1, live0), per(heap1, heap0), per(stack1, stack0)
}

// gcMemStats returns the live heap objects, the heap spans in use and
// the goroutine stacks in use after garbage collection.
func gcMemStats() (live, heap, stack uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.HeapInuse, ms.StackInuse
}

func TestIdleServerConnMemory(t *testing.T) {
	const n = 200
	live, heap, stack := idleServerConnMemory(t, n)
	t.Logf("per idle server connection: live heap %.0f B, heap in use %.0f B, goroutine stack %.0f B", live, heap, stack)
}
