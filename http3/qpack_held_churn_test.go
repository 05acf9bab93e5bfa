package http3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestQPACKHeldAcksChurn: with Section Acknowledgments held back, both
// encoders see their entries released later; under churn (many
// concurrent requests, each with values of its own that fill the 4 KiB
// tables many times over, some requests cancelled after their header
// went out) every header must still arrive intact both ways, and the
// connection must survive (no entry evicted while a section references
// it, RFC 9204, Section 2.1.1; blocked streams within the limit,
// Section 2.1.2).
func TestQPACKHeldAcksChurn(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, k := range []string{"X-A", "X-B", "X-Same"} {
			w.Header().Set("Echo-"+k, r.Header.Get(k))
		}
		w.Header().Set("X-Srv", strings.Repeat("s", 100)+r.Header.Get("X-A"))
		if r.URL.Query().Get("slow") != "" {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		io.WriteString(w, r.Header.Get("X-A"))
	}))
	const workers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				a := fmt.Sprintf("a-%d-%d-%s", w, i, strings.Repeat("x", 60))
				b := fmt.Sprintf("b-%d-%s", i%5, strings.Repeat("y", 200))
				url := e.url + "/"
				cancelIt := i%7 == 3
				if cancelIt {
					url += "?slow=1"
				}
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				req.Header.Set("X-A", a)
				req.Header.Set("X-B", b)
				req.Header.Set("X-Same", "same")
				resp, err := e.client.Do(req)
				if err != nil {
					cancel()
					errs <- fmt.Errorf("request %d/%d: %v", w, i, err)
					continue
				}
				if resp.Header.Get("Echo-X-A") != a || resp.Header.Get("Echo-X-B") != b ||
					resp.Header.Get("Echo-X-Same") != "same" || resp.Header.Get("X-Srv") != strings.Repeat("s", 100)+a {
					errs <- fmt.Errorf("request %d/%d: headers %v", w, i, resp.Header)
				}
				if cancelIt {
					cancel()
					resp.Body.Close()
					continue
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				cancel()
				if err != nil || string(got) != a {
					errs <- fmt.Errorf("request %d/%d: body %q, %v", w, i, got, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 5 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Fatalf("%d of %d requests failed", n, workers*each)
	}
	if err := e.conn(t).qc.Context().Err(); err != nil {
		t.Fatalf("connection closed: %v", err)
	}
}
