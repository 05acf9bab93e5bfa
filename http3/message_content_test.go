package http3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
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

var _ = bytes.Equal
var _ = errors.New

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
