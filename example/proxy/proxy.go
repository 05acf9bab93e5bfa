package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/quicstack/quic"
)

// proxy is the reverse proxy's handler: it checks a request's body,
// forwards the request to the backend with httputil.ReverseProxy, and
// logs and counts it.
type proxy struct {
	rp        *httputil.ReverseProxy
	maxBuffer int64
	buffered  budget // bodies buffered at once, in bytes
	access    *accessLog
	stats     *stats
	log       *slog.Logger
}

// requestInfo travels with a request in its context, from ServeHTTP to
// the Rewrite function and the backend transport.
type requestInfo struct {
	early      bool       // the request arrived before its connection's handshake completed
	addedEarly bool       // the proxy added "Early-Data: 1"
	conn       *quic.Conn // the client's QUIC connection (HTTP/3), for the 425 retry
	retried    bool       // the backend answered 425 and the request was sent again
}

type requestInfoKey struct{}

// quicConnKey is the context key under which http3.Server.ConnContext
// puts the client's *quic.Conn.
type quicConnKey struct{}

// tooEarlyWait bounds how long a request the backend answered with 425
// (Too Early) waits for the client's handshake before the 425 goes back
// to the client.
var tooEarlyWait = 10 * time.Second

// handshakeTimeout, when set, replaces the QUIC handshake timeout's
// default (quic.Config.HandshakeIdleTimeout, 5 s); the tests lengthen it
// for loaded machines, where a handshake the relay holds up can take
// longer.
var handshakeTimeout time.Duration

