package http3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// Server.MaxConcurrentHandlers caps the requests served at once across
// all connections, counting those still reading their header section: at
// the cap a new request stream is reset at once with H3_REQUEST_REJECTED
// ("A server rejected a request without performing any application
// processing", RFC 9114, Section 8.1), so that it costs nothing and the
// client may retry it; below the cap again, requests are served.
func TestMaxConcurrentHandlers(t *testing.T) {
	release := make(chan struct{})
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-release
		}
		io.WriteString(w, "ok")
	}), func(s *Server) { s.MaxConcurrentHandlers = 2 })
	cc := rawConn(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// One request in its handler, one still sending its header.
	held := openRaw(t, cc, hf(":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "/hold"), nil, true)
	stalled, err := cc.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stalled.Write(appendFrameHeader(nil, frameHeaders, 100))
	// Both are counted once the server has accepted them; the next one
	// is rejected.
	for e.srv.handlers.Load() < 2 {
		select {
		case <-ctx.Done():
			t.Fatalf("%d handlers counted", e.srv.handlers.Load())
		case <-time.After(time.Millisecond):
		}
	}
	str := openRaw(t, cc, requestWith(), nil, true)
	str.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadAll(str)
	var se *quic.StreamError
	if !errors.As(err, &se) || !se.Remote || ErrCode(se.Code) != ErrCodeRequestRejected {
		t.Fatalf("request at the cap: %v, want a reset with H3_REQUEST_REJECTED", err)
	}
	// The held request finishes; the next request is served.
	close(release)
	held.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(held); err != nil || len(b) == 0 {
		t.Fatalf("held request: %q, %v", b, err)
	}
	stalled.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
	for e.srv.handlers.Load() > 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("%d handlers still counted", e.srv.handlers.Load())
		case <-time.After(time.Millisecond):
		}
	}
	if status, code := sendRaw(t, cc, requestWith(), nil); status != 200 {
		t.Fatalf("below the cap again: status %d, code %v", status, code)
	}
}
