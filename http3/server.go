package http3

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// NextProtoH3 is the ALPN protocol identifier of HTTP/3 (RFC 9114,
// Section 3.1).
const NextProtoH3 = "h3"

// ErrServerClosed is returned by Serve and ListenAndServe after Close or
// Shutdown.
var ErrServerClosed = errors.New("http3: server closed")

// A Server serves HTTP/3 requests over QUIC connections. Each request runs
// in its own goroutine. The zero value with Handler set (nil means
// http.DefaultServeMux) and TLSConfig set is ready to use. Multiple
// goroutines may invoke methods on a Server simultaneously.
//
// Closing, as with net/http's Server:
//   - Shutdown is graceful. It closes the listeners at once (connections
//     not yet accepted are refused with CONNECTION_REFUSED, which tells
//     their clients nothing was processed) and sends GOAWAY on every
//     connection (RFC 9114, Section 5.2): requests on streams from its ID
//     on are rejected with H3_REQUEST_REJECTED, for the client to retry
//     elsewhere, and the requests below it run to completion. Each
//     connection is closed with H3_NO_ERROR once its requests are done
//     and their responses acknowledged (waiting 5 seconds at most for the
//     acknowledgements), leaving the client a second to close it first.
//     Shutdown returns nil when every connection is closed; if its
//     context ends first, it closes the connections left with
//     H3_NO_ERROR, as Close does, and returns the context's error.
//   - Close is immediate: listeners and connections close with
//     H3_NO_ERROR; handlers still running see their request's context
//     cancelled, their body reads and response writes fail; Close does
//     not wait for them.
//   - After either, Serve, ServeListener, ListenAndServe and
//     ListenAndServeTLS return ErrServerClosed, ServeConn closes the
//     connections it is given, and the quic.Transports the server made
//     are closed (see quic.Transport: closed connections answer their
//     peers for up to 5 seconds). A Listener passed to ServeListener is
//     closed, not its Transport.
//   - IdleTimeout closes an idle connection the way Shutdown does: a
//     GOAWAY first, so that a request racing the close is rejected and
//     retried rather than lost.
type Server struct {
	// Handler handles requests; nil means http.DefaultServeMux.
	Handler http.Handler
	// TLSConfig is the TLS configuration; "h3" is added to a copy's
	// NextProtos if missing.
	TLSConfig *tls.Config
	// QUICConfig configures the QUIC connections of the listeners the
	// server makes (ListenAndServe, ListenAndServeTLS, Serve); nil means
	// quic's defaults, except that MaxIncomingStreams, the number of
	// concurrent requests per connection, defaults to 250 (as net/http's
	// HTTP/2 server allows) rather than 100.
	QUICConfig *quic.Config
	// Addr is the UDP address ListenAndServe and ListenAndServeTLS listen
	// on; empty means ":443".
	Addr string
	// MaxHeaderBytes is the SETTINGS_MAX_FIELD_SECTION_SIZE the server
	// advertises and enforces (RFC 9114, Section 4.2.2); zero means 1 MiB.
	// A request header above it is answered with 431 (Request Header
	// Fields Too Large), and the connection goes on; a trailer section
	// above it resets its request stream with H3_EXCESSIVE_LOAD.
	MaxHeaderBytes int
	// ReadHeaderTimeout is how long a request stream may take, from its
	// first byte, to deliver its header section, including the time the
	// section waits for QPACK encoder instructions it depends on. Past
	// it the stream is reset with H3_REQUEST_REJECTED (the request was
	// not processed; a client may retry it) and the connection goes on.
	// Zero means DefaultReadHeaderTimeout; a negative value means no
	// limit, as with net/http's default.
	ReadHeaderTimeout time.Duration
	// MaxConcurrentHandlers caps the requests served at once across all
	// connections: those reading their header section and those in the
	// Handler (a stream taken over with HTTPStream no longer counts once
	// its handler returns). At the cap a new request stream is reset at
	// once with H3_REQUEST_REJECTED, without being read: "A server
	// rejected a request without performing any application processing"
	// (RFC 9114, Section 8.1), which a client may retry. Zero means no
	// cap, as in net/http; each connection is still limited to
	// QUICConfig.MaxIncomingStreams concurrent requests (250 by default).
	// Each request costs a goroutine and about 10 KiB of buffers while it
	// reads its header, which ReadHeaderTimeout bounds in time.
	MaxConcurrentHandlers int
	// IdleTimeout closes a connection that has had no request in progress
	// for this long, with H3_NO_ERROR; a response still on its way (its
	// handler returned, the client has not acknowledged all of it yet) is
	// in progress, for 5 seconds at most past the timeout. Zero leaves
	// idle connections to the QUIC idle timeout (quic.Config.MaxIdleTimeout).
	IdleTimeout time.Duration
	// EnableExtendedConnect advertises SETTINGS_ENABLE_CONNECT_PROTOCOL
	// (RFC 9220), so that clients may send extended CONNECT requests with
	// a :protocol pseudo-header (see HTTPStreamer).
	EnableExtendedConnect bool
	// EnableDatagrams advertises SETTINGS_H3_DATAGRAM (RFC 9297) and lets
	// request streams carry HTTP datagrams (RequestStream.SendDatagram).
	// It requires QUICConfig.EnableDatagrams; ServeConn and the listen
	// functions set that in the QUIC configuration they make.
	EnableDatagrams bool
	// Extensions, if not nil, adds settings and stream handlers for an
	// HTTP/3 extension such as WebTransport (see Extensions).
	Extensions *Extensions
	// ConnContext, if not nil, derives the context of each connection's
	// requests from ctx, which is done when the connection ends: to add
	// values, as with net/http's Server.ConnContext. It runs in
	// ServeConn before any request of c is read, concurrently for
	// different connections (a slow one delays only its own), and must
	// not return nil.
	// Each request's context is derived from the result and is also done
	// when its request stream ends.
	ConnContext func(ctx context.Context, c *quic.Conn) context.Context
	// Logger, if not nil, receives what an operator needs to know:
	// handler panics at level Error, with the stack and the request, as
	// net/http logs them (a panic with http.ErrAbortHandler is not
	// logged); connections this server closes because the peer broke the
	// protocol, at level Warn with the error code's name
	// (H3_FRAME_UNEXPECTED ...); requests rejected at
	// MaxConcurrentHandlers, at level Warn, at most once a second;
	// failures to accept or start connections at level Error; request
	// streams reset for a malformed request or past ReadHeaderTimeout, at
	// level Debug. nil logs nothing: the package never writes to the
	// global logger (package log or slog.Default). See server_log.go for
	// why *slog.Logger rather than a *log.Logger.
	Logger *slog.Logger
	// AltSvcMaxAge is the freshness lifetime, "ma", that SetQUICHeaders
	// and DualServer advertise in Alt-Svc (RFC 7838, Section 3.1). Zero
	// means 24 hours, Alt-Svc's own default; it is rounded down to
	// whole seconds.
	AltSvcMaxAge time.Duration

	logs     serverLogState
	workers  workerPool   // runs the handlers
	handlers atomic.Int64 // requests being served, for MaxConcurrentHandlers

	mu        sync.Mutex
	listeners map[*quic.Listener]struct{}
	// transports are the Transports of every listener served, kept after
	// the listeners close so that their final statistics can be read.
	transports []*quic.Transport
	conns      map[*serverConn]struct{}
	closed     bool
	connsDone  *sync.Cond

	acceptCtx  context.Context // done when Serve must stop accepting
	stopAccept context.CancelFunc
	cleanups   []func() // close the Transports the server made
}

