package interop

// The soak test (make soak): HTTP/3 load on our server through the
// impairment relay with 2% loss each way, from many short and long
// connections of our client and quic-go's, for SOAK_DURATION (it runs
// only when that is set; make soak defaults it to 10m). At the end every
// request must have been answered correctly or have failed with an error
// (failures are listed and must stay under 1%), and once the clients and
// the server are closed the goroutine count and the heap must be back to
// their baselines.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	qgh3 "github.com/quic-go/quic-go/http3"
	ours "github.com/quicstack/quic"
	oursh3 "github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/netem"
)

// soakBody returns the deterministic body of /n/<size>/<seed>.
func soakBody(size, seed int) []byte {
	b := make([]byte, size)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("SOAK_DURATION"))
	if err != nil || d <= 0 {
		t.Skip("the soak test runs with SOAK_DURATION set (make soak)")
	}
	runtime.GC()
	baseGoroutines := runtime.NumGoroutine()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap := ms.HeapInuse

	ctls, stls := h3TLS(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if len(parts) != 3 || parts[0] != "n" {
			http.NotFound(w, r)
			return
		}
		size, _ := strconv.Atoi(parts[1])
		seed, _ := strconv.Atoi(parts[2])
		if size < 0 || size > 8<<20 {
			http.Error(w, "size", http.StatusBadRequest)
			return
		}
		w.Write(soakBody(size, seed))
	})
	udp := listenUDP(t, false)
	tr := &ours.Transport{Conn: udp}
	l, err := tr.Listen(stls, &ours.Config{MaxIdleTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := &oursh3.Server{Handler: h, TLSConfig: stls}
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.ServeListener(l) }()
	proxy, err := netem.New(netem.Config{
		Server: udp.LocalAddr().(*net.UDPAddr), Link: netem.SimpleP2P(50_000_000, 10*time.Millisecond, 100), Seed: 7,
		Scenario:    netem.Scenario{Drop: [2]netem.Rate{{Percent: 2, Burst: 3}, {Percent: 2, Burst: 3}}},
		RecordBytes: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	base := "https://" + proxy.Addr().String()

	var ok, failed atomic.Int64
	var failMu sync.Mutex
	failures := map[string]int{}
	fail := func(err error) {
		failed.Add(1)
		failMu.Lock()
		failures[err.Error()]++
		failMu.Unlock()
	}
	get := func(c *http.Client, size, seed int) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/n/%d/%d", base, size, seed), nil)
		resp, err := c.Do(req)
		if err != nil {
			fail(err)
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			fail(err)
			return
		}
		if resp.StatusCode != 200 || !bytes.Equal(b, soakBody(size, seed)) {
			t.Errorf("wrong answer for size %d seed %d: status %d, %d bytes, sha %x", size, seed, resp.StatusCode, len(b), sha256.Sum256(b))
			failed.Add(1)
			return
		}
		ok.Add(1)
	}
	newClient := func(quicGo bool) (*http.Client, func()) {
		if quicGo {
			tr := &qgh3.Transport{TLSClientConfig: ctls}
			return &http.Client{Transport: tr}, func() { tr.Close() }
		}
		tr := &oursh3.Transport{TLSClientConfig: ctls}
		return &http.Client{Transport: tr}, func() { tr.Close() }
	}
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			quicGo := w%4 == 3
			seed := w * 1_000_000
			if w%2 == 0 {
				// A long connection with many requests, some large.
				c, closeClient := newClient(quicGo)
				defer closeClient()
				for time.Now().Before(end) {
					seed++
					size := 1 << (seed % 20) // 1 B to 512 KiB
					get(c, size, seed)
				}
				return
			}
			// Short connections: a few small requests each.
			for time.Now().Before(end) {
				c, closeClient := newClient(quicGo)
				for range 3 {
					seed++
					get(c, 100+seed%5000, seed)
				}
				closeClient()
			}
		}()
	}
	tick := time.NewTicker(30 * time.Second)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			runtime.ReadMemStats(&ms)
			t.Logf("%v left: %d ok, %d failed, %d goroutines, heap in use %d MiB",
				time.Until(end).Round(time.Second), ok.Load(), failed.Load(), runtime.NumGoroutine(), ms.HeapInuse>>20)
		}
	}
	tick.Stop()
	srv.Close()
	<-serveDone
	tr.Close()
	proxy.Close()
	st := proxy.Stats()
	t.Logf("%d requests answered, %d failed; relay: %d/%d datagrams dropped", ok.Load(), failed.Load(),
		st.Dropped[0]+st.Dropped[1], st.Received[0]+st.Received[1])
	for e, n := range failures {
		t.Logf("  %d x %s", n, e)
	}
	if total := ok.Load() + failed.Load(); total == 0 || failed.Load()*100 > total {
		t.Errorf("%d of %d requests failed (more than 1%%)", failed.Load(), total)
	}
	// Goroutines and heap back to their baselines.
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > baseGoroutines+5 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseGoroutines+5 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines left, baseline %d:\n%s", n, baseGoroutines, buf[:runtime.Stack(buf, true)])
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use: %d KiB at the start, %d KiB at the end", baseHeap>>10, ms.HeapInuse>>10)
	if ms.HeapInuse > baseHeap+16<<20 {
		t.Errorf("heap in use %d MiB at the end, %d MiB at the start", ms.HeapInuse>>20, baseHeap>>20)
	}
}
