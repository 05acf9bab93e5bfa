package http3

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// A Transport is an http.RoundTripper for HTTP/3 ("https" URLs). It keeps
// one QUIC connection per authority (host:port), used for concurrent
// requests and dialed again once closed or after the server's GOAWAY.
// The zero value is ready to use.
type Transport struct {
	// TLSClientConfig is the TLS configuration; "h3" is put in a copy's
	// NextProtos and ServerName defaults to the request's host.
	TLSClientConfig *tls.Config
	// QUICConfig configures the QUIC connections; nil means defaults.
	QUICConfig *quic.Config
	// MaxResponseHeaderBytes is the SETTINGS_MAX_FIELD_SECTION_SIZE the
	// client advertises and enforces; zero means 1 MiB.
	MaxResponseHeaderBytes int64

	mu     sync.Mutex
	conns  map[string]*dialCall
	closed bool
}

var _ http.RoundTripper = (*Transport)(nil)

// dialCall is a connection to an authority, being dialed until done is
// closed.
type dialCall struct {
	done chan struct{}
	cc   *clientConn
	err  error
}

// ErrTransportClosed is returned by RoundTrip after Close.
var ErrTransportClosed = errors.New("http3: transport closed")

// RoundTrip sends req over HTTP/3 and returns the response, whose Body
// streams the response content.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "https" || req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("http3: request URL must be https with a host")
	}
	authority := req.URL.Host
	if _, port, err := net.SplitHostPort(authority); err != nil || port == "" {
		authority = net.JoinHostPort(strings.Trim(req.URL.Hostname(), "[]"), "443")
	}
	for attempt := 0; ; attempt++ {
		cc, err := t.getConn(req.Context(), authority, req.URL.Hostname())
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := cc.roundTrip(req)
		// A request the server rejected or that the GOAWAY excluded was
		// not processed and can be retried on a new connection (RFC 9114,
		// Section 5.2), if its body can be replayed.
		var retry *retryableError
		if errors.As(err, &retry) && attempt < 3 && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil) {
			if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
				body, gerr := req.GetBody()
				if gerr != nil {
					return nil, err
				}
				req = req.Clone(req.Context())
				req.Body = body
			}
			continue
		}
		if retry != nil {
			err = retry.err
		}
		return resp, err
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// getConn returns a usable connection to authority, dialing one if
// needed. Concurrent callers share one dial.
func (t *Transport) getConn(ctx context.Context, authority, host string) (*clientConn, error) {
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil, ErrTransportClosed
		}
		if t.conns == nil {
			t.conns = make(map[string]*dialCall)
		}
		call := t.conns[authority]
		if call != nil {
			t.mu.Unlock()
			select {
			case <-call.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if call.err == nil && call.cc.usable() {
				return call.cc, nil
			}
			t.mu.Lock()
			if t.conns[authority] == call {
				delete(t.conns, authority)
			}
			t.mu.Unlock()
			if call.err != nil {
				return nil, call.err
			}
			continue
		}
		call = &dialCall{done: make(chan struct{})}
		t.conns[authority] = call
		t.mu.Unlock()
		call.cc, call.err = t.dial(ctx, authority, host)
		close(call.done)
		if call.err != nil {
			t.mu.Lock()
			if t.conns[authority] == call {
				delete(t.conns, authority)
			}
			t.mu.Unlock()
			return nil, call.err
		}
		return call.cc, nil
	}
}

func (t *Transport) dial(ctx context.Context, authority, host string) (*clientConn, error) {
	tc := &tls.Config{}
	if t.TLSClientConfig != nil {
		tc = t.TLSClientConfig.Clone()
	}
	if !slices.Contains(tc.NextProtos, NextProtoH3) {
		tc.NextProtos = append([]string{NextProtoH3}, tc.NextProtos...)
	}
	if tc.ServerName == "" {
		tc.ServerName = host
	}
	qc, err := quic.DialAddr(ctx, authority, tc, t.QUICConfig)
	if err != nil {
		return nil, err
	}
	cc := &clientConn{connection: newConnection(qc, false, uint64(max(t.MaxResponseHeaderBytes, 0)))}
	cc.onGoaway = cc.goawayReceived
	if err := cc.start(); err != nil {
		qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeInternalError), "cannot open control streams")
		return nil, err
	}
	go cc.refuseBidiStreams()
	return cc, nil
}