func (s *Server) init() {
	if s.listeners == nil {
		s.listeners = make(map[*quic.Listener]struct{})
		s.conns = make(map[*serverConn]struct{})
		s.connsDone = sync.NewCond(&s.mu)
		s.acceptCtx, s.stopAccept = context.WithCancel(context.Background())
	}
}

// tlsConfig returns a copy of TLSConfig with "h3" in NextProtos.
func (s *Server) tlsConfig() *tls.Config {
	c := &tls.Config{}
	if s.TLSConfig != nil {
		c = s.TLSConfig.Clone()
	}
	if !slices.Contains(c.NextProtos, NextProtoH3) {
		c.NextProtos = append([]string{NextProtoH3}, c.NextProtos...)
	}
	return c
}

// ServeListener accepts connections from l and serves each in its own
// goroutine until Close or Shutdown, which close l, and then returns
// ErrServerClosed. l's TLS configuration must offer the "h3" protocol. A
// listener made with quic.Transport.ListenEarly lets requests sent in
// 0-RTT be served before the handshake completes (see
// Stream.ReceivedEarlyData in package quic for the replay caveat).
func (s *Server) ServeListener(l *quic.Listener) error {
	s.mu.Lock()
	s.init()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	if t := l.Transport(); !slices.Contains(s.transports, t) {
		s.transports = append(s.transports, t)
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	for {
		qc, err := l.Accept(s.acceptCtx)
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			if s.Logger != nil {
				s.Logger.Error("http3: accepting connections failed", "error", err)
			}
			return err
		}
		go s.ServeConn(qc)
	}
}

