package http3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// openRaw opens a request stream on cc and writes the field section and
// then data, ending the stream if fin.
func openRaw(t *testing.T, cc *clientConn, fields []qpack.HeaderField, data []byte, fin bool) *quic.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	str, err := cc.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cc.encodeHeaders(str.StreamID(), fields)
	if err != nil {
		t.Fatal(err)
	}
	str.Write(append(b, data...))
	if fin {
		str.CloseWrite()
	}
	return str
}

// dataFrames returns DATA frames carrying each of ps.
func dataFrames(ps ...string) []byte {
	var b []byte
	for _, p := range ps {
		b = append(appendDataFrameHeader(b, uint64(len(p))), p...)
	}
	return b
}

// bodyResult is what a handler read from a request body.
type bodyResult struct {
	got []byte
	err error
}

// "A request or response that is defined as having content when it
// contains a Content-Length header field is malformed if the value of the
// Content-Length header field does not equal the sum of the DATA frame
// lengths received." and "Intermediaries that process HTTP requests or
// responses (i.e., any intermediary not acting as a tunnel) MUST NOT
// forward a malformed request or response." (RFC 9114, Section 4.1.2).
// A DATA frame that goes past the Content-Length is refused from its
// header: the handler never sees a byte beyond the declared length.
func TestServerNeverDeliversBytesPastContentLength(t *testing.T) {
	results := make(chan bodyResult, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		results <- bodyResult{b, err}
	}))
	cc := rawConn(t, e)
	for _, tc := range []struct {
		name   string
		frames []byte
		want   string // what the handler may read before the error
	}{
		{"one frame", dataFrames("abcSMUGGLED"), ""},
		{"second frame", dataFrames("abc", "SMUGGLED"), "abc"},
		{"within a frame", dataFrames("ab", "cSMUGGLED"), "ab"},
	} {
		str := openRaw(t, cc, requestWith("content-length", "3"), tc.frames, true)
		r := <-results
		if string(r.got) != tc.want || h3Code(r.err) != ErrCodeMessageError {
			t.Errorf("%s: handler read %q, %v; want %q and H3_MESSAGE_ERROR", tc.name, r.got, r.err, tc.want)
		}
		str.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(str); h3Code(err) != ErrCodeMessageError {
			t.Errorf("%s: stream ended with %v, want a reset with H3_MESSAGE_ERROR", tc.name, err)
		}
	}
}

// The client applies the same rule to responses, and to DATA frames on
// responses that have no content: to HEAD, and with 204 or 304 (RFC 9110,
// Sections 9.3.2, 15.3.5 and 15.4.5).
func TestClientNeverDeliversBytesPastContentLength(t *testing.T) {
	rs := newRawServer(t, func(s *rawStream) {
		if s.err != nil {
			return
		}
		var status, cl string
		var frames []byte
		switch path := fieldValue(s.fields, ":path"); path {
		case "/one":
			status, cl, frames = "200", "3", dataFrames("abcSMUGGLED")
		case "/two":
			status, cl, frames = "200", "3", dataFrames("abc", "SMUGGLED")
		case "/head":
			status, cl, frames = "200", "3", dataFrames("abc")
		case "/204":
			status, frames = "204", dataFrames("SMUGGLED")
		case "/304":
			status, frames = "304", dataFrames("SMUGGLED")
		}
		fields := hf(":status", status)
		if cl != "" {
			fields = append(fields, hf("content-length", cl)...)
		}
		s.str.Write(append(s.headers(t, fields), frames...))
		s.str.CloseWrite()
	})
	for _, tc := range []struct {
		method, path, want string
	}{
		{"GET", "/one", ""},
		{"GET", "/two", "abc"},
		{"HEAD", "/head", ""},
		{"GET", "/204", ""},
		{"GET", "/304", ""},
	} {
		req, _ := http.NewRequest(tc.method, rs.url+tc.path, nil)
		resp, err := rs.client.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", tc.method, tc.path, err)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.want || h3Code(err) != ErrCodeMessageError {
			t.Errorf("%s %s: read %q, %v; want %q and H3_MESSAGE_ERROR", tc.method, tc.path, b, err, tc.want)
		}
	}
}

