package http3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrentRequestsHeadersNotAliased: many concurrent requests on one
// connection, each with request and response fields of its own (new
// literal values, dynamic-table inserts), check that no side sees another
// request's fields: the per-connection scratch buffer, the pooled request
// header buffers and the decoded field slices are not shared while in use.
func TestConcurrentRequestsHeadersNotAliased(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Id")
		if got := r.Header.Get("X-Echo"); got != strings.Repeat(id, 40) {
			w.WriteHeader(400)
			fmt.Fprintf(w, "request %s: X-Echo %q", id, got)
			return
		}
		w.Header().Set("X-Id", id)
		w.Header().Set("X-Back", strings.Repeat(id, 50))
		io.WriteString(w, id)
	}))
	const n = 400
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("<%d>", i)
			req, _ := http.NewRequest("GET", e.url+"/", nil)
			req.Header.Set("X-Id", id)
			req.Header.Set("X-Echo", strings.Repeat(id, 40))
			resp, err := e.client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				errs <- err
				return
			}
			if resp.StatusCode != 200 || string(b) != id || resp.Header.Get("X-Id") != id || resp.Header.Get("X-Back") != strings.Repeat(id, 50) {
				errs <- fmt.Errorf("request %s: status %d body %q X-Id %q X-Back %q", id, resp.StatusCode, b, resp.Header.Get("X-Id"), resp.Header.Get("X-Back"))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestRequestContextKindsAbort: a request to a handler that never answers
// returns once its context is done, whatever kind of context: a deadline,
// a cancel mid-request, a cause, and a non-cancellable parent wrapped in a
// cancellable one.
func TestRequestContextKindsAbort(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/headers" {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	kinds := map[string]func() (context.Context, func()){
		"timeout": func() (context.Context, func()) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		},
		"cancel": func() (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		},
		"cause": func() (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(50*time.Millisecond, func() { cancel(io.ErrUnexpectedEOF) })
			return ctx, func() { cancel(nil) }
		},
		"withoutcancel-wrapped": func() (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.WithoutCancel(context.Background()))
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		},
	}
	for name, mk := range kinds {
		for _, path := range []string{"/none", "/headers"} {
			t.Run(name+path, func(t *testing.T) {
				ctx, cancel := mk()
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
				done := make(chan error, 1)
				go func() {
					resp, err := e.client.Do(req)
					if err == nil {
						_, err = io.ReadAll(resp.Body)
						resp.Body.Close()
					}
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil {
						t.Fatal("request succeeded after its context was done")
					}
				case <-time.After(20 * time.Second):
					t.Fatal("request did not return after its context was done")
				}
			})
		}
	}
}

// TestBodyCloseRacesReadAndCancel: a response body closed while another
// goroutine reads it and while its request context is cancelled, on many
// requests of one connection with request bodies in flight: no race, no
// hang, and the connection still serves a request afterwards.
func TestBodyCloseRacesReadAndCancel(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		go io.Copy(io.Discard, r.Body)
		for i := 0; i < 50; i++ {
			if _, err := w.Write(make([]byte, 4096)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			go func() { pw.Write(make([]byte, 1000)); pw.Close() }()
			req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/", pr)
			resp, err := e.client.Do(req)
			if err != nil {
				return
			}
			var rw sync.WaitGroup
			rw.Add(1)
			go func() { defer rw.Done(); io.Copy(io.Discard, resp.Body) }()
			switch i % 3 {
			case 0:
				resp.Body.Close()
				cancel()
			case 1:
				cancel()
				resp.Body.Close()
			default:
				go cancel()
				resp.Body.Close()
			}
			rw.Wait()
		}()
	}
	wg.Wait()
	resp, body := e.get(t, "/")
	if resp.StatusCode != 200 || len(body) != 50*4096 {
		t.Fatalf("after the races: status %d, %d bytes", resp.StatusCode, len(body))
	}
}

// TestSlowOddReadsLargeBodies: two large responses on one connection read
// in odd-sized small reads, alternating between them, so that neither
// stream's reads empty its buffer at the peer's limit in step with the
// other: the window updates (MAX_STREAM_DATA, MAX_DATA) must still go out
// and both bodies arrive whole.
func TestSlowOddReadsLargeBodies(t *testing.T) {
	const size = 3 << 20
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64<<10)
		for i := range b {
			b[i] = byte(i)
		}
		for n := 0; n < size; n += len(b) {
			if _, err := w.Write(b); err != nil {
				return
			}
		}
	}))
	var bodies [2]io.ReadCloser
	for i := range bodies {
		resp, err := e.client.Get(e.url + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		bodies[i] = resp.Body
	}
	var got [2]int
	buf := make([]byte, 8192)
	k := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for got[0] < size || got[1] < size {
			for i := range bodies {
				if got[i] >= size {
					continue
				}
				k++
				n, err := bodies[i].Read(buf[:1+(k*37)%4099])
				for j := 0; j < n; j++ {
					if buf[j] != byte((got[i]+j)%(64<<10)) {
						t.Errorf("body %d: wrong byte at %d", i, got[i]+j)
						return
					}
				}
				got[i] += n
				if err != nil && got[i] < size {
					t.Errorf("body %d: %v after %d bytes", i, err, got[i])
					return
				}
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("stalled: the two bodies were not read whole")
	}
}
