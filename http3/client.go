package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quicstack/quic"
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
	// client advertises and enforces (RFC 9114, Section 4.2.2): a larger
	// response header fails the request. Zero means 1 MiB.
	MaxResponseHeaderBytes int64
	// DisableCompression, if true, stops the Transport from asking for
	// gzip. Otherwise, as in net/http, a request without Accept-Encoding
	// (and without Range, and not HEAD) is sent with "Accept-Encoding:
	// gzip" and a gzip response is decompressed transparently: its
	// Content-Encoding and Content-Length are removed and
	// Response.Uncompressed is set.
	DisableCompression bool
	// IdleConnTimeout closes a connection that has had no request in
	// progress for this long. Zero means no limit beyond the QUIC idle
	// timeout (quic.Config.MaxIdleTimeout).
	IdleConnTimeout time.Duration
	// Allow0RTT lets GET and HEAD requests go out in 0-RTT packets, one
	// round trip earlier, on connections that resume an earlier session
	// with a server that allows 0-RTT (RFC 9001, Section 4.6; RFC 9114,
	// Section 3.3). Other methods wait for the handshake, since 0-RTT data
	// can be replayed. Sessions are kept in TLSClientConfig's
	// ClientSessionCache, or in a cache of the Transport's own if that is
	// nil. A request the server answers with 425 (Too Early) is sent again
	// after the handshake. The Transport then dials from one UDP socket of
	// its own.
	Allow0RTT bool
	// ExpectContinueTimeout, if positive, is how long a request with
	// "Expect: 100-continue" and a body waits for the server's 100
	// (Continue) before sending the body anyway; a final response that
	// comes first means the body is not sent. Zero sends the body at once,
	// as net/http does.
	ExpectContinueTimeout time.Duration
	// EnableDatagrams advertises SETTINGS_H3_DATAGRAM (RFC 9297) and
	// enables QUIC datagrams, so that the request streams of
	// OpenRequestStream can carry HTTP datagrams.
	EnableDatagrams bool
	// Dial, if not nil, makes the Transport's QUIC connections, in place
	// of quic.DialAddr (or, with Allow0RTT, DialEarly from a socket of
	// the Transport's own): to dial from a quic.Transport of your own
	// (its socket, its options such as DisableGSO), to another address
	// than the authority's, and so on. addr is the request's authority
	// (host:port); tlsConf is a copy of TLSClientConfig with "h3" in
	// NextProtos and ServerName set, and conf is QUICConfig. With
	// Allow0RTT, Dial should return an early connection
	// (quic.Transport.DialEarly) for requests to go out in 0-RTT.
	Dial func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error)

	mu       sync.Mutex
	conns    map[string]*dialCall
	all      map[*clientConn]struct{} // every open connection
	closed   bool
	qtr      *quic.Transport // the socket of 0-RTT dials
	sessions tls.ClientSessionCache
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
// streams the response content. Cancelling the request's context resets
// the request stream with H3_REQUEST_CANCELLED.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "https" || req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("http3: request URL must be https with a host")
	}
	if err := checkHeader(req.Header); err != nil {
		closeBody(req)
		return nil, err
	}
	authority := authorityOf(req)
	for attempt := 0; ; attempt++ {
		cc, err := t.getConn(req.Context(), authority, req.URL.Hostname())
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := cc.roundTrip(req, attempt < 3)
		// A request the server rejected or that the GOAWAY excluded was
		// not processed and can be retried on a new connection (RFC 9114,
		// Section 5.2), if its body can be replayed.
		var retry *retryableError
		if errors.As(err, &retry) && attempt < 3 && (retry.unsent || req.Body == nil || req.Body == http.NoBody || req.GetBody != nil) {
			if !retry.unsent && req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
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

// authorityOf returns the host:port a request goes to.
func authorityOf(req *http.Request) string {
	authority := req.URL.Host
	if _, port, err := net.SplitHostPort(authority); err != nil || port == "" {
		authority = net.JoinHostPort(strings.Trim(req.URL.Hostname(), "[]"), "443")
	}
	return authority
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
			if call.err == nil {
				call.cc.retire()
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
	var qc *quic.Conn
	var err error
	if t.Dial != nil {
		if t.Allow0RTT && tc.ClientSessionCache == nil {
			tc.ClientSessionCache = t.sessionCache()
		}
		qc, err = t.Dial(ctx, authority, tc, t.quicConfig())
	} else if t.Allow0RTT {
		qc, err = t.dialEarly(ctx, authority, tc)
	} else {
		qc, err = quic.DialAddr(ctx, authority, tc, t.quicConfig())
	}
	if err != nil {
		return nil, err
	}
	cc := &clientConn{connection: newConnection(qc, false, uint64(max(t.MaxResponseHeaderBytes, 0))), t: t}
	cc.ours.H3Datagram = t.EnableDatagrams && datagramsNegotiated(qc)
	cc.onGoaway = cc.goawayReceived
	if err := cc.start(); err != nil {
		qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeInternalError), "cannot open control streams")
		return nil, err
	}
	t.mu.Lock()
	if t.all == nil {
		t.all = make(map[*clientConn]struct{})
	}
	t.all[cc] = struct{}{}
	t.mu.Unlock()
	go func() {
		<-qc.Context().Done()
		t.mu.Lock()
		delete(t.all, cc)
		t.mu.Unlock()
		cc.mu.Lock()
		cc.stopIdleTimer()
		cc.mu.Unlock()
	}()
	go cc.refuseBidiStreams()
	cc.mu.Lock()
	cc.startIdleTimer()
	cc.mu.Unlock()
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
	}
	t.mu.Lock()
	all := make([]*clientConn, 0, len(t.all))
	for cc := range t.all {
		all = append(all, cc)
	}
	qtr := t.qtr
	t.mu.Unlock()
	for _, cc := range all {
		cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
	}
	if qtr != nil {
		qtr.Close()
		qtr.Conn.Close() // the Transport's own socket
	}
	return nil
}