// Transports returns the QUIC Transports of the listeners the server
// serves or has served, in the order it started serving them: those
// ListenAndServe, ListenAndServeTLS and Serve make, and those of the
// listeners given to ServeListener. Connections given to ServeConn alone
// are not included. It is safe to call from any goroutine, also after
// Close or Shutdown.
func (s *Server) Transports() []*quic.Transport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.transports)
}

// Stats returns the sum of the statistics of Transports() (see
// quic.TransportStats): handshakes, their durations and outcomes,
// versions and cipher suites, 0-RTT and resumption, open connections and
// streams, losses and drops. It is safe to call from any goroutine.
func (s *Server) Stats() quic.TransportStats {
	var st quic.TransportStats
	for _, t := range s.Transports() {
		st.Add(t.Stats())
	}
	return st
}

// ServeConn serves HTTP/3 on an established QUIC connection whose ALPN
// protocol is "h3", returning when the connection ends.
func (s *Server) ServeConn(qc *quic.Conn) {
	// ConnContext runs before the server's lock is taken: a slow one
	// holds up only its own connection, not the others nor Close.
	var ctx context.Context
	if s.ConnContext != nil {
		if ctx = s.ConnContext(qc.Context(), qc); ctx == nil {
			panic("http3: ConnContext returned nil")
		}
	}
	s.mu.Lock()
	s.init()
	if s.closed {
		s.mu.Unlock()
		qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "server closed")
		return
	}
	maxHeader := uint64(0)
	if s.MaxHeaderBytes > 0 {
		maxHeader = uint64(s.MaxHeaderBytes)
	}
	sc := &serverConn{srv: s, connection: newConnection(qc, true, maxHeader)}
	sc.prio = &serverPriorities{}
	sc.log = s.Logger
	sc.ctx = ctx
	sc.ours.EnableConnectProtocol = s.EnableExtendedConnect
	sc.ours.H3Datagram = s.EnableDatagrams && datagramsNegotiated(qc)
	s.Extensions.apply(sc.connection)
	sc.idle = sync.NewCond(&sc.mu)
	s.conns[sc] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, sc)
		s.connsDone.Broadcast()
		s.mu.Unlock()
	}()
	if err := sc.start(); err != nil {
		if qc.Context().Err() == nil {
			sc.logf(slog.LevelError, "http3: cannot open the control streams", slog.Any("error", err))
		}
		qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeInternalError), "cannot open control streams")
		return
	}
	sc.mu.Lock()
	sc.startIdleTimer()
	sc.mu.Unlock()
	sc.serve()
	sc.mu.Lock()
	sc.stopIdleTimer()
	sc.mu.Unlock()
}

