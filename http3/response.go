package http3

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
	"golang.org/x/net/http/httpguts"
)

// maxPendingBody is how much content a handler may write before the
// response header is sent when it did not call WriteHeader or Flush:
// a response that ends within it gets a Content-Length, as net/http does.
const maxPendingBody = 4 << 10

var (
	bufWriterPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 16<<10) }}
	pendingPool   = sync.Pool{New: func() any { b := make([]byte, 0, maxPendingBody); return &b }}
)

// responseWriter is the http.ResponseWriter of a request stream: HEADERS
// with :status, then DATA frames, then trailers and FIN (RFC 9114,
// Section 4.1).
type responseWriter struct {
	sc     *serverConn
	str    *quic.Stream
	bw     *bufio.Writer
	req    *http.Request
	header http.Header
	prio   *prioritizedStream // the response's priority state (priority.go)

	wroteHeader bool // WriteHeader or Write chose the status
	committed   bool // the header is in bw
	status      int
	pending     *[]byte // content written before the header was committed
	declared    []string
	clen        int64 // Content-Length the handler set, -1 if none
	written     int64 // content bytes accepted from the handler
	err         error
	streamed    bool           // HTTPStream took the stream over
	body        *body          // the request body as received
	dgq         *datagramQueue // datagrams of an extended CONNECT
	rs          *RequestStream
	cmu         sync.Mutex // orders sendContinue with the final header
	finalSent   bool       // the final header is committed; guarded by cmu
	hdr         [16]byte
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

func newResponseWriter(sc *serverConn, str *quic.Stream, req *http.Request) *responseWriter {
	bw := bufWriterPool.Get().(*bufio.Writer)
	bw.Reset(str)
	w := &responseWriter{sc: sc, str: str, bw: bw, req: req, header: make(http.Header), clen: -1}
	w.body, _ = req.Body.(*body)
	return w
}

// release returns the pooled buffers once the response is done.
func (w *responseWriter) release() {
	if w.bw != nil && !w.streamed {
		w.bw.Reset(nil)
		bufWriterPool.Put(w.bw)
		w.bw = nil
	}
	if w.pending != nil {
		*w.pending = (*w.pending)[:0]
		pendingPool.Put(w.pending)
		w.pending = nil
	}
}

// Header returns the response header map.
func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader sends the response header with status code. Informational
// statuses (1xx) other than 101 send an interim response with the
// current header, 103 Early Hints for example, and may be followed by
// more; the header map is kept for the final response. HTTP/3 has no 101
// (Switching Protocols): after WriteHeader(101) nothing is sent, Write
// fails, and the request stream is reset with H3_INTERNAL_ERROR.
func (w *responseWriter) WriteHeader(code int) {
	if w.wroteHeader || w.streamed {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("http3: invalid WriteHeader code %v", code))
	}
	if code == http.StatusSwitchingProtocols {
		// "HTTP/3 does not support the HTTP Upgrade mechanism ... or the
		// 101 (Switching Protocols) informational status code" (RFC 9114,
		// Section 4.5): nothing is sent, writes fail and the stream is
		// reset with H3_INTERNAL_ERROR when the handler returns.
		w.wroteHeader, w.committed, w.status = true, true, code
		w.cmu.Lock()
		w.finalSent = true
		w.cmu.Unlock()
		w.err = errSwitchingProtocols
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		// RFC 9114, Section 4.1: "the HEADERS frame (containing ... an
		// informational (1xx) response) ... zero or more interim
		// responses" precede the final one.
		if w.writeFields(code, w.header, nil) == nil {
			w.flush()
		}
		return
	}
	w.setStatus(code)
	w.commit()
}

// setStatus records the final status without sending it yet.
func (w *responseWriter) setStatus(code int) {
	w.wroteHeader = true
	w.status = code
	if _, ok := w.header["Content-Length"]; ok {
		// Sent only if it follows "Content-Length = 1*DIGIT" (RFC 9110,
		// Section 8.6), and then as one plain decimal value.
		if n, err := parseContentLength(w.header); err == nil && n >= 0 {
			w.clen = n
			w.header["Content-Length"] = []string{strconv.FormatInt(n, 10)}
		} else {
			w.header.Del("Content-Length")
		}
	}
}