func newProxy(backend *url.URL, tr http.RoundTripper, maxBuffer, maxBuffered int64, access *accessLog, st *stats, logger *slog.Logger) *proxy {
	p := &proxy{maxBuffer: maxBuffer, buffered: budget{max: maxBuffered}, access: access, stats: st, log: logger}
	p.rp = &httputil.ReverseProxy{
		// ReverseProxy removes the hop-by-hop fields (Connection and the
		// fields it names, Keep-Alive, TE, Trailer, Transfer-Encoding,
		// Upgrade, Proxy-*) and, with Rewrite, the client's Forwarded
		// and X-Forwarded-* fields before Rewrite runs: those the
		// backend sees are the proxy's.
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(backend)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Set("Forwarded", forwarded(pr.In))
			info, _ := pr.In.Context().Value(requestInfoKey{}).(*requestInfo)
			if info != nil && info.early {
				// "An intermediary that forwards a request prior to the
				// completion of the TLS handshake with its client MUST
				// send it with the Early-Data header field set to "1""
				// (RFC 8470, Section 5.1): a client's own field, of
				// whatever value, is replaced, so that a backend that
				// checks for "1" cannot be told "0" by a replayable
				// request. The proxy retries a 425 only if the client
				// sent no Early-Data: "Intermediaries MUST forward a
				// 425 (Too Early) status code if the request that it
				// received and forwarded contained an Early-Data header
				// field." (Section 5.2)
				_, own := pr.In.Header["Early-Data"]
				pr.Out.Header.Set("Early-Data", "1")
				info.addedEarly = !own
			}
		},
		Transport: &tooEarlyRetry{base: tr, stats: st},
		ErrorLog:  slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			st.backendErrors.Add(1)
			logger.Warn("proxy: backend request failed", "method", r.Method, "uri", r.RequestURI, "error", err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return p
}

// forwarded is the Forwarded field value (RFC 7239) for r: the client's
// address, the host it asked for and the scheme.
func forwarded(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	node := host
	if strings.Contains(host, ":") {
		node = `"[` + host + `]"` // an IPv6 address is quoted, in brackets (RFC 7239, Section 6)
	}
	return fmt.Sprintf("for=%s;host=%q;proto=https", node, r.Host)
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	info := &requestInfo{}
	if r.ProtoMajor == 3 && r.TLS != nil && !r.TLS.HandshakeComplete {
		// A request that arrived in 0-RTT: package http3 lets only safe
		// methods through before the handshake (the others get 425).
		info.early = true
		p.stats.early.Add(1)
	}
	info.conn, _ = r.Context().Value(quicConnKey{}).(*quic.Conn)
	rec := &recorder{ResponseWriter: w}
	defer func() {
		p.stats.count(r.Proto, rec.status(), rec.n)
		p.access.write(r, rec.status(), rec.n, time.Since(start), info)
	}()
	// Buffering is bounded in total (-max-buffered): a client opening
	// many streams with large bodies must not make the proxy hold them
	// all. Past the budget, bodies are streamed (and a mismatch aborts
	// the backend's request).
	switch {
	case r.ContentLength > 0 && r.ContentLength <= p.maxBuffer && p.buffered.take(r.ContentLength):
		defer p.buffered.give(r.ContentLength)
		// The whole body is read, and so checked against Content-Length
		// by the server (a body longer or shorter than it is an error of
		// the HTTP/3, HTTP/2 or HTTP/1.1 layer), before the backend sees
		// any of it: a malformed request never reaches it as a complete
		// one.
		b, err := io.ReadAll(r.Body)
		if err != nil || int64(len(b)) != r.ContentLength {
			p.stats.badBodies.Add(1)
			p.log.Debug("proxy: request body does not match its Content-Length", "uri", r.RequestURI, "error", err)
			http.Error(rec, "request body does not match Content-Length", http.StatusBadRequest)
			return
		}
		setBody(r, b)
	case info.early && r.ContentLength < 0 && p.buffered.take(p.maxBuffer):
		defer p.buffered.give(p.maxBuffer)
		// An early request (a safe method) whose length is not known
		// yet, usually empty: read, so that it can be sent again after
		// a 425 from the backend.
		b, err := io.ReadAll(io.LimitReader(r.Body, p.maxBuffer+1))
		if err != nil {
			http.Error(rec, "bad request body", http.StatusBadRequest)
			return
		}
		if int64(len(b)) <= p.maxBuffer {
			r.ContentLength = int64(len(b))
			setBody(r, b)
		} else {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		}
	}
	if r.ContentLength > 0 && r.GetBody == nil {
		// A streamed body of a declared length: the backend gets its
		// last bytes only once the body is known to end there.
		r.Body = &exactBody{ReadCloser: r.Body, left: r.ContentLength, bad: func() { p.stats.badBodies.Add(1) }}
	}
	p.rp.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))
}

// errBodyTooLong fails a streamed request body longer than its
// Content-Length.
var errBodyTooLong = errors.New("proxy: request body longer than its Content-Length")

// exactBody passes a streamed request body on as it arrives, except that
// the read that completes its Content-Length returns only once the body
// is known to end there: "A request or response that is defined as
// having content when it contains a Content-Length header field is
// malformed if the value of the Content-Length header field does not
// equal the sum of the DATA frame lengths received." (RFC 9114, Section
// 4.1.2). The backend's transport stops reading at Content-Length, so
// without this the backend would get a malformed request whole (its
// extra bytes cut off) before the proxy noticed; a failed body makes the
// transport abort the backend's request instead.
type exactBody struct {
	io.ReadCloser
	left int64  // bytes of the declared length not read yet
	err  error  // sticky
	bad  func() // counts a body that does not match
}

func (b *exactBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	switch {
	case b.left == 0 && err == nil:
		// The declared length is complete: the body must end here.
		// The bytes just read are withheld until it does.
		var one [1]byte
		for {
			m, e := b.ReadCloser.Read(one[:])
			switch {
			case m > 0:
				b.err = errBodyTooLong
			case e == io.EOF:
				return n, io.EOF
			case e != nil:
				b.err = e
			default:
				continue
			}
			if b.err == errBodyTooLong {
				b.bad()
			}
			return 0, b.err
		}
	case err == io.EOF && b.left > 0:
		// The HTTP/3 layer reports a short body itself; this is a
		// second guard.
		b.err = io.ErrUnexpectedEOF
		b.bad()
		return n, b.err
	case err != nil && err != io.EOF:
		b.err = err
	}
	return n, err
}

