package quic

import (
	"context"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestSynctestContextRacesFinish (hostile review of ac4b813): a stream's
// Context is made on the first call of Context. Eight goroutines per
// stream ask for it at once while the stream finishes (the exchange
// completes) on some streams and while the connection closes on others:
// every caller of a stream gets the same Context, and every one is done
// in the end; none is done while its stream is still open.
func TestSynctestContextRacesFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		const streams, callers = 16, 8
		type result struct {
			i   int
			ctx context.Context
		}
		results := make(chan result, streams*callers)
		var wg sync.WaitGroup
		strs := make([]*Stream, streams)
		for i := range streams {
			str, err := p.client.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			strs[i] = str
			str.Write([]byte("request"))
			if i%2 == 0 {
				str.CloseWrite() // finished once the response is read
			}
		}
		for range streams {
			srv, err := p.server.AcceptStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				io.ReadAll(srv)
				srv.Write([]byte("response"))
				srv.CloseWrite()
			}()
		}
		for i, str := range strs {
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results <- result{i, str.Context()}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.ReadAll(str)
			}()
		}
		// The even streams finish both ways; the odd ones stay open for
		// writing.
		time.Sleep(time.Second)
		synctest.Wait()
		for i, str := range strs {
			if done := isDone(str.Context()); done != (i%2 == 0) {
				t.Fatalf("stream %d: Context done %v, want %v", i, done, i%2 == 0)
			}
		}
		p.client.CloseWithError(0, "")
		wg.Wait()
		close(results)
		synctest.Wait()
		got := make([]context.Context, streams)
		for r := range results {
			if got[r.i] == nil {
				got[r.i] = r.ctx
			} else if got[r.i] != r.ctx {
				t.Fatalf("stream %d: Context returned different contexts", r.i)
			}
		}
		for i, str := range strs {
			if str.Context() != got[i] {
				t.Fatalf("stream %d: Context changed", i)
			}
			if !isDone(got[i]) {
				t.Fatalf("stream %d: Context not done after the connection closed", i)
			}
		}
	})
}
