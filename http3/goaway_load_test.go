package http3

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// TestShutdownUnderLoadLosesNoRequest shuts the server down while eight
// clients keep sending: every request the server processed must reach its
// client in full, and every request that failed must not have been
// processed (RFC 9114, Section 5.2: GOAWAY tells the client which
// requests were not, and the server finishes the others).
func TestShutdownUnderLoadLosesNoRequest(t *testing.T) {
	var served atomic.Int64
	body := make([]byte, 10000)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		time.Sleep(time.Millisecond) // keep some requests in flight
		w.Write(body)
	}))
	// Requests after the GOAWAY dial again and find no server; do not
	// wait long for that.
	e.tr.QUICConfig = &quic.Config{HandshakeIdleTimeout: 300 * time.Millisecond}
	e.get(t, "/warmup")
	served.Store(0)
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := e.client.Get(e.url + "/")
				if err != nil {
					failed.Add(1)
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || len(b) != len(body) {
					t.Errorf("processed request cut short: %d bytes, %v", len(b), err)
					failed.Add(1)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	for served.Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t0 := time.Now()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	t.Logf("Shutdown took %v", time.Since(t0))
	close(stop)
	wg.Wait()
	t.Logf("clients done after %v", time.Since(t0))
	if served.Load() != ok.Load() {
		t.Fatalf("server processed %d requests, clients got %d (and %d failures)", served.Load(), ok.Load(), failed.Load())
	}
	if failed.Load() == 0 {
		t.Log("no request failed: all finished before the server closed")
	}
}