// budget counts bytes against a maximum. Its methods may be called
// concurrently.
type budget struct {
	mu   sync.Mutex
	used int64
	max  int64
}

// take reserves n bytes, or reports false if they would exceed the
// maximum.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes taken.
func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// setBody makes b the request's body, which can be read again (GetBody).
func setBody(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	if len(b) == 0 {
		r.Body, r.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
}

// tooEarlyRetry sends a request again when the backend answered 425 (Too
// Early) to a request the proxy forwarded with "Early-Data: 1", once the
// client's handshake has completed: "A client that receives a 425 (Too
// Early) response ... MAY automatically retry the request after the TLS
// handshake completes" (RFC 8470, Section 5.2) and the request can then
// no longer be a replay. If the handshake does not complete within
// tooEarlyWait, or the client sent Early-Data itself, the 425 goes back
// to the client, who retries.
type tooEarlyRetry struct {
	base  http.RoundTripper
	stats *stats
}

func (t *tooEarlyRetry) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusTooEarly {
		return resp, err
	}
	info, _ := req.Context().Value(requestInfoKey{}).(*requestInfo)
	if info == nil || !info.addedEarly || info.conn == nil || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
		t.stats.tooEarlyReturned.Add(1)
		return resp, nil
	}
	timer := time.NewTimer(tooEarlyWait)
	defer timer.Stop()
	select {
	case <-info.conn.HandshakeComplete():
	case <-info.conn.Context().Done():
		t.stats.tooEarlyReturned.Add(1)
		return resp, nil
	case <-req.Context().Done():
		t.stats.tooEarlyReturned.Add(1)
		return resp, nil
	case <-timer.C:
		t.stats.tooEarlyReturned.Add(1)
		return resp, nil
	}
	resp.Body.Close()
	retry := req.Clone(req.Context())
	retry.Header.Del("Early-Data")
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	info.retried = true
	t.stats.tooEarlyRetried.Add(1)
	return t.base.RoundTrip(retry)
}

// recorder records a response's status and body size.
type recorder struct {
	http.ResponseWriter
	code int
	n    int64
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 && code >= 200 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.n += int64(n)
	return n, err
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// Unwrap lets http.ResponseController reach the server's ResponseWriter
// (Flush, deadlines), which ReverseProxy uses to stream responses.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush is http.Flusher, for ReverseProxy's streaming.
func (r *recorder) Flush() { http.NewResponseController(r.ResponseWriter).Flush() }

// accessLog writes one line per request, in the Combined Log Format
// followed by the time taken, the protocol's 0-RTT status and whether a
// 425 from the backend made the proxy retry:
//
//	127.0.0.1 - - [26/Nov/2026:17:40:00 +0000] "GET /a HTTP/3.0" 200 1234 "-" "curl/8" 5.2ms early=1 retried=0
type accessLog struct {
	l *log.Logger // nil: no access log
}

func (a *accessLog) write(r *http.Request, status int, n int64, d time.Duration, info *requestInfo) {
	if a == nil || a.l == nil {
		return
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a.l.Printf("%s - - [%s] %q %d %d %q %q %s early=%d retried=%d",
		host, time.Now().Format("02/Jan/2006:15:04:05 -0700"), r.Method+" "+r.RequestURI+" "+r.Proto,
		status, n, orDash(r.Referer()), orDash(r.UserAgent()), fmtDuration(d), b2i(info.early), b2i(info.retried))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fmtDuration(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

// errNoBackend is a -backend that is not an http or https URL.
var errNoBackend = errors.New("-backend: want an http:// or https:// URL")