// fieldValue returns the value of the first field named name.
func fieldValue(fields []qpack.HeaderField, name string) string {
	for _, f := range fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// Defect 12: "HTTP/3 does not support the HTTP Upgrade mechanism (Section
// 7.8 of [HTTP]) or the 101 (Switching Protocols) informational status
// code (Section 15.2.2 of [HTTP])." (RFC 9114, Section 4.5). A handler's
// 101 is never sent: the stream is reset with H3_INTERNAL_ERROR and its
// writes fail; the client treats a 101 as a malformed response.
func TestSwitchingProtocolsNeverSentNorAccepted(t *testing.T) {
	writeErr := make(chan error, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Upgrade", "websocket")
		w.WriteHeader(http.StatusSwitchingProtocols)
		_, err := io.WriteString(w, "raw bytes of another protocol")
		writeErr <- err
	}))
	cc := rawConn(t, e)
	status, code := sendRaw(t, cc, requestWith(), nil)
	if status != 0 || code != ErrCodeInternalError {
		t.Errorf("handler's 101: status %d, code %v; want a reset with H3_INTERNAL_ERROR", status, code)
	}
	if err := <-writeErr; err == nil {
		t.Error("Write after WriteHeader(101) succeeded")
	}

	rs := newRawServer(t, func(s *rawStream) {
		if s.err != nil {
			return
		}
		s.str.Write(s.headers(t, hf(":status", "101")))
		s.str.Write(s.headers(t, hf(":status", "200")))
		s.str.CloseWrite()
	})
	resp, err := rs.client.Get(rs.url + "/")
	if err == nil {
		resp.Body.Close()
	}
	if h3Code(err) != ErrCodeMessageError {
		t.Errorf("client given a 101: %v; want H3_MESSAGE_ERROR", err)
	}
}

// requestBodySeen is what a raw server received as request content.
type requestBodySeen struct {
	data string
	err  error // nil for a clean end of the stream
}

// contentServer is a raw server that reads each request's content and
// reports it, answering 200 only if the stream ended cleanly.
func contentServer(t *testing.T) (*testEnv, chan requestBodySeen) {
	seen := make(chan requestBodySeen, 4)
	rs := newRawServer(t, func(s *rawStream) {
		if s.err != nil {
			seen <- requestBodySeen{err: s.err}
			return
		}
		var data []byte
		var err error
		for {
			var f frame
			f, err = readFrame(s.br)
			if err != nil {
				break
			}
			if f.Type == frameData {
				p := make([]byte, f.Length)
				if _, err = io.ReadFull(s.br, p); err != nil {
					break
				}
				data = append(data, p...)
			}
		}
		if err == io.EOF {
			err = nil
			s.str.Write(s.headers(t, hf(":status", "200")))
			s.str.CloseWrite()
		}
		seen <- requestBodySeen{string(data), err}
	})
	return rs, seen
}

// onlyReader hides a reader's type from http.NewRequest, which would set
// ContentLength.
type onlyReader struct{ io.Reader }

// Defect 2: "An endpoint MUST NOT generate an HTTP/3 message that is
// malformed" (RFC 9114, Section 4.1.2, which counts a Content-Length that
// differs from the content). A body longer or shorter than
// req.ContentLength fails the request as net/http does ("http:
// ContentLength=N with Body length M"), the stream is reset rather than
// ended, and no byte beyond the Content-Length is sent.
func TestClientBodyMustMatchContentLength(t *testing.T) {
	rs, seen := contentServer(t)
	for _, tc := range []struct {
		name    string
		body    string
		cl      int64
		wantErr string
	}{
		{"longer", "abcSMUGGLED", 3, "http: ContentLength=3 with Body length 11"},
		{"shorter", "abc", 10, "http: ContentLength=10 with Body length 3"},
	} {
		req, _ := http.NewRequest("POST", rs.url+"/", onlyReader{strings.NewReader(tc.body)})
		req.ContentLength = tc.cl
		resp, err := rs.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.wantErr)
		}
		got := <-seen
		if int64(len(got.data)) > tc.cl || got.err == nil {
			t.Errorf("%s: the server received %q, %v; want at most %d bytes and a reset", tc.name, got.data, got.err, tc.cl)
		}
	}
	// A Content-Length without a body is refused before anything is sent,
	// as net/http does.
	req, _ := http.NewRequest("POST", rs.url+"/", nil)
	req.ContentLength = 5
	if _, err := rs.client.Do(req); err == nil || !strings.Contains(err.Error(), "ContentLength=5 with nil Body") {
		t.Errorf("Content-Length without body: %v", err)
	}
	select {
	case got := <-seen:
		t.Errorf("the server received a request: %+v", got)
	default:
	}
	// An exact body is sent and ends cleanly.
	req, _ = http.NewRequest("POST", rs.url+"/", onlyReader{strings.NewReader("abc")})
	req.ContentLength = 3
	resp, err := rs.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-seen; got.data != "abc" || got.err != nil {
		t.Errorf("exact body: %+v", got)
	}
}

