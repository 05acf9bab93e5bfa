package quic

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// TestSynctestResponseReadLateRetires (hostile review of ac4b813): a
// client reads a response to its end only after its connection goroutine
// acknowledged the response's packet and went to sleep, and never asks
// for the stream's Context. The stream is finished in both directions; it
// must retire (ConnectionStats.OpenStreams back to 0, its buffers freed)
// without waiting for an unrelated event such as the next keep-alive or
// the idle timeout. The read to the end woke nobody, and nothing else was
// left to wake the goroutine: the acknowledgment it was owed had gone.
func TestSynctestResponseReadLateRetires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		str, err := p.client.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		str.Write([]byte("request"))
		str.CloseWrite()
		srv, err := p.server.AcceptStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(srv); err != nil || string(b) != "request" {
			t.Fatalf("server read %q, %v", b, err)
		}
		srv.Write([]byte("response"))
		srv.CloseWrite()
		// Both FINs arrive and are acknowledged; both goroutines go idle.
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := p.client.Stats().OpenStreams; n != 1 {
			t.Fatalf("OpenStreams = %d before the client read the response, want 1", n)
		}
		if b, err := io.ReadAll(str); err != nil || string(b) != "response" {
			t.Fatalf("client read %q, %v", b, err)
		}
		// Well within the idle timeout and any keep-alive.
		time.Sleep(time.Second)
		synctest.Wait()
		if n := p.client.Stats().OpenStreams; n != 0 {
			t.Fatalf("OpenStreams = %d a second after the client read the response to its end, want 0: the finished stream did not retire", n)
		}
	})
}