// Close closes the listeners and all connections immediately, with
// H3_NO_ERROR, and returns once each connection has sent its
// CONNECTION_CLOSE; it does not wait for the handlers (see Server).
func (s *Server) Close() error {
	s.mu.Lock()
	s.init()
	s.closed = true
	s.stopAccept()
	ls := make([]*quic.Listener, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		l.Close()
	}
	s.closeConns()
	s.runCleanups()
	s.workers.stop()
	return nil
}

// closeConns closes every connection at once with H3_NO_ERROR.
func (s *Server) closeConns() {
	s.mu.Lock()
	cs := make([]*serverConn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	for _, c := range cs {
		c.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "server closed")
	}
}

// runCleanups closes the Transports the server made.
func (s *Server) runCleanups() {
	s.mu.Lock()
	fns := s.cleanups
	s.cleanups = nil
	s.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Shutdown shuts the server down gracefully, as net/http's
// Server.Shutdown does: GOAWAY, the requests accepted finish, then each
// connection closes (see Server). It returns nil once every connection is
// closed, or, if ctx ends first, closes those left and returns ctx's
// error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.init()
	s.closed = true
	ls := make([]*quic.Listener, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	cs := make([]*serverConn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.stopAccept()
	s.mu.Unlock()
	// New connections are refused at once; a Listener keeps the
	// connections it accepted when it closes. The Transports the server
	// made close once the connections are done.
	for _, l := range ls {
		l.Close()
	}
	defer s.runCleanups()
	for _, c := range cs {
		go c.shutdown()
	}
	done := make(chan struct{})
	go func() {
		s.mu.Lock()
		for len(s.conns) > 0 {
			s.connsDone.Wait()
		}
		s.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		s.workers.stop()
		return nil
	case <-ctx.Done():
		s.closeConns()
		s.workers.stop()
		return ctx.Err()
	}
}

// serverConn is the server side of one HTTP/3 connection.
type serverConn struct {
	*connection
	srv *Server
	ctx context.Context // from Server.ConnContext; nil without one

	mu       sync.Mutex
	idle     *sync.Cond
	active   int
	lastID   quic.StreamID
	accepted bool
	goaway   bool
	goawayID quic.StreamID
	idleT    *time.Timer // Server.IdleTimeout
	// idleWaited is set once an idle expiry waited for the responses in
	// flight (idleTimeout); a new request clears it.
	idleWaited bool
	// remote is the peer's address last seen and remoteStr its
	// String(), for Request.RemoteAddr.
	remote    net.Addr
	remoteStr string
}

// serve accepts request streams until the connection ends. "Clients MUST
// treat receipt of a server-initiated bidirectional stream as a connection
// error" does not concern servers: every bidirectional stream is a request.
func (sc *serverConn) serve() {
	ctx := sc.qc.Context()
	for {
		str, err := sc.qc.AcceptStream(ctx)
		if err != nil {
			return
		}
		sc.prio.accepted(str)
		sc.mu.Lock()
		if sc.goaway && str.StreamID() >= sc.goawayID {
			sc.mu.Unlock()
			// "Requests on stream IDs greater than or equal to the ID in
			// the GOAWAY frame ... The server SHOULD ... reset with
			// H3_REQUEST_REJECTED" (Section 5.2).
			sc.resetStream(str, ErrCodeRequestRejected)
			continue
		}
		if !sc.srv.acquireHandler() {
			sc.mu.Unlock()
			sc.srv.logRejected()
			sc.resetStream(str, ErrCodeRequestRejected)
			continue
		}
		sc.active++
		sc.idleWaited = false
		sc.lastID, sc.accepted = str.StreamID(), true
		sc.stopIdleTimer()
		sc.mu.Unlock()
		sc.srv.workers.run(job{sc, str})
	}
}

// requestDone uncounts a request whose handler returned. Its response may
// still be in flight: closeAfterGoaway waits for the acknowledgements.
func (sc *serverConn) requestDone() {
	sc.mu.Lock()
	sc.active--
	sc.idle.Broadcast()
	if sc.active == 0 {
		sc.startIdleTimer()
	}
	sc.mu.Unlock()
}

// shutdown sends GOAWAY with the first stream ID not accepted, waits for
// the requests in flight, and closes the connection.
func (sc *serverConn) shutdown() {
	sc.mu.Lock()
	first := !sc.goaway
	if first {
		sc.goaway = true
		if sc.accepted {
			sc.goawayID = sc.lastID + 4
		}
	}
	id := sc.goawayID
	sc.mu.Unlock()
	sc.closeAfterGoaway(id, first)
}

// closeAfterGoaway closes the connection gracefully (RFC 9114, Section
// 5.2): it sends GOAWAY with id (if send), lets the requests below id
// finish and their responses (and the GOAWAY) arrive, and closes the
// connection with H3_NO_ERROR, leaving the client a moment to close it
// first. The requests from id on are rejected (serve) and the client
// retries them elsewhere.
func (sc *serverConn) closeAfterGoaway(id quic.StreamID, send bool) {
	if send {
		sc.writeControl(appendIDFrame(nil, frameGoaway, uint64(id)))
	}
	stop := context.AfterFunc(sc.qc.Context(), func() {
		sc.mu.Lock()
		sc.idle.Broadcast()
		sc.mu.Unlock()
	})
	defer stop()
	sc.mu.Lock()
	for sc.active > 0 && sc.qc.Context().Err() == nil {
		sc.idle.Wait()
	}
	sc.mu.Unlock()
	// The responses and the GOAWAY are written; wait until they arrived
	// before the CONNECTION_CLOSE, which would discard what is still in
	// flight.
	ctx, cancel := context.WithTimeout(context.Background(), shutdownDrainTimeout)
	sc.qc.WaitAcked(ctx)
	cancel()
	// "Once all accepted requests have been processed, the server can
	// permit the connection to become idle, or it MAY initiate an
	// immediate closure of the connection" (RFC 9114, Section 5.2). A
	// client that got GOAWAY closes the connection itself once its
	// responses are read (ours does); closing first could still cut off
	// a response that arrived but that the client has not read yet.
	t := time.NewTimer(shutdownPeerCloseWait)
	select {
	case <-sc.qc.Context().Done():
	case <-t.C:
	}
	t.Stop()
	sc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "shutdown")
}

// shutdownPeerCloseWait is how long Shutdown leaves a connection whose
// responses were all acknowledged for the client to close, before it
// closes it.
const shutdownPeerCloseWait = time.Second

// shutdownDrainTimeout bounds how long Shutdown waits for the peer to
// acknowledge the last responses of a connection before closing it.
const shutdownDrainTimeout = 5 * time.Second

// handleRequest serves one request stream (RFC 9114, Section 4.1).
func (sc *serverConn) handleRequest(str *quic.Stream) {
	defer sc.srv.handlers.Add(-1) // counted by acquireHandler
	ctx, cancel := sc.requestContext(str)
	defer cancel()
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(str)
	pooled := true
	var rb *body
	defer func() {
		// The buffer goes back to the pool only if no Read of the closed
		// body is in progress (a handler's goroutine that outlived it);
		// a later Read sees the body closed before touching br.
		if pooled && (rb == nil || rb.rmu.TryLock()) {
			br.Reset(nil)
			readerPool.Put(br)
		}
	}()
	if sc.offerBidiStream(str, br) {
		return
	}
	fields, ok := sc.readRequestHeader(ctx, str, br)
	if !ok {
		return
	}
	ended := probeEnd(str, br)
	req, err := sc.newRequest(ctx, str, br, fields)
	if err != nil {
		sc.logf(slog.LevelDebug, "http3: malformed request", slog.Int64("stream", int64(str.StreamID())), slog.Any("error", err))
		sc.streamFailed(str, err, ErrCodeMessageError)
		return
	}
	rb = req.Body.(*body)
	rb.ended = ended
	if str.ReceivedEarlyData() && !isSafeMethod(req.Method) {
		// Replayable 0-RTT data must not trigger unsafe methods: "425
		// (Too Early) indicates that the server is unwilling to risk
		// processing a request that might be replayed" (RFC 8470,
		// Section 5.2). The client retries after the handshake.
		req.Body.Close()
		sc.respondError(str, http.StatusTooEarly)
		return
	}
	w := newResponseWriter(sc, str, req)
	defer w.release()
	// The response goes at the priority the request asks for, until a
	// PRIORITY_UPDATE or the handler's Priority field changes it, for as
	// long as the stream sends (its data may outlive the handler).
	w.prio = sc.prio.open(str, req.Header)
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		// As net/http does: "100 (Continue) ... indicates that the initial
		// part of a request has been received" (RFC 9110, Section 15.2.1),
		// sent when the handler starts reading the content.
		rb.onFirstRead = w.sendContinue
	}
	if sc.ours.H3Datagram && req.Method == http.MethodConnect && req.Header[":protocol"] != nil {
		w.dgq = sc.registerDatagrams(str)
	}
	handler := sc.srv.Handler
	if handler == nil {
		handler = http.DefaultServeMux
	}
	defer func() {
		if p := recover(); p != nil {
			// A panic resets only this request stream and is logged to
			// Server.Logger, if set (never to the global logger).
			sc.logPanic(req, str, p)
			w.streamed = true // keep the pooled buffers away from a racing writer
			pooled = false
			sc.resetStream(str, ErrCodeInternalError)
			req.Body.Close()
		}
	}()
	handler.ServeHTTP(w, req)
	w.finish()
	if !w.streamed {
		rb.Close() // even if the handler replaced req.Body
	} else {
		pooled = false // the RequestStream reads through br
	}
}

