package http3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
	"golang.org/x/net/http/httpguts"
)

// maxInterimResponses bounds the 1xx responses accepted before the final
// one; a server sending more is misbehaving.
const maxInterimResponses = 16

// streamLimitPatience is how long beyond two round trips a request waits
// for a stream, at the server's stream limit, while no request on the
// connection finishes, before it takes a new connection.
const streamLimitPatience = 100 * time.Millisecond

// errStreamsHeld is a connection whose streams are all held by requests
// in progress.
var errStreamsHeld = errors.New("http3: all streams busy")

// waitStream waits for the server to allow a new stream. Streams of
// finished requests come back in MAX_STREAMS frames, possibly batched, so
// it waits as long as requests on the connection keep finishing; if none
// finishes for two round trips and streamLimitPatience, the requests in
// progress hold every stream and it returns errStreamsHeld: a new
// connection takes the request (and the next ones) while this one
// finishes its requests and closes.
func (cc *clientConn) waitStream(ctx context.Context) (*quic.Stream, error) {
	for {
		cc.mu.Lock()
		finished := cc.finished
		cc.mu.Unlock()
		wait, cancel := context.WithTimeout(ctx, 2*cc.qc.Stats().SmoothedRTT+streamLimitPatience)
		str, err := cc.qc.OpenStreamSync(wait)
		cancel()
		if err == nil || ctx.Err() != nil || cc.qc.Context().Err() != nil {
			return str, err
		}
		cc.mu.Lock()
		progress := cc.finished != finished
		cc.mu.Unlock()
		if !progress {
			return nil, errStreamsHeld
		}
	}
}

// errTooEarly is a 425 (Too Early) answer to a request sent in 0-RTT.
var errTooEarly = errors.New("http3: server answered 425 (Too Early) to a 0-RTT request")

// requestFields returns the field section of req (RFC 9114, Section
// 4.3.1). An extended CONNECT request (RFC 9220) is a CONNECT whose
// Header holds ":protocol".
func requestFields(req *http.Request, askGzip bool) ([]qpack.HeaderField, error) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	// An IPv6 zone (RFC 6874) chose the interface to dial and means
	// nothing to the server; without it the authority is "uri-host [ ":"
	// port ]" (RFC 9110, Section 7.2), which the server checks
	// (validAuthority). net/http removes it from Host too.
	host = withoutZone(host)
	if !httpguts.ValidHostHeader(host) || !validAuthority(host) {
		return nil, fmt.Errorf("http3: invalid host %q", host)
	}
	method := methodOf(req)
	if !validMethod(method) {
		return nil, fmt.Errorf("http3: invalid method %q", method)
	}
	protocol := protocolOf(req)
	path := req.URL.RequestURI()
	if method != http.MethodConnect || protocol != "" {
		// ":path ... MUST NOT be empty" and is in origin-form, or "*" for
		// OPTIONS (RFC 9114, Section 4.3.1): the server's own rule.
		if _, err := parseRequestPath(method, path); err != nil {
			return nil, fmt.Errorf("http3: invalid request path %q", path)
		}
	}
	fields := make([]qpack.HeaderField, 0, 8+len(req.Header))
	fields = append(fields, qpack.HeaderField{Name: ":method", Value: method})
	switch {
	case method == http.MethodConnect && protocol != "":
		// RFC 9220, Section 3 (RFC 8441, Section 4): ":protocol" names the
		// protocol, and ":scheme" and ":path" are included.
		fields = append(fields,
			qpack.HeaderField{Name: ":protocol", Value: protocol},
			qpack.HeaderField{Name: ":scheme", Value: "https"},
			qpack.HeaderField{Name: ":authority", Value: host},
			qpack.HeaderField{Name: ":path", Value: path})
	case method == http.MethodConnect:
		fields = append(fields, qpack.HeaderField{Name: ":authority", Value: host})
	default:
		fields = append(fields,
			qpack.HeaderField{Name: ":scheme", Value: "https"},
			qpack.HeaderField{Name: ":authority", Value: host},
			qpack.HeaderField{Name: ":path", Value: path})
	}
	fields = appendHeaderFields(fields, req.Header, func(k string) bool {
		return k == "Host" || k == "Content-Length" || k == ":protocol"
	})
	if askGzip {
		fields = append(fields, qpack.HeaderField{Name: "accept-encoding", Value: "gzip"})
	}
	if req.ContentLength > 0 {
		fields = append(fields, qpack.HeaderField{Name: "content-length", Value: strconv.FormatInt(req.ContentLength, 10)})
	}
	if len(req.Trailer) > 0 {
		// "A sender MUST NOT generate a trailer field unless the sender
		// knows the corresponding header field name's definition permits
		// the field to be sent in trailers." (RFC 9110, Section 6.5.1):
		// those httpguts.ValidTrailerHeader refuses are neither declared
		// nor sent (writeBody).
		keys := make([]string, 0, len(req.Trailer))
		for k := range req.Trailer {
			if httpguts.ValidTrailerHeader(k) {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			fields = append(fields, qpack.HeaderField{Name: "trailer", Value: strings.Join(keys, ",")})
		}
	}
	return fields, nil
}