// blockingBody is a request body whose Read blocks until Close.
type blockingBody struct {
	closed   chan struct{}
	returned chan struct{} // closed when the blocked Read returned
	once     sync.Once
}

func newBlockingBody(t *testing.T) *blockingBody {
	b := &blockingBody{closed: make(chan struct{}), returned: make(chan struct{})}
	t.Cleanup(func() { b.Close() })
	return b
}

func (b *blockingBody) Read(p []byte) (int, error) {
	<-b.closed
	select {
	case <-b.returned:
	default:
		close(b.returned)
	}
	return 0, errors.New("read on closed body")
}

func (b *blockingBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// waitBodyReleased fails unless body was closed and its Read returned
// within a few seconds.
func waitBodyReleased(t *testing.T, what string, body *blockingBody) {
	t.Helper()
	select {
	case <-body.returned:
	case <-time.After(5 * time.Second):
		t.Errorf("%s: the request body was not closed, and the goroutine writing it still waits in Read", what)
	}
}

// Defect 3: "RoundTrip must always close the body, including on errors"
// (net/http's RoundTripper contract): the request body is closed, which
// ends the goroutine blocked in its Read, when the request is cancelled
// and when the server has sent a complete response without reading it
// (RFC 9114, Section 4.1: "A server can send a complete response prior to
// the client sending an entire request").
func TestClientClosesBlockedRequestBody(t *testing.T) {
	started := make(chan struct{}, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/early" {
			io.WriteString(w, "done early")
			return
		}
		started <- struct{}{}
		io.Copy(io.Discard, r.Body)
	}))
	// Cancelled while the body blocks.
	body := newBlockingBody(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/wait", body)
	go func() {
		<-started
		cancel()
	}()
	if _, err := e.client.Do(req); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
	waitBodyReleased(t, "cancelled", body)

	// A complete response before the body was sent.
	body = newBlockingBody(t)
	req, _ = http.NewRequest("POST", e.url+"/early", body)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "done early" || err != nil {
		t.Fatalf("early response: %q, %v", b, err)
	}
	waitBodyReleased(t, "complete early response", body)
}

// Errors that come from a reset request stream name the HTTP/3 code
// (H3_REQUEST_CANCELLED, not 0x10c), and still unwrap to the
// *quic.StreamError.
func TestStreamResetErrorsNameTheCode(t *testing.T) {
	errc := make(chan error, 1)
	started := make(chan struct{})
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		_, err := io.ReadAll(r.Body)
		errc <- err
	}))
	cc := rawConn(t, e)
	str := openRaw(t, cc, requestWith(), dataFrames("abc"), false)
	<-started
	str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
	err := <-errc
	var se *quic.StreamError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "H3_REQUEST_CANCELLED") {
		t.Errorf("handler's body read: %v", err)
	}
	rs := newRawServer(t, func(s *rawStream) {
		if s.err != nil {
			return
		}
		s.str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestRejected))
		s.str.CancelRead(quic.StreamErrorCode(ErrCodeRequestRejected))
	})
	tr := &Transport{TLSClientConfig: rs.tr.TLSClientConfig}
	defer tr.Close()
	req, _ := http.NewRequest("GET", rs.url+"/", nil)
	_, err = tr.RoundTrip(req)
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "H3_REQUEST_REJECTED") {
		t.Errorf("RoundTrip: %v", err)
	}
}