// readerPool holds the request streams' read buffers. Reads larger than
// the buffer bypass it.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// isSafeMethod reports the methods whose requests may be answered when
// they arrive in 0-RTT (RFC 9110, Section 9.2.1).
func isSafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// streamFailed handles an error while reading a request's header: a
// connection error closes the connection, a stream error resets the
// stream, and anything else (the stream was reset) abandons it with code.
func (sc *serverConn) streamFailed(str *quic.Stream, err error, code ErrCode) {
	var he *Error
	if errors.As(err, &he) {
		if !he.Stream {
			sc.fail(err)
			return
		}
		code = he.Code
	} else {
		sc.fail(err)
	}
	sc.resetStream(str, code)
}

// respondError sends a bodiless response with status code and ends the
// stream.
func (sc *serverConn) respondError(str *quic.Stream, code int) {
	b, err := sc.encodeHeaders(str.StreamID(), []qpack.HeaderField{{Name: ":status", Value: strconv.Itoa(code)}})
	if err == nil {
		str.Write(b)
	}
	str.CloseWrite()
	sc.stopReading(str, ErrCodeNoError)
}

// probeEnd checks, without blocking, whether the request stream already
// ended after its header, as a GET's usually has, and if so reads the end
// of the stream. The QUIC stream then counts the receiving direction as
// finished, so that the request's context is cancelled as soon as the
// client stops the response (STOP_SENDING) rather than when the handler
// happens to read the empty body. It reports whether the stream ended.
func probeEnd(str *quic.Stream, br *bufio.Reader) bool {
	if br.Buffered() > 0 {
		return false
	}
	str.SetReadDeadline(time.Unix(1, 0))
	_, err := br.Peek(1) // io.EOF, a deadline error, or data left in br
	str.SetReadDeadline(time.Time{})
	return err == io.EOF
}