// Close closes every connection of the Transport with H3_NO_ERROR; later
// requests fail.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	calls := t.conns
	t.conns = nil
	t.mu.Unlock()
	for _, call := range calls {
		<-call.done
		if call.cc != nil {
			call.cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
		}
	}
	return nil
}

// clientConn is the client side of one HTTP/3 connection.
type clientConn struct {
	*connection
	active int // requests in progress; guarded by connection.mu
}

// requestStarted counts a request whose stream was opened.
func (cc *clientConn) requestStarted() {
	cc.mu.Lock()
	cc.active++
	cc.mu.Unlock()
}

// requestDone uncounts a request, when it failed or its response body was
// closed, and closes a connection the server sent GOAWAY on once nothing
// is left on it.
func (cc *clientConn) requestDone() {
	cc.mu.Lock()
	cc.active--
	idle := cc.active == 0 && cc.goawayRecv
	cc.mu.Unlock()
	if idle {
		cc.closeAfterGoaway()
	}
}

// goawayReceived is the client connection's onGoaway hook. New requests go
// to a new connection; this one closes once its requests finish, which a
// server waiting in a graceful shutdown needs: "Once all accepted requests
// have been processed, the server can permit the connection to become
// idle, or it MAY initiate an immediate closure" (RFC 9114, Section 5.2),
// and a client that stops using a connection can close it at once.
func (cc *clientConn) goawayReceived(uint64) {
	cc.mu.Lock()
	idle := cc.active == 0
	cc.mu.Unlock()
	if idle {
		go cc.closeAfterGoaway() // not on the control stream's goroutine
	}
}

func (cc *clientConn) closeAfterGoaway() {
	cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
}

// usable reports whether new requests may use the connection.
func (cc *clientConn) usable() bool {
	if cc.qc.Context().Err() != nil {
		return false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return !cc.goawayRecv
}

// refuseBidiStreams closes the connection if the server opens a
// bidirectional stream: "Clients MUST treat receipt of a server-initiated
// bidirectional stream as a connection error of type
// H3_STREAM_CREATION_ERROR" (RFC 9114, Section 6.1).
func (cc *clientConn) refuseBidiStreams() {
	if _, err := cc.qc.AcceptStream(cc.qc.Context()); err == nil {
		cc.closeWithError(ErrCodeStreamCreationError, "server-initiated bidirectional stream")
	}
}

// retryableError marks a request the server did not process.
type retryableError struct{ err error }

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

// requestFields returns the field section of req (RFC 9114, Section
// 4.3.1).
func requestFields(req *http.Request) []qpack.HeaderField {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	fields := []qpack.HeaderField{{Name: ":method", Value: methodOf(req)}}
	if req.Method == http.MethodConnect {
		fields = append(fields, qpack.HeaderField{Name: ":authority", Value: host})
	} else {
		fields = append(fields,
			qpack.HeaderField{Name: ":scheme", Value: "https"},
			qpack.HeaderField{Name: ":authority", Value: host},
			qpack.HeaderField{Name: ":path", Value: req.URL.RequestURI()})
	}
	fields = appendHeaderFields(fields, req.Header, func(k string) bool {
		return k == "Host" || k == "Content-Length"
	})
	if req.ContentLength > 0 {
		fields = append(fields, qpack.HeaderField{Name: "content-length", Value: strconv.FormatInt(req.ContentLength, 10)})
	}
	if len(req.Trailer) > 0 {
		keys := make([]string, 0, len(req.Trailer))
		for k := range req.Trailer {
			keys = append(keys, k)
		}
		fields = append(fields, qpack.HeaderField{Name: "trailer", Value: strings.Join(keys, ",")})
	}
	return fields
}

func methodOf(req *http.Request) string {
	if req.Method == "" {
		return http.MethodGet
	}
	return req.Method
}

// roundTrip sends req on a new request stream and reads the response
// header.
func (cc *clientConn) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	str, err := cc.qc.OpenStreamSync(ctx)
	if err != nil {
		if ctx.Err() == nil && cc.qc.Context().Err() != nil {
			return nil, &retryableError{err}
		}
		return nil, err
	}
	cc.requestStarted()
	done := sync.OnceFunc(cc.requestDone)
	hdr, err := cc.encodeHeaders(str.StreamID(), requestFields(req))
	if err != nil {
		resetStream(str, ErrCodeInternalError)
		done()
		return nil, err
	}
	cancel := context.AfterFunc(ctx, func() { resetStream(str, ErrCodeRequestCancelled) })
	stop := func() bool { done(); return cancel() }
	if _, err := str.Write(hdr); err != nil {
		stop()
		return nil, cc.requestError(str, err)
	}
	hasBody := req.Body != nil && req.Body != http.NoBody
	if hasBody {
		go cc.writeBody(str, req)
	} else {
		str.CloseWrite()
	}
	br := bufio.NewReaderSize(str, 16<<10)
	for {
		f, err := readHeadersFrame(cc.connection, br)
		if err == io.EOF {
			err = connError(ErrCodeFrameError, "request stream ended without a response")
		}
		if err != nil {
			stop()
			return nil, cc.requestError(str, err)
		}
		fields, err := cc.decodeHeaders(ctx, str.StreamID(), f.Payload)
		if err != nil {
			stop()
			return nil, cc.requestError(str, err)
		}
		resp, err := cc.newResponse(ctx, req, str, br, fields)
		if err != nil {
			stop()
			return nil, cc.requestError(str, err)
		}
		if resp == nil {
			continue // an interim response
		}
		resp.Body.(*body).onClose = func() { stop() } // counts the request done
		return resp, nil
	}
}