// withoutZone returns host ("[IPv6%zone]:port" or any other authority)
// without the zone of a bracketed IPv6 address.
func withoutZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	end := strings.IndexByte(host, ']')
	if end < 0 {
		return host
	}
	if pct := strings.IndexByte(host[:end], '%'); pct >= 0 {
		return host[:pct] + host[end:]
	}
	return host
}

// validMethod reports whether m is a token (RFC 9110, Section 9.1).
func validMethod(m string) bool {
	return m != "" && strings.IndexFunc(m, func(r rune) bool { return !httpguts.IsTokenRune(r) }) < 0
}

// protocolOf returns the :protocol of an extended CONNECT request: its
// ":protocol" header, as with net/http's HTTP/2 transport, or else a
// Proto that is not an HTTP version, as quic-go's http3 takes it.
func protocolOf(req *http.Request) string {
	if req.Method != http.MethodConnect {
		return ""
	}
	if p := req.Header.Get(":protocol"); p != "" {
		return p
	}
	if req.Proto != "" && !strings.HasPrefix(req.Proto, "HTTP/") {
		return req.Proto
	}
	return ""
}

func methodOf(req *http.Request) string {
	if req.Method == "" {
		return http.MethodGet
	}
	return req.Method
}

// handshakeDone reports whether the QUIC handshake completed.
func handshakeDone(qc *quic.Conn) bool {
	select {
	case <-qc.HandshakeComplete():
		return true
	default:
		return false
	}
}

