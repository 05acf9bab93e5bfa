package quic

import (
	"context"
	"io"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
	"weak"
)

// parkBoth waits until both ends of p are parked with their keys released.
func parkBoth(t *testing.T, p *connPair) {
	t.Helper()
	time.Sleep(2 * idleReleaseDelay)
	synctest.Wait()
	if !parkedQuiet(p.server) || !parkedQuiet(p.client) {
		t.Fatalf("not parked: server %v, client %v", p.server.parked.Load(), p.client.parked.Load())
	}
}

// A quiet connection keeps no finished stream: the copy of the sendable
// queue and the slots the queue moved away from held them, each with its
// send buffer (128 KB here), for as long as the connection lived.
func TestSynctestIdleKeepsNoFinishedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIdleTimeout: time.Minute}})
		const n = 8
		var weaks []weak.Pointer[stream]
		served := make(chan struct{})
		go func() {
			defer close(served)
			var streams []*Stream
			for range n {
				s, err := p.server.AcceptStream(context.Background())
				if err != nil {
					return
				}
				streams = append(streams, s)
			}
			done := make(chan struct{}, n)
			for _, s := range streams {
				weaks = append(weaks, weak.Make(s.s))
				go func() {
					io.ReadAll(s)
					s.Write(make([]byte, 100<<10))
					s.CloseWrite()
					done <- struct{}{}
				}()
			}
			for range n {
				<-done
			}
		}()
		var cs []*Stream
		for range n {
			s, err := p.client.OpenStreamSync(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			s.Write([]byte("req"))
			s.CloseWrite()
			cs = append(cs, s)
		}
		// Read concurrently: read one after the other, the responses
		// need more than the connection's window.
		res := make(chan error, n)
		for _, s := range cs {
			go func() {
				b, err := io.ReadAll(s)
				if err == nil && len(b) != 100<<10 {
					err = io.ErrUnexpectedEOF
				}
				res <- err
			}()
		}
		for range n {
			if err := <-res; err != nil {
				t.Fatalf("response: %v", err)
			}
		}
		<-served
		cs = nil
		parkBoth(t, p)
		if n := p.server.Stats().OpenStreams; n != 0 {
			t.Fatalf("%d streams open", n)
		}
		runtime.GC()
		runtime.GC()
		kept := 0
		for _, w := range weaks {
			if v := w.Value(); v != nil {
				kept++
				t.Logf("stream %d kept, with a send buffer of %d bytes", v.id, v.send.memory())
			}
		}
		if kept > 0 {
			t.Fatalf("the parked server connection keeps %d of %d finished streams", kept, n)
		}
	})
}
