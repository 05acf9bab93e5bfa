package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/quicstack/quic"
)

// A Transport is an http.RoundTripper for HTTP/3 ("https" URLs). It keeps
// one QUIC connection per authority (host:port), used for concurrent
// requests and dialed again once closed or after the server's GOAWAY.
// The zero value is ready to use. Multiple goroutines may invoke methods
// on a Transport simultaneously.
//
// Requests share the dial of their authority's connection, which runs
// until it completes or every request waiting for it gave up (their
// contexts ended): one request's deadline does not fail the others.
//
// A request the server did not process is sent again on a new connection
// (RFC 9114, Section 5.2), up to 6 times: one the server rejected
// (H3_REQUEST_REJECTED), one on a stream its GOAWAY excludes (cancelled
// and retried as soon as the GOAWAY arrives, without waiting for the
// server to reset it), and one on a connection the server refused
// (CONNECTION_REFUSED, as a closing quic.Listener does). A request whose
// body was partly sent is retried only if it has GetBody.
//
// Connections close:
//   - when idle: CloseIdleConnections, or IdleConnTimeout, closes the
//     connections that have no request in progress; a request in
//     progress counts from the moment RoundTrip takes the connection, so
//     neither ever closes a connection under a request;
//   - after the server's GOAWAY, once their requests are done;
//   - with Close, which cancels the dials in progress, closes every
//     connection with H3_NO_ERROR and returns once each has sent its
//     CONNECTION_CLOSE, without waiting for the peers. RoundTrip calls in
//     progress and response bodies being read fail with the connection's
//     error (one wrapping a *quic.ApplicationError of code H3_NO_ERROR);
//     those waiting for a dial, and later ones, with ErrTransportClosed. The sockets of
//     the connections are released in the background after their closing
//     periods, 5 seconds at most; with Allow0RTT, Close closes the
//     Transport's own quic.Transport, waiting that long at most.
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
	// NextProtos and ServerName set, and conf is QUICConfig. ctx is
	// cancelled when no request waits for the dial any more or the
	// Transport closes, and Dial must then return. With
	// Allow0RTT, Dial should return an early connection
	// (quic.Transport.DialEarly) for requests to go out in 0-RTT.
	Dial func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error)
	// Extensions, if not nil, adds settings and stream handlers for an
	// HTTP/3 extension such as WebTransport (see Extensions).
	Extensions *Extensions

	mu       sync.Mutex
	conns    map[string]*dialCall     // by authority: the connection requests use (client_dial.go)
	dials    map[*dialCall]struct{}   // dials in progress, for Close
	all      map[*clientConn]struct{} // every open connection
	closed   bool
	qtr      *quic.Transport // the socket of 0-RTT dials
	sessions tls.ClientSessionCache
}

var _ http.RoundTripper = (*Transport)(nil)

// maxRetries bounds how many times RoundTrip sends a request again that
// the server did not process: rejected (H3_REQUEST_REJECTED), excluded by
// a GOAWAY, or on a connection the server refused. Each goes on a new
// connection; a server that keeps closing its connections (a short
// Server.IdleTimeout on a loaded machine) may need several. net/http's
// HTTP/2 transport allows as many.
const maxRetries = 6

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
		cc, err := t.getConn(req, authority, req.URL.Hostname())
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := cc.roundTrip(req, attempt < 3)
		cc.unreserve(req) // if roundTrip failed before it started the request
		// A request the server rejected or that the GOAWAY excluded was
		// not processed and can be retried on a new connection (RFC 9114,
		// Section 5.2), if its body can be replayed.
		var retry *retryableError
		if errors.As(err, &retry) && attempt < maxRetries && (retry.unsent || req.Body == nil || req.Body == http.NoBody || req.GetBody != nil) {
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

// Close closes the Transport: it cancels the dials in progress and closes
// every connection with H3_NO_ERROR (see Transport for the requests in
// progress). Dial, if set, must return once its context is cancelled.
// Close returns nil and may be called more than once.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	t.conns = nil
	dials := make([]*dialCall, 0, len(t.dials))
	for call := range t.dials {
		dials = append(dials, call)
		call.cancel()
	}
	t.mu.Unlock()
	// A dial returns as soon as its context is cancelled (Dial must
	// honour it); one that made a connection meanwhile closes it.
	for _, call := range dials {
		<-call.done
	}
	t.mu.Lock()
	all := make([]*clientConn, 0, len(t.all))
	for cc := range t.all {
		all = append(all, cc)
	}
	qtr := t.qtr
	t.qtr = nil
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
	active   int    // requests in progress, reserved ones included
	finished uint64 // requests done so far
	retired  bool   // no new requests: closes once active is 0
	idleT    *time.Timer
	// reserved counts, by request, the times getConn gave the connection
	// to a request that has not started on it yet (counted in active).
	reserved map[*http.Request]int
	// awaiting are the request streams waiting for their response
	// header, which a GOAWAY may exclude (goawayReceived).
	awaiting map[*quic.Stream]struct{}
}

// reserve counts req as a request in progress on the connection, unless
// the connection takes no new requests: it closed, the server sent GOAWAY
// ("Endpoints MUST NOT initiate new requests ... after receipt of a
// GOAWAY frame from the peer", RFC 9114, Section 5.2) or it was retired.
func (cc *clientConn) reserve(req *http.Request) bool {
	if cc.qc.Context().Err() != nil {
		return false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.goawayRecv || cc.retired {
		return false
	}
	if cc.reserved == nil {
		cc.reserved = make(map[*http.Request]int)
	}
	cc.reserved[req]++
	cc.active++
	cc.stopIdleTimer()
	return true
}

// unreserve gives up a reservation for req if the request did not start.
func (cc *clientConn) unreserve(req *http.Request) {
	cc.mu.Lock()
	ok := cc.takeReservation(req)
	cc.mu.Unlock()
	if ok {
		cc.requestEnd(false)
	}
}

// takeReservation removes a reservation for req, if there is one, and
// reports whether there was. cc.mu held.
func (cc *clientConn) takeReservation(req *http.Request) bool {
	n, ok := cc.reserved[req]
	switch {
	case !ok:
		return false
	case n == 1:
		delete(cc.reserved, req)
	default:
		cc.reserved[req] = n - 1
	}
	return true
}

// requestStarted counts req, about to open its stream, as in progress:
// its reservation becomes the request, or it is counted now.
func (cc *clientConn) requestStarted(req *http.Request) {
	cc.mu.Lock()
	if !cc.takeReservation(req) {
		cc.active++
		cc.stopIdleTimer()
	}
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
// to a new connection, and so do those the GOAWAY excludes
// (cancelExcluded); this one closes once its requests finish, which a
// server waiting in a graceful shutdown needs: "Once all accepted requests
// have been processed, the server can permit the connection to become
// idle, or it MAY initiate an immediate closure" (RFC 9114, Section 5.2),
// and a client that stops using a connection can close it at once.
func (cc *clientConn) goawayReceived(id uint64) {
	cc.cancelExcluded(id)
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