// waitHandshake waits for the handshake to complete.
func waitHandshake(ctx context.Context, qc *quic.Conn) error {
	select {
	case <-qc.HandshakeComplete():
		return nil
	case <-qc.Context().Done():
		return &retryableError{err: context.Cause(qc.Context()), unsent: true}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wantsGzip reports whether the Transport adds Accept-Encoding: gzip to
// req, as net/http does.
func (cc *clientConn) wantsGzip(req *http.Request) bool {
	return (cc.t == nil || !cc.t.DisableCompression) &&
		req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == "" &&
		req.Method != http.MethodHead && req.Method != http.MethodConnect
}

// headerBufPool holds buffers for the HEADERS frames of requests.
var headerBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// openRequest opens a request stream and sends req's header section.
// mayRetire lets a connection at its stream limit hand the request to a
// new connection. The returned request's done uncounts the request.
func (cc *clientConn) openRequest(req *http.Request, fields []qpack.HeaderField, mayRetire bool) (*quic.Stream, *clientRequest, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if max := cc.peerMaxFieldSectionSize(); max > 0 && fieldSectionSize(fields) > max {
		return nil, nil, errFieldSectionTooLarge
	}
	if !handshakeDone(cc.qc) {
		m := methodOf(req)
		// Only idempotent requests go in 0-RTT (RFC 9114, Section 3.3;
		// RFC 9110, Section 9.2.2), and only GET and HEAD are sent so;
		// none without Allow0RTT (Dial may still return an early
		// connection).
		if cc.t == nil || !cc.t.Allow0RTT || (m != http.MethodGet && m != http.MethodHead) {
			if err := waitHandshake(ctx, cc.qc); err != nil {
				return nil, nil, err
			}
		}
	}
	// Counted before the stream exists (reserved since getConn), so that
	// a retire cannot close the connection under this request.
	cc.requestStarted(req)
	if cc.goneAway() {
		// "Endpoints MUST NOT initiate new requests ... after receipt of
		// a GOAWAY frame" (RFC 9114, Section 5.2): a new connection.
		cc.requestEnd(false)
		return nil, nil, &retryableError{err: errGoaway, unsent: true}
	}
	str, err := cc.qc.OpenStream()
	if err != nil && cc.qc.Context().Err() == nil {
		if !mayRetire || !handshakeDone(cc.qc) {
			str, err = cc.qc.OpenStreamSync(ctx)
		} else {
			str, err = cc.waitStream(ctx)
			if err == errStreamsHeld {
				cc.requestEnd(false)
				cc.retire()
				return nil, nil, &retryableError{err: err, unsent: true}
			}
		}
	}
	if err != nil {
		cc.requestEnd(false)
		if ctx.Err() == nil && cc.qc.Context().Err() != nil {
			return nil, nil, &retryableError{err: err, unsent: true}
		}
		return nil, nil, err
	}
	if !cc.watch(str) {
		// The GOAWAY came while the stream opened: nothing was sent.
		str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
		str.CancelRead(quic.StreamErrorCode(ErrCodeRequestCancelled))
		cc.requestDone()
		return nil, nil, &retryableError{err: errGoaway, unsent: true}
	}
	r := &clientRequest{cc: cc, str: str}
	done := r.done
	// The request's content goes at the priority its Priority field
	// asks for the response (RFC 9218 leaves client scheduling to the
	// client, Section 9); the field itself is sent as it is.
	str.SetPriority(requestPriority(req.Header))
	hb := headerBufPool.Get().(*[]byte)
	hdr, err := cc.appendHeaders((*hb)[:0], str.StreamID(), fields)
	if err != nil {
		headerBufPool.Put(hb)
		cc.resetStream(str, ErrCodeInternalError)
		done()
		return nil, nil, err
	}
	_, err = str.Write(hdr) // copies hdr
	if cap(hdr) <= maxScratchSection {
		*hb = hdr[:0]
		headerBufPool.Put(hb)
	}
	if err != nil {
		done()
		return nil, nil, cc.requestError(ctx, str, err)
	}
	bindPriorityHandle(ctx, cc.connection, str)
	return str, r, nil
}

// clientRequest is a request in progress on a request stream, from its
// opening to its end. Its methods may be called from any goroutine.
type clientRequest struct {
	cc       *clientConn
	str      *quic.Stream
	rb       *requestBody // the content being sent; nil if none
	cancel   func() bool  // stops the request context's AfterFunc; nil if none
	doneOnce sync.Once
	stopOnce sync.Once
}

// done uncounts the request, once; concurrent calls return when it is
// done.
func (r *clientRequest) done() {
	r.doneOnce.Do(r.uncount)
}

func (r *clientRequest) uncount() { r.cc.unwatch(r.str); r.cc.requestDone() }

// stop ends the request: it closes the request body if the writing
// has not, which also ends a writer blocked in the body's Read, as
// http.RoundTripper requires ("RoundTrip must always close the body,
// including on errors").
func (r *clientRequest) stop() {
	r.done()
	r.rb.close()
	if r.cancel != nil {
		r.cancel()
	}
}

// roundTrip sends req on a new request stream and reads the response
// header.
func (cc *clientConn) roundTrip(req *http.Request, mayRetire bool) (*http.Response, error) {
	ctx := req.Context()
	hasBody := req.Body != nil && req.Body != http.NoBody
	if !hasBody && req.ContentLength > 0 {
		// Never a message whose content differs from its Content-Length
		// (RFC 9114, Section 4.1.2); net/http's error.
		closeBody(req)
		return nil, fmt.Errorf("http: Request.ContentLength=%d with nil Body", req.ContentLength)
	}
	askGzip := cc.wantsGzip(req)
	fields, err := requestFields(req, askGzip)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	early := !handshakeDone(cc.qc)
	str, r, err := cc.openRequest(req, fields, mayRetire)
	if err != nil {
		var re *retryableError
		if !errors.As(err, &re) || !re.unsent {
			closeBody(req)
		}
		return nil, err
	}
	var rb *requestBody
	if hasBody {
		rb = &requestBody{req: req}
	}
	r.rb = rb
	if ctx.Done() != nil { // a context that can never be done needs no watch
		r.cancel = context.AfterFunc(ctx, func() {
			cc.resetStream(str, ErrCodeRequestCancelled)
			rb.close()
		})
	}
	stop := r.stop
	var gate *continueGate
	if hasBody {
		if cc.t != nil && cc.t.ExpectContinueTimeout > 0 && strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
			gate = &continueGate{ch: make(chan bool, 1), timeout: cc.t.ExpectContinueTimeout}
		}
		go cc.writeBody(str, rb, gate)
	} else {
		str.CloseWrite()
	}
	resp, err := cc.readResponse(ctx, req, str, gate)
	if err != nil {
		stop()
		if berr := rb.error(); berr != nil {
			return nil, berr
		}
		return nil, err
	}
	if resp.StatusCode == http.StatusTooEarly && early {
		// RFC 8470, Section 5.2: the request "can be retried" once the
		// handshake completed.
		resp.Body.Close()
		stop()
		if err := waitHandshake(ctx, cc.qc); err != nil {
			return nil, err
		}
		return nil, &retryableError{err: errTooEarly}
	}
	// Closing the body ends the request (stop), a complete response ends
	// the request's content too (the server has what it needed, RFC
	// 9114, Section 4.1, and a body the writer still waits on is closed),
	// and a failed content is reported instead of the reset it caused.
	resp.Body.(*body).req = r
	if askGzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		resp.Body = &gzipBody{body: resp.Body}
	}
	return resp, nil
}

