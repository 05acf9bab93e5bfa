package quic

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// TestSynctestContextFirstAskedAfterFinish: a stream's Context is made on
// the first call of Context (issue 28: most request streams never ask, two
// allocations each); asked for only after the stream finished in both
// directions, or after the connection ended, it is already done, and a
// Context asked for before stays the same one.
func TestSynctestContextFirstAskedAfterFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		exchange := func() (*Stream, *Stream) {
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
			if b, err := io.ReadAll(str); err != nil || string(b) != "response" {
				t.Fatalf("client read %q, %v", b, err)
			}
			time.Sleep(2 * time.Second) // both FINs acknowledged
			synctest.Wait()
			return str, srv
		}
		// Finished in both directions, never asked for before.
		str, srv := exchange()
		if !isDone(str.Context()) || !isDone(srv.Context()) {
			t.Fatalf("Context first asked for after the stream finished is not done: client %v, server %v",
				str.Context().Err(), srv.Context().Err())
		}
		if str.Context() != str.Context() {
			t.Fatal("Context returns a different context on each call")
		}
		// Open, asked for before and after the connection ended.
		open, err := p.client.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		open.Write([]byte("x"))
		before := open.Context()
		if isDone(before) {
			t.Fatal("Context of an open stream is done")
		}
		late, err := p.client.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		p.client.CloseWithError(0, "")
		synctest.Wait()
		if !isDone(before) || open.Context() != before {
			t.Fatal("Context asked for before the connection ended: not done, or replaced")
		}
		if !isDone(late.Context()) {
			t.Fatal("Context first asked for after the connection ended is not done")
		}
	})
}
