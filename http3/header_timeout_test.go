package http3

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// Issue 19, item 3: "Streams that send half a HEADERS frame and stall are
// held forever while the connection is kept alive." Server.ReadHeaderTimeout
// bounds how long a request stream may take to deliver its header section,
// a QPACK-blocked one included; then the stream is reset with
// H3_REQUEST_REJECTED ("the request was not processed", RFC 9114, Section
// 8.1), the blocked section cancelled (RFC 9204, Section 2.2.2.2), and the
// connection goes on.
func TestReadHeaderTimeout(t *testing.T) {
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), func(s *Server) { s.ReadHeaderTimeout = 100 * time.Millisecond })
	p := newQPACKPeer(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rejected := func(what string, str *quic.Stream) {
		t.Helper()
		str.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.ReadAll(str)
		var se *quic.StreamError
		if !errors.As(err, &se) || !se.Remote || ErrCode(se.Code) != ErrCodeRequestRejected {
			t.Errorf("%s: stream ended with %v, want a reset with H3_REQUEST_REJECTED", what, err)
		}
	}
	// Half a HEADERS frame.
	str, err := p.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	frame := appendHeadersFrame(nil, blockedRequest)
	str.Write(frame[:len(frame)-2])
	rejected("half a HEADERS frame", str)
	// A whole one whose section waits for an insertion that never comes.
	str, err = p.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	str.Write(frame)
	rejected("blocked header section", str)
	id := uint64(str.StreamID())
	if !p.waitFor(func(_, cancels map[uint64]int, _ int) bool { return cancels[id] > 0 }) {
		t.Error("no Stream Cancellation for the blocked section")
	}
	// The connection serves the next request.
	p.enc.Write(insertAuthority)
	str, err = p.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	str.Write(frame)
	str.CloseWrite()
	str.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(str)
	if err != nil || !strings.HasSuffix(string(b), "ok") {
		t.Fatalf("request after the timeouts: %q, %v", b, err)
	}
}

// The default: net/http leaves ReadHeaderTimeout unset; an HTTP/3 header
// section arrives within a flight or two, so 10 seconds bounds how long a
// stalled stream holds its memory and goroutine without cutting off an
// honest client on a slow, lossy path. A negative value disables it.
func TestReadHeaderTimeoutDefault(t *testing.T) {
	for _, tc := range []struct {
		set, want time.Duration
	}{
		{0, DefaultReadHeaderTimeout},
		{time.Second, time.Second},
		{-1, 0},
	} {
		if got := (&Server{ReadHeaderTimeout: tc.set}).readHeaderTimeout(); got != tc.want {
			t.Errorf("ReadHeaderTimeout %v: %v, want %v", tc.set, got, tc.want)
		}
	}
	if DefaultReadHeaderTimeout != 10*time.Second {
		t.Errorf("DefaultReadHeaderTimeout %v", DefaultReadHeaderTimeout)
	}
}

// Issue 19, item 3: "A request header section above the server's limit
// must fail that request only (a 431 response, RFC 9114 Section 4.2.2),
// not the whole connection." With the default limit, a HEADERS frame
// declaring 2 MiB is answered with 431 before its payload is read, and
// the connection serves the next request.
func TestOversizedHeadersFailOnlyTheRequest(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	cc := rawConn(t, e)
	for _, declared := range []uint64{2 << 20, 1<<20 + 1} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		str, err := cc.qc.OpenStreamSync(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		str.Write(append(appendFrameHeader(nil, frameHeaders, declared), make([]byte, 1000)...))
		str.SetReadDeadline(time.Now().Add(10 * time.Second))
		f, err := readFrame(bufio.NewReader(str))
		if err != nil {
			t.Fatalf("HEADERS of %d bytes: %v", declared, err)
		}
		fs, err := cc.decodeHeaders(context.Background(), str.StreamID(), f.Payload, nil)
		if err != nil || len(fs) == 0 || fs[0].Value != "431" {
			t.Fatalf("HEADERS of %d bytes: answer %v, %v; want 431", declared, fs, err)
		}
		str.CancelWrite(0x10c)
	}
	if status, code := sendRaw(t, cc, requestWith(), nil); status != 200 {
		t.Fatalf("after the oversized headers: status %d, code %v", status, code)
	}
}