// readResponse reads the interim responses, reporting them to the
// request's httptrace.ClientTrace, and returns the final one.
func (cc *clientConn) readResponse(ctx context.Context, req *http.Request, str *quic.Stream, gate *continueGate) (*http.Response, error) {
	defer gate.open(false) // a final response or an error: no body if not sent yet
	defer cc.unwatch(str)  // a response: processed, whatever a GOAWAY says
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(str)
	pooled := true
	defer func() {
		if pooled {
			br.Reset(nil)
			readerPool.Put(br)
		}
	}()
	trace := httptrace.ContextClientTrace(ctx)
	for interim := 0; ; interim++ {
		f, err := readHeadersFrame(cc.connection, br)
		if err == io.EOF {
			err = connError(ErrCodeFrameError, "request stream ended without a response")
		}
		if err != nil {
			return nil, cc.requestError(ctx, str, err)
		}
		fields, err := cc.decodeSection(ctx, str.StreamID(), f.Payload, sectionDecode{str: str, br: br})
		if err != nil {
			return nil, cc.requestError(ctx, str, err)
		}
		resp, err := cc.newResponse(ctx, req, str, br, fields)
		if err != nil {
			return nil, cc.requestError(ctx, str, err)
		}
		if resp.StatusCode >= 200 {
			pooled = false
			resp.Body.(*body).pooledBR = true // the body returns br
			return resp, nil
		}
		// "zero or more interim responses" before the final one (RFC
		// 9114, Section 4.1).
		if interim >= maxInterimResponses {
			return nil, cc.requestError(ctx, str, streamError(ErrCodeExcessiveLoad, "more than %d interim responses", maxInterimResponses))
		}
		if resp.StatusCode == http.StatusContinue {
			gate.open(true)
			if trace != nil && trace.Got100Continue != nil {
				trace.Got100Continue()
			}
		}
		if trace != nil && trace.Got1xxResponse != nil {
			if err := trace.Got1xxResponse(resp.StatusCode, textproto.MIMEHeader(resp.Header)); err != nil {
				cc.resetStream(str, ErrCodeRequestCancelled)
				return nil, err
			}
		}
	}
}

