package quic

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// TestSynctestContextDoneWhenReadToEndLast: a stream the application
// opened, whose sending part finished (FIN acknowledged) before the
// application read the peer's data to the end, has its Context cancelled
// by that read, as Stream.Context promises ("cancelled when the stream is
// finished in both directions"), without waiting for the connection
// goroutine to run for another reason. Reads wake that goroutine less
// since issue 28; this is the wakeup they keep.
func TestSynctestContextDoneWhenReadToEndLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		str, err := p.client.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := str.Write([]byte("request")); err != nil {
			t.Fatal(err)
		}
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
		// Long enough for the response to arrive and for both FINs to be
		// acknowledged (a few round trips of 20 ms, ACK delays included).
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if isDone(str.Context()) {
			t.Fatal("Context done before the response was read")
		}
		b, err := io.ReadAll(str)
		if err != nil || string(b) != "response" {
			t.Fatalf("client read %q, %v", b, err)
		}
		synctest.Wait() // the connection goroutine ran, if woken; no time passes
		if !isDone(str.Context()) {
			t.Fatal("Context not done once the stream finished in both directions")
		}
	})
}