// commit writes the final header section into the buffer, followed by
// the content held back so far.
func (w *responseWriter) commit() {
	if w.committed {
		return
	}
	w.committed = true
	w.cmu.Lock()
	w.finalSent = true
	w.cmu.Unlock()
	for _, v := range w.header.Values("Trailer") {
		for _, k := range strings.Split(v, ",") {
			if k = textprotoKey(k); k != "" && httpguts.ValidTrailerHeader(k) {
				w.declared = append(w.declared, k)
			}
		}
	}
	if w.prio != nil {
		// A Priority field in the response header overrides the
		// request's parameters that it carries (RFC 9218, Section 8).
		w.sc.prio.setResponse(w.prio, w.header)
	}
	err := w.writeFields(w.status, w.header, func(k string) bool {
		return k == "Trailer" || strings.HasPrefix(k, http.TrailerPrefix)
	})
	if err == errFieldSectionTooLarge {
		// The peer would refuse the header (RFC 9114, Section 4.2.2:
		// "An implementation that has received this parameter SHOULD NOT
		// send an HTTP message header that exceeds the indicated size"):
		// answer 500 without it.
		w.err = nil
		w.status = http.StatusInternalServerError
		w.writeFields(w.status, nil, nil)
		w.err = errFieldSectionTooLarge
		return
	}
	if w.pending != nil && len(*w.pending) > 0 && w.err == nil {
		w.writeData(*w.pending)
		*w.pending = (*w.pending)[:0]
	}
}

// sendContinue sends a 100 (Continue) interim response straight to the
// stream, unless the final response header was committed. It runs in the
// goroutine reading the body, which may not be the handler's.
func (w *responseWriter) sendContinue() {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	if w.finalSent {
		return
	}
	b, err := w.sc.encodeHeaders(w.str.StreamID(), []qpack.HeaderField{{Name: ":status", Value: "100"}})
	if err == nil {
		w.str.Write(b)
	}
}

// errSwitchingProtocols is the error of a response whose handler called
// WriteHeader(101).
var errSwitchingProtocols = errors.New("http3: 101 (Switching Protocols) does not exist in HTTP/3 (RFC 9114, Section 4.5)")

// errFieldSectionTooLarge is a header or trailer section above the peer's
// SETTINGS_MAX_FIELD_SECTION_SIZE.
var errFieldSectionTooLarge = errors.New("http3: field section larger than the peer's SETTINGS_MAX_FIELD_SECTION_SIZE")