// requestError turns a failure of a request stream into the error
// RoundTrip returns, resetting the stream or closing the connection as the
// error requires.
func (cc *clientConn) requestError(ctx context.Context, str *quic.Stream, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	err = withCodeName(err)
	var he *Error
	if errors.As(err, &he) {
		if he.Stream {
			cc.resetStream(str, he.Code)
		} else {
			cc.fail(err)
		}
		return err
	}
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote && ErrCode(se.Code) == ErrCodeRequestRejected {
		return &retryableError{err: err}
	}
	cc.mu.Lock()
	excluded := cc.goawayRecv && uint64(str.StreamID()) >= cc.goawayID
	cc.mu.Unlock()
	if excluded || refused(cc.qc) {
		return &retryableError{err: err}
	}
	return err
}

// continueGate holds back the body of an "Expect: 100-continue" request
// (RFC 9110, Section 10.1.1) until the server's 100 (Continue), a timeout,
// or a final response, after which the body is not sent.
type continueGate struct {
	ch      chan bool // receives true to send the body, false not to
	timeout time.Duration
}

// open resolves the gate, once; a nil gate ignores it.
func (g *continueGate) open(send bool) {
	if g == nil {
		return
	}
	select {
	case g.ch <- send:
	default:
	}
}

// wait reports whether to send the body.
func (g *continueGate) wait(str *quic.Stream) bool {
	t := time.NewTimer(g.timeout)
	defer t.Stop()
	select {
	case send := <-g.ch:
		return send
	case <-t.C:
		return true
	case <-str.Context().Done():
		return false
	}
}

// requestBody is the content of a request being sent.
type requestBody struct {
	req  *http.Request
	once sync.Once

	mu     sync.Mutex
	err    error // the content does not match req.ContentLength
	closed bool  // close was called
}

// close closes the request body, once: when the writing ends, or the
// request ends first (cancelled, failed, or its response complete or
// closed). A writer blocked in the body's Read then returns. A nil
// requestBody ignores it.
func (rb *requestBody) close() {
	if rb == nil {
		return
	}
	rb.mu.Lock()
	rb.closed = true
	rb.mu.Unlock()
	rb.once.Do(func() { rb.req.Body.Close() })
}

// fail records why the content could not be sent, which the request
// reports instead of the reset it causes.
func (rb *requestBody) fail(err error) {
	rb.mu.Lock()
	rb.err = err
	rb.mu.Unlock()
}

// error returns the error that stopped the content, if any.
func (rb *requestBody) error() error {
	if rb == nil {
		return nil
	}
	rb.mu.Lock()
	defer rb.mu.Unlock()
	return rb.err
}

// wasClosed reports whether close was called.
func (rb *requestBody) wasClosed() bool {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	return rb.closed
}