// requestError turns a failure of a request stream into the error
// RoundTrip returns, resetting the stream or closing the connection as the
// error requires.
func (cc *clientConn) requestError(str *quic.Stream, err error) error {
	var he *Error
	if errors.As(err, &he) {
		if he.Stream {
			resetStream(str, he.Code)
		} else {
			cc.fail(err)
		}
		return err
	}
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote && ErrCode(se.Code) == ErrCodeRequestRejected {
		return &retryableError{err}
	}
	cc.mu.Lock()
	excluded := cc.goawayRecv && uint64(str.StreamID()) >= cc.goawayID
	cc.mu.Unlock()
	if excluded {
		return &retryableError{err}
	}
	return err
}

// writeBody sends the request content as DATA frames and ends the stream.
func (cc *clientConn) writeBody(str *quic.Stream, req *http.Request) {
	defer req.Body.Close()
	buf := make([]byte, 32<<10)
	var hdr [16]byte
	for {
		n, err := req.Body.Read(buf)
		if n > 0 {
			if _, werr := str.Write(appendDataFrameHeader(hdr[:0], uint64(n))); werr != nil {
				return
			}
			if _, werr := str.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
			return
		}
	}
	if len(req.Trailer) > 0 {
		if b, err := cc.encodeHeaders(str.StreamID(), appendHeaderFields(nil, req.Trailer, nil)); err == nil {
			str.Write(b)
		}
	}
	str.CloseWrite()
}

// newResponse builds the http.Response from a header section; nil for an
// interim (1xx) response.
func (cc *clientConn) newResponse(ctx context.Context, req *http.Request, str *quic.Stream, br *bufio.Reader, fields []qpack.HeaderField) (*http.Response, error) {
	p, h, err := splitFields(fields, ":status")
	if err != nil {
		return nil, err
	}
	code, err := strconv.Atoi(p.status)
	if err != nil || len(p.status) != 3 || code < 100 {
		return nil, streamError(ErrCodeMessageError, "invalid :status %q", p.status)
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		return nil, nil
	}
	cl, err := parseContentLength(h)
	if err != nil {
		return nil, err
	}
	resp := &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        h,
		ContentLength: cl,
		Request:       req,
	}
	state := cc.qc.ConnectionState().TLS
	resp.TLS = &state
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