func (w *responseWriter) writeFields(status int, h http.Header, skip func(string) bool) error {
	var arr [8]qpack.HeaderField
	fields := append(arr[:0], qpack.HeaderField{Name: ":status", Value: statusString(status)})
	fields = appendHeaderFields(fields, h, skip)
	if max := w.sc.peerMaxFieldSectionSize(); max > 0 && fieldSectionSize(fields) > max {
		return errFieldSectionTooLarge
	}
	// Encoded straight into the buffer's free space when it fits.
	b, err := w.sc.appendHeaders(w.bw.AvailableBuffer(), w.str.StreamID(), fields)
	if err == nil {
		_, err = w.bw.Write(b)
	}
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

// bodyAllowed reports whether the response may have content (RFC 9110,
// Sections 9.3.2, 15.3.5 and 15.4.5).
func (w *responseWriter) bodyAllowed() bool {
	return w.req.Method != http.MethodHead && w.status != http.StatusNoContent && w.status != http.StatusNotModified
}

// Write writes p as content. Without an earlier WriteHeader the status is
// 200 and Content-Type is sniffed from the first bytes; the header is
// held back until more than 4 KiB were written, Flush is called or the
// handler returns, so that a short response carries its Content-Length.
// For HEAD requests the content is counted and discarded.
func (w *responseWriter) Write(p []byte) (int, error) {
	if w.streamed {
		return 0, http.ErrHijacked
	}
	if !w.wroteHeader {
		if _, ok := w.header["Content-Type"]; !ok && len(p) > 0 && w.header.Get("Content-Encoding") == "" {
			w.header.Set("Content-Type", http.DetectContentType(p))
		}
		w.setStatus(http.StatusOK)
	}
	if !w.bodyAllowed() {
		if w.req.Method == http.MethodHead {
			w.written += int64(len(p))
			return len(p), nil
		}
		return 0, http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.clen >= 0 && w.written+int64(len(p)) > w.clen {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if len(p) == 0 {
		return 0, nil
	}
	if !w.committed {
		if w.pending == nil {
			w.pending = pendingPool.Get().(*[]byte)
		}
		if len(*w.pending)+len(p) <= maxPendingBody {
			*w.pending = append(*w.pending, p...)
			return len(p), nil
		}
		w.commit()
		if w.err != nil {
			return 0, w.err
		}
	}
	if err := w.writeData(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeData writes one DATA frame.
func (w *responseWriter) writeData(p []byte) error {
	if _, err := w.bw.Write(appendDataFrameHeader(w.hdr[:0], uint64(len(p)))); err != nil {
		w.err = err
		return err
	}
	if w.sc.tr != nil {
		w.sc.traceCreated(FrameInfo{StreamID: w.str.StreamID(), Type: frameData, Length: uint64(len(p))})
	}
	if _, err := w.bw.Write(p); err != nil {
		w.err = err
		return err
	}
	return nil
}

// flush sends what the buffer holds.
func (w *responseWriter) flush() error {
	if err := w.bw.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Flush sends the header and the content written so far to the client.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError is Flush returning the error met, if any. It is what
// http.ResponseController.Flush calls.
func (w *responseWriter) FlushError() error {
	if w.streamed {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.setStatus(http.StatusOK)
	}
	w.commit()
	return w.flush()
}

// SetReadDeadline sets the deadline for reading the request body, as
// http.ResponseController.SetReadDeadline; a Read past it fails with an
// error whose Timeout method reports true. The zero time means none.
func (w *responseWriter) SetReadDeadline(t time.Time) error {
	return w.str.SetReadDeadline(t)
}

// SetWriteDeadline sets the deadline for sending the response, as
// http.ResponseController.SetWriteDeadline; a Write or Flush blocked
// past it fails. The zero time means none.
func (w *responseWriter) SetWriteDeadline(t time.Time) error {
	return w.str.SetWriteDeadline(t)
}

// EnableFullDuplex is a no-op: HTTP/3 lets a handler read the request
// body while writing the response. It is what
// http.ResponseController.EnableFullDuplex calls.
func (w *responseWriter) EnableFullDuplex() error { return nil }

// finish ends the response after the handler returned: the header if not
// sent yet, the trailers, and FIN. A response shorter than its
// Content-Length, or one that failed, is reset instead.
func (w *responseWriter) finish() {
	if w.streamed {
		return
	}
	if !w.wroteHeader {
		w.setStatus(http.StatusOK)
	}
	// "A server MUST NOT send any Transfer-Encoding or Content-Length
	// header fields in a 2xx (Successful) response to CONNECT" (RFC 9110,
	// Section 9.3.6).
	connect2xx := w.req.Method == http.MethodConnect && w.status/100 == 2
	if !w.committed && w.clen < 0 && w.status >= 200 && w.status != http.StatusNoContent && w.status != http.StatusNotModified && !connect2xx {
		if w.req.Method != http.MethodHead || w.written > 0 {
			w.header.Set("Content-Length", strconv.FormatInt(w.written, 10))
		}
	}
	w.commit()
	if w.bodyAllowed() && w.clen >= 0 && w.written != w.clen && w.err == nil {
		// "A response that is defined as having content when it contains
		// a Content-Length header field is malformed if the value ...
		// does not equal the sum of the DATA frame lengths" (RFC 9114,
		// Section 4.1.2): rather than send a malformed response, abort.
		w.sc.resetStream(w.str, ErrCodeInternalError)
		return
	}
	// "A sender MUST NOT generate a trailer field unless the sender
	// knows the corresponding header field name's definition permits the
	// field to be sent in trailers." (RFC 9110, Section 6.5.1) The names
	// httpguts.ValidTrailerHeader refuses (framing, routing,
	// authentication, controls, content format) are dropped, as
	// net/http's servers drop them (commit, and below).
	trailer := make(http.Header)
	for _, k := range w.declared {
		if vs := w.header[k]; len(vs) > 0 {
			trailer[k] = vs
		}
	}
	for k, vs := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			if k = textprotoKey(strings.TrimPrefix(k, http.TrailerPrefix)); httpguts.ValidTrailerHeader(k) {
				trailer[k] = vs
			}
		}
	}
	if len(trailer) > 0 && w.err == nil {
		fields := appendHeaderFields(nil, trailer, nil)
		if max := w.sc.peerMaxFieldSectionSize(); max == 0 || fieldSectionSize(fields) <= max {
			if b, err := w.sc.encodeHeaders(w.str.StreamID(), fields); err == nil {
				w.bw.Write(b)
			}
		}
	}
	err := w.flush()
	if err != nil && err != errFieldSectionTooLarge {
		w.sc.resetStream(w.str, ErrCodeInternalError)
		return
	}
	w.str.CloseWrite()
}

// statusStrings holds the decimal forms of the status codes 100 to 599.
var statusStrings = func() (s [500]string) {
	for i := range s {
		s[i] = strconv.Itoa(100 + i)
	}
	return s
}()

// statusString returns code in decimal, without allocating for a code
// from 100 to 599.
func statusString(code int) string {
	if code >= 100 && code < 600 {
		return statusStrings[code-100]
	}
	return strconv.Itoa(code)
}