// writeBody sends the request content as DATA frames and ends the stream.
// A content longer or shorter than a declared req.ContentLength is never
// sent as such: "An endpoint MUST NOT generate an HTTP/3 message that is
// malformed" (RFC 9114, Section 4.1.2, which counts a Content-Length that
// differs from the sum of the DATA frames). The request fails with
// net/http's error and the stream is reset, before any byte beyond the
// Content-Length is written.
func (cc *clientConn) writeBody(str *quic.Stream, rb *requestBody, gate *continueGate) {
	defer rb.close()
	req := rb.req
	if gate != nil && !gate.wait(str) {
		// The server answered without asking for the content: "the client
		// ... ought to not send the content" (RFC 9110, Section 10.1.1).
		// A FIN would make a request with a Content-Length malformed, so
		// the request side is reset.
		str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
		return
	}
	// "For client requests, a value of 0 with a non-nil Body is also
	// treated as unknown" (net/http's Request.ContentLength).
	declared := req.ContentLength
	mismatch := func(n int64) {
		rb.fail(fmt.Errorf("http: ContentLength=%d with Body length %d", declared, n))
		cc.resetStream(str, ErrCodeRequestCancelled)
	}
	buf := make([]byte, 32<<10)
	var hdr [16]byte
	var sent int64
	for {
		n, err := req.Body.Read(buf)
		if n > 0 {
			if declared > 0 && sent+int64(n) > declared {
				mismatch(sent + int64(n))
				return
			}
			if _, werr := str.Write(appendDataFrameHeader(hdr[:0], uint64(n))); werr != nil {
				return
			}
			if cc.tr != nil {
				cc.traceCreated(FrameInfo{StreamID: str.StreamID(), Type: frameData, Length: uint64(n)})
			}
			if _, werr := str.Write(buf[:n]); werr != nil {
				return
			}
			sent += int64(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if !rb.wasClosed() {
				rb.fail(err) // the body failed, not closed by the request's end
			}
			str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
			return
		}
	}
	if declared > 0 && sent != declared {
		mismatch(sent)
		return
	}
	if len(req.Trailer) > 0 {
		fields := appendHeaderFields(nil, req.Trailer, func(k string) bool { return !httpguts.ValidTrailerHeader(k) })
		if max := cc.peerMaxFieldSectionSize(); max == 0 || fieldSectionSize(fields) <= max {
			if b, err := cc.encodeHeaders(str.StreamID(), fields); err == nil {
				str.Write(b)
			}
		}
	}
	str.CloseWrite()
}

// newResponse builds the http.Response from a header section. An interim
// (1xx) response has no Body.
func (cc *clientConn) newResponse(ctx context.Context, req *http.Request, str *quic.Stream, br *bufio.Reader, fields []qpack.HeaderField) (*http.Response, error) {
	p, h, err := splitFields(fields, ":status")
	if err != nil {
		return nil, err
	}
	// ":status ... MUST be included in all responses" (RFC 9114, Section
	// 4.3.2), "the three-digit integer code" (RFC 9110, Section 15).
	code64, ok := parseDigits(p.status)
	code := int(code64)
	if !ok || len(p.status) != 3 || code < 100 {
		return nil, streamError(ErrCodeMessageError, "invalid :status %q", p.status)
	}
	if code == http.StatusSwitchingProtocols {
		// "HTTP/3 does not support ... the 101 (Switching Protocols)
		// informational status code" (RFC 9114, Section 4.5).
		return nil, streamError(ErrCodeMessageError, "101 (Switching Protocols) response")
	}
	resp := &http.Response{
		Status:     strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode: code,
		Proto:      "HTTP/3.0",
		ProtoMajor: 3,
		Header:     h,
		Request:    req,
	}
	if code < 200 {
		return resp, nil
	}
	cl, err := parseContentLength(h)
	if err != nil {
		return nil, err
	}
	resp.ContentLength = cl
	resp.TLS = cc.tlsState()
	bodyCL := cl
	if req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified {
		bodyCL = 0
	}
	if tr := h.Values("Trailer"); len(tr) > 0 {
		resp.Trailer = make(http.Header)
		for _, v := range tr {
			for _, k := range strings.Split(v, ",") {
				if k = textprotoKey(k); k != "" {
					resp.Trailer[k] = nil
				}
			}
		}
	}
	resp.Body = &body{c: cc.connection, ctx: ctx, str: str, br: br, contentLength: bodyCL, trailer: &resp.Trailer}
	return resp, nil
}