// clientConn is the client side of one HTTP/3 connection.
type clientConn struct {
	*connection
	t *Transport
	// Guarded by connection.mu:
	active   int    // requests in progress
	finished uint64 // requests done so far
	retired  bool   // no new requests: closes once active is 0
	idleT    *time.Timer
}

// requestStarted counts a request whose stream was opened.
func (cc *clientConn) requestStarted() {
	cc.mu.Lock()
	cc.active++
	cc.stopIdleTimer()
	cc.mu.Unlock()
}

// requestDone uncounts a request, when it failed or its response body was
// closed, and closes a connection the server sent GOAWAY on once nothing
// is left on it.
func (cc *clientConn) requestDone() { cc.requestEnd(true) }

// requestEnd uncounts a request; opened tells whether it had a stream
// (and so counts as finished for waitStream).
func (cc *clientConn) requestEnd(opened bool) {
	cc.mu.Lock()
	cc.active--
	if opened {
		cc.finished++
	}
	idle := cc.active == 0 && (cc.goawayRecv || cc.retired)
	if cc.active == 0 {
		cc.startIdleTimer()
	}
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
	return !cc.goawayRecv && !cc.retired
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

// retryableError marks a request the server did not process; unsent
// means nothing of it was sent, so even its body can be used again.
type retryableError struct {
	err    error
	unsent bool
}

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

// quicConfig returns QUICConfig, with datagrams enabled if
// EnableDatagrams asks for them.
func (t *Transport) quicConfig() *quic.Config {
	if !t.EnableDatagrams {
		return t.QUICConfig
	}
	c := &quic.Config{}
	if t.QUICConfig != nil {
		*c = *t.QUICConfig
	}
	c.EnableDatagrams = true
	return c
}
