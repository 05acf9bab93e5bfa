package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// A Conn is a QUIC connection. One goroutine, started when the connection
// is created, owns all of its protocol state: it reads the datagrams the
// Transport routes to it, runs its timers and sends its packets. While the
// connection is idle the goroutine exits, and the next datagram, timer or
// application call starts another (conn_driver_park.go); there is never more
// than one.
// Application goroutines reach it only through streams, datagram queues
// and the methods below. Multiple goroutines may invoke methods on a Conn
// simultaneously.
//
// A connection ends when CloseWithError is called, the peer closes it, it
// is idle for its idle timeout, its handshake times out, the peer resets
// it, or its Transport closes (with an application close of code 0). From
// then on every call in progress and every later one on the Conn and its
// streams (AcceptStream, AcceptUniStream, OpenStreamSync,
// OpenUniStreamSync, ReceiveDatagram, WaitAcked, and the streams' Read and
// Write) returns the connection's error at once: an *ApplicationError or a
// *TransportError (Remote tells which side closed), an *IdleTimeoutError,
// a *HandshakeTimeoutError or a *StatelessResetError, the cause of
// Context too. A Read first returns the data that arrived before. What
// was written and not yet acknowledged is discarded with the connection
// ("an endpoint that sends a CONNECTION_CLOSE frame ... [discards] stream
// data not yet delivered", RFC 9000, Section 10.2): WaitAcked first to deliver
// it. CloseWithError returns once the CONNECTION_CLOSE is sent, and at
// once if the connection already ended; only the first close counts.
type Conn struct {
	t      *Transport
	remote net.Addr
	config *Config
	state  *connState // owned by the run goroutine
	// resetTokens are the peer's stateless reset tokens registered with
	// the Transport (reset_tokens.go); run goroutine only.
	resetTokens []wire.StatelessResetToken

	inbound inboundQueue
	drain   drainState // Conn.WaitAcked
	wakeCh  chan struct{}
	// srcAddr is the address the peer's datagrams were last sent to, where
	// a server's replies leave from on a wildcard socket (run goroutine
	// only).
	srcAddr netip.Addr

	handshakeDone chan struct{}
	early         earlyState // conn_early_state.go
	ctx           context.Context
	cancel        context.CancelCauseFunc
	done          chan struct{} // closed when the run goroutine exits

	// mu guards what application goroutines may read of the state.
	mu        sync.Mutex
	snapshot  connSnapshot
	closeErr  error
	dropped   uint64 // datagrams dropped because inbound was full
	handshook bool
	// firstDstConnID, on a server, is the Destination Connection ID of
	// the client's first Initial, routed to this connection until it ends.
	firstDstConnID wire.ConnectionID
	// listener, on a server whose handshake is in progress, is told when
	// it completes or fails (Listener.handshakeComplete), and for
	// ListenEarly when its ClientHello was processed
	// (Listener.earlyReady); run goroutine only.
	listener *Listener
	// origin, on a server, is the listener that started the connection;
	// a handshake that fails counts toward its Retry decision
	// (listener_retry.go).
	origin *Listener

	// Paths (conn_driver_migrate.go): more Transports that route the
	// connection's IDs, migration requests, the peer's address as last
	// sent to, and the addresses LocalAddr and RemoteAddr report (local
	// and remote are guarded by mu once the connection runs).
	extra         []*Transport
	sendTo        netip.AddrPort
	sendToAddr    net.Addr
	publishedPath pathAddrs
	publishedOK   bool // publishedPath was validated
	local         net.Addr
	started       time.Time // when the connection started, for statistics
	appTracer     any       // the Tracer's Application field, set before the connection runs
	bulk          bool      // the last flush filled a small batch (run goroutine only)

	// Parking (conn_driver_park.go): parked is set while no goroutine runs;
	// parkTimer wakes the connection at its next deadline meanwhile;
	// closingSeen records that the Transport's closing was handled (run
	// goroutine only).
	parked      atomic.Bool
	parkTimer   *time.Timer
	parkAlarm   *parkAlarm // what parkTimer calls
	closingSeen bool
	// closedRec is what is left of the connection once its goroutine
	// ended in the closing or draining state (closed_conn.go), set before
	// its queue closes.
	closedRec atomic.Pointer[closedConn]

	// Requests of application goroutines to the run goroutine, guarded by
	// mu: a close (the first one asked for) and migrations. hasRequest is
	// set with them, so that the run loop looks only then.
	closeReq    closeRequest
	closeWanted bool
	migrateReqs []migrateRequest
	hasRequest  atomic.Bool
	// loopFns are functions to run on the run goroutine, guarded by mu
	// (Conn.onLoop); follow follows the network (conn_driver_follow.go), nil
	// without Config.FollowNetwork.
	loopFns []func()
	follow  *follower
}

// inboundDatagram is a datagram routed to a connection, or with GRO a run
// of datagrams of segSize bytes each (the last may be shorter).
type inboundDatagram struct {
	data    []byte
	buf     *[]byte // pooled storage to return, or nil
	ecn     ackhandler.ECNMark
	segSize uint16         // 0: one datagram
	addr    netip.AddrPort // the sender, if known as a UDP address
	dst     netip.Addr     // the local address it was sent to, if known
	// addrs are the Transport's local address and the peer's, as paths
	// know them.
	addrs pathAddrs
}

type closeRequest struct {
	code   ApplicationErrorCode
	reason string
	// refuse closes with the transport error CONNECTION_REFUSED rather
	// than an application close (Listener.Close, for connections never
	// accepted).
	refuse bool
}

func newConn(t *Transport, remote net.Addr, cfg *Config) *Conn {
	c := &Conn{
		t: t, remote: remote, config: cfg,
		wakeCh:        make(chan struct{}, 1),
		handshakeDone: make(chan struct{}),
		early:         earlyState{ready: make(chan struct{})},
		done:          make(chan struct{}),
		local:         t.Conn.LocalAddr(),
	}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	c.sendTo, c.sendToAddr = unmappedAddrPort(remote), remote // keeps the caller's net.Addr type
	return c
}

// start runs the connection's goroutine around its state machine. The
// Transport tracks c already (Transport.trackConn).
func (c *Conn) start(st *connState) {
	c.state = st
	st.streams.wake = c.wake
	st.handshakeCompleted = c.publishHandshake
	c.started = time.Now()
	c.t.stats.handshakesStarted.Add(1)
	c.t.conns.Add(1)
	st.traceStart(c)
	// The IDs the endpoint routed for the connection (endpoint.newConnID)
	// route in its other Transports too, and those it generated itself
	// are routed before it sends anything.
	for _, t := range c.extra {
		st.localIDs.each(func(cid ConnectionID) { t.ep.routes.add(cid, c) })
	}
	c.routeConnIDs(time.Now())
	if st.role == wire.RoleClient && c.config.FollowNetwork {
		c.startFollowing()
	}
	c.t.runConn(c)
}

// run is the connection's goroutine: it processes what arrived, sends
// what is due and waits, until the connection is closed, or until it is
// idle and parks (conn_driver_park.go); a wake then runs it again. It waits on
// timer, which belongs to the runner (conn_driver_runner.go), and stops it before
// returning.
func (c *Conn) run(timer *time.Timer) {
	st := c.state
	c.stopParkTimer()
	defer timer.Stop()
	for {
		// The Transport closing: Transport.shutdown wakes every
		// connection rather than each loop waiting on its closing
		// channel, which all connections would share (and lock).
		c.handleClosing()
		c.drainInbound()
		c.handleRequests()
		now := time.Now()
		more := c.flush(now)
		c.publish()
		if st.closeState == stateClosed {
			c.finish(nil)
			close(c.done)
			c.t.untrackConn(c)
			return
		}
		d := st.nextDeadline(now)
		if !more && st.mayPark() && (d.IsZero() || d.After(now)) {
			// Closing or draining: what is left answers for the
			// connection, whose goroutine ends (closed_conn.go).
			if st.closeState != stateActive && c.inbound.release() {
				c.finish(c.closeToRoutes())
				close(c.done)
				c.t.untrackConn(c)
				return
			}
			if !c.handleClosing() && c.park(d) {
				return
			}
			continue
		}
		if more {
			timer.Reset(0) // look at the input, then send on
		} else if !d.IsZero() {
			timer.Reset(max(d.Sub(now), 0))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-timer.C:
			st.handleTimeout(time.Now())
			if c.follow != nil {
				c.follow.checkPath()
			}
		case <-c.wakeCh: // datagrams queued, an application command, or the Transport closing
		}
	}
}

// request hands the run goroutine a close (the first one asked for
// counts) or a migration. Any goroutine may call it.
func (c *Conn) request(close *closeRequest, migrate *migrateRequest) {
	c.mu.Lock()
	if close != nil && !c.closeWanted {
		c.closeReq, c.closeWanted = *close, true
	}
	if migrate != nil {
		c.migrateReqs = append(c.migrateReqs, *migrate)
	}
	c.hasRequest.Store(true)
	c.mu.Unlock()
	c.wake()
}

// handleRequests carries out what application goroutines asked for with
// request.
func (c *Conn) handleRequests() {
	if !c.hasRequest.Load() {
		return
	}
	c.mu.Lock()
	cr, closeWanted := c.closeReq, c.closeWanted
	c.closeWanted = false
	migrations := c.migrateReqs
	c.migrateReqs = nil
	fns := c.loopFns
	c.loopFns = nil
	c.hasRequest.Store(false)
	c.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	switch {
	case closeWanted && cr.refuse:
		c.state.closeWithError(time.Now(), &wire.TransportError{Code: wire.ConnectionRefused, Reason: cr.reason})
	case closeWanted:
		c.state.closeApplication(time.Now(), cr.code, cr.reason)
	}
	for _, r := range migrations {
		c.startMigration(time.Now(), r)
	}
}

// handleClosing closes the connection if its Transport is closing and
// reports whether it did, without waiting.
func (c *Conn) handleClosing() bool {
	select {
	case <-c.closing():
		c.onClosing()
		return true
	default:
		return false
	}
}

// onClosing closes the connection because its Transport closes.
func (c *Conn) onClosing() {
	c.closingSeen = true
	c.state.closeApplication(time.Now(), 0, "transport closed")
}

// closing returns the channel the Transport closes when it closes, until
// the connection handled that.
func (c *Conn) closing() <-chan struct{} {
	if c.closingSeen {
		return nil
	}
	return c.t.closing
}

// connSnapshot is what application goroutines can read of the state.
type connSnapshot struct {
	// tls is the TLS state recorded when the handshake completed, shared
	// with the state machine's TLS driver; nil before.
	tls       *tls.ConnectionState
	early     *tls.ConnectionState // before tls: what the ClientHello told (server)
	version   wire.Version
	stats     ConnectionStats
	datagrams bool
	used0RTT  bool
	// resetStreamAt: both sides advertised reset_stream_at.
	resetStreamAt bool
	// handshakeDuration is from the start to the handshake's completion.
	handshakeDuration time.Duration
}

// noTLSState is the TLS state reported before the handshake completed.
var noTLSState tls.ConnectionState

// tlsState returns the TLS state, or an empty one before the handshake
// completed. The caller must not modify it.
func (s *connSnapshot) tlsState() *tls.ConnectionState {
	if s.tls == nil {
		if s.early != nil {
			return s.early
		}
		return &noTLSState
	}
	return s.tls
}

// publishHandshake tells application goroutines that the handshake
// completed, once. The state machine calls it through its
// handshakeCompleted hook the moment TLS reports completion, before it
// processes the rest of the datagram, so that a stream the same datagram
// opens (a request after the client's Finished) already sees the
// connection's final TLS state.
func (c *Conn) publishHandshake() {
	st := c.state
	if st.events.handshakeComplete {
		st.events.handshakeComplete = false
		c.mu.Lock()
		c.handshook = true
		c.snapshot.tls = st.tls.HandshakeState()
		c.snapshot.version = st.version
		c.snapshot.used0RTT = st.used0RTT
		c.snapshot.datagrams = st.maxDatagramFrameSize > 0 && st.peerParams != nil && st.peerParams.MaxDatagramFrameSize > 0
		c.snapshot.resetStreamAt = st.resetStreamAtNegotiated()
		c.snapshot.handshakeDuration = time.Since(c.started)
		c.mu.Unlock()
		// Statistics and the tracer first: what waits for the handshake
		// (Dial, HandshakeComplete) may look at them at once.
		c.t.countHandshake(true, st)
		c.t.stats.observeHandshake(c.snapshot.handshakeDuration, st.version, c.snapshot.tls, st)
		if tr := st.obs.t; tr != nil && tr.HandshakeComplete != nil {
			tls := c.snapshot.tlsState()
			tr.HandshakeComplete(HandshakeInfo{Version: st.version, CipherSuite: tls.CipherSuite,
				ALPN: tls.NegotiatedProtocol, Used0RTT: st.used0RTT, Resumed: tls.DidResume})
		}
		close(c.handshakeDone)
		if l := c.listener; l != nil {
			c.listener = nil
			if !l.early {
				l.handshakeComplete(c)
			} else {
				if !c.early.published {
					// Not released early (no early TLS state
					// yet): released now, complete. publishEarly
					// comes later and finds c.listener nil.
					l.earlyReady(c)
				}
				l.handshakes.Add(-1)
			}
		}
	}
}

// publish tells application goroutines what changed.
func (c *Conn) publish() {
	st := c.state
	c.publishHandshake()
	c.publishEarly()
	c.publishPath()
	st.tracePoll()
	st.flushDrops(&c.t.stats)
	cur := st.stats()
	c.t.stats.publishFleet(&c.snapshot.stats, &cur) // only this goroutine writes the snapshot
	c.t.stats.flushAntiReplay(st)
	c.reportDatagramDrops()
	c.mu.Lock()
	c.snapshot.stats = cur
	c.mu.Unlock()
	if st.closeState == stateActive {
		// Both are published whatever the other says. Reads to count, or
		// a reader waiting on a starved window to grow: pollTransmit does
		// both, so go round again.
		readsDue := st.streams.publishReadWakeAt(st.connRecv.ConsumedBeforeUpdate())
		starved := st.streams.publishStarved(st.connRecv.CanGrowForWaitingReader())
		retireDue := st.streams.publishAckOwed(st.ackOwed())
		if readsDue || starved || retireDue {
			c.wake()
		}
	}
	c.syncResetTokens()
	c.checkDrained()
	if st.events.closed {
		st.events.closed = false
		err := st.closeErr
		if err == nil {
			err = errClosed
		}
		// The Tracer first (with the datagrams the close drops): the
		// application may exit as soon as it sees the close, and a
		// tracer that writes a file completes it here.
		st.datagrams.closeSend()
		c.reportDatagramDrops()
		if tr := st.obs.t; tr != nil && tr.ConnectionClosed != nil && context.Cause(c.ctx) == nil {
			tr.ConnectionClosed(err)
		}
		c.mu.Lock()
		if c.closeErr == nil {
			c.closeErr = err
		}
		handshook := c.handshook
		c.mu.Unlock()
		if !handshook && context.Cause(c.ctx) == nil {
			c.t.countHandshake(false, st)
			if l := c.origin; l != nil {
				l.handshakeFailed(time.Now())
			}
		}
		if l := c.listener; l != nil {
			c.listener = nil
			l.handshakes.Add(-1) // failed
		}
		st.streams.closeAll(err)
		c.cancel(err)
	}
}

// reportDatagramDrops reports the DATAGRAM payloads dropped since the
// last call to the Tracer.
func (c *Conn) reportDatagramDrops() {
	var report func(DatagramDrop)
	if tr := c.state.obs.t; tr != nil {
		report = tr.DatagramsDropped
	}
	c.state.datagrams.reportDrops(report)
}

// finish ends the connection's goroutine for good. Its routes are
// released, unless cc is what is left of it in the closing or draining
// state (closeToRoutes): they route to cc, which the Transport removes,
// and cc answers the datagrams the connection's queue still holds.
func (c *Conn) finish(cc *closedConn) {
	closed := cc != nil
	// Stops crypto/tls's handshake goroutine if the handshake never
	// completed.
	c.state.tls.Close()
	if !closed {
		c.state.localIDs.removeAll()
		c.routeConnIDs(time.Now())
		c.t.ep.routes.remove(c.state.origDstConnID, c)
		if c.firstDstConnID.Len() > 0 {
			c.t.ep.routes.remove(c.firstDstConnID, c)
		}
	}
	c.forgetResetTokens()
	c.t.stats.streamsOpen.Add(-int64(c.snapshot.stats.OpenStreams)) // its streams are gone
	c.dropParkTimer()
	if !closed {
		// A closed connection's tracer ends with its closing period.
		if tr := c.state.obs.t; tr != nil && tr.Done != nil {
			tr.Done()
		}
		c.t.connGone()
	}
	var left func(*inboundDatagram)
	if closed {
		c.closedRec.Store(cc)
		left = func(d *inboundDatagram) {
			cc.handle(datagramCount(len(d.data), int(d.segSize)), len(d.data), d.addrs.remote)
		}
	}
	c.inbound.close(left)
}

// connGone counts a connection that ended, its closed-connection record
// included.
func (t *Transport) connGone() {
	t.conns.Add(-1)
}

// err returns why the connection ended, or nil while it is open.
func (c *Conn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// OpenStream opens a bidirectional stream without blocking. It fails if the
// peer's stream limit is reached; OpenStreamSync waits instead.
func (c *Conn) OpenStream() (*Stream, error) {
	s, err := c.streamNow(c.state.streams.openStream, true)
	if err != nil {
		return nil, err
	}
	return &Stream{s}, nil
}

// errTooManyStreams is returned by OpenStream at the peer's stream limit.
var errTooManyStreams = errors.New("quic: too many open streams")

// OpenStreamSync opens a bidirectional stream, waiting while the peer's
// stream limit is reached, until ctx is done.
func (c *Conn) OpenStreamSync(ctx context.Context) (*Stream, error) {
	s, err := waitForStream(ctx, c.state.streams.openStream, true)
	if err != nil {
		return nil, err
	}
	return &Stream{s}, nil
}

// OpenUniStream opens a unidirectional stream without blocking.
func (c *Conn) OpenUniStream() (*SendStream, error) {
	s, err := c.streamNow(c.state.streams.openStream, false)
	if err != nil {
		return nil, err
	}
	return &SendStream{s}, nil
}

// OpenUniStreamSync opens a unidirectional stream, waiting while the peer's
// limit is reached, until ctx is done.
func (c *Conn) OpenUniStreamSync(ctx context.Context) (*SendStream, error) {
	s, err := waitForStream(ctx, c.state.streams.openStream, false)
	if err != nil {
		return nil, err
	}
	return &SendStream{s}, nil
}

// AcceptStream waits for the peer to open a bidirectional stream.
func (c *Conn) AcceptStream(ctx context.Context) (*Stream, error) {
	s, err := c.state.streams.waitAccept(ctx, true)
	if err != nil {
		return nil, err
	}
	return &Stream{s}, nil
}

// AcceptUniStream waits for the peer to open a unidirectional stream.
func (c *Conn) AcceptUniStream(ctx context.Context) (*ReceiveStream, error) {
	s, err := c.state.streams.waitAccept(ctx, false)
	if err != nil {
		return nil, err
	}
	return &ReceiveStream{s}, nil
}

// streamGetter is streamsMap.openStream or acceptStream: a stream, or a
// channel closed when it is worth trying again.
type streamGetter func(bidi bool) (*stream, <-chan struct{}, error)

// streamNow tries get once.
func (c *Conn) streamNow(get streamGetter, bidi bool) (*stream, error) {
	s, _, err := get(bidi)
	if err == nil && s == nil {
		err = errTooManyStreams
	}
	return s, err
}

// waitForStream calls get until it returns a stream or an error, or ctx
// is done.
func waitForStream(ctx context.Context, get streamGetter, bidi bool) (*stream, error) {
	for {
		s, wait, err := get(bidi)
		if err != nil || s != nil {
			return s, err
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ErrDatagramsNotNegotiated is returned by SendDatagram, SendDatagramWait
// and ReceiveDatagram when the connection does not use datagrams
// (RFC 9221): this side did not enable them (Config.EnableDatagrams), or
// the peer did not.
var ErrDatagramsNotNegotiated = errors.New("quic: datagrams not negotiated")

// SendDatagram queues an unreliable datagram (RFC 9221) without blocking.
// It fails if the connection ended, or with ErrDatagramsNotNegotiated if
// either side did not enable datagrams or the handshake has not completed.
// At most Config.DatagramQueueLen (default 32) wait to be sent, as
// congestion control allows; when the queue is full, the oldest waiting
// datagram is dropped to make room, since a newer one is usually worth
// more. A datagram too large for the peer or for a packet is dropped too,
// and so are those still waiting when the connection closes. Each drop is
// counted in Stats().UnsentDatagramsDropped and reported to the Tracer
// (DatagramsDropped): a sender that wants to know when it sends faster
// than the connection can, looks there; one that would rather wait than
// lose datagrams uses SendDatagramWait.
func (c *Conn) SendDatagram(p []byte) error {
	if err := c.datagramsUsable(true); err != nil {
		return err
	}
	if !c.state.datagrams.pushSend(p) {
		return c.closedErr()
	}
	c.wake()
	return nil
}

// SendDatagramWait queues an unreliable datagram (RFC 9221) like
// SendDatagram, but when the queue is full it waits for room rather than
// dropping a datagram: this is the back-pressure of the send queue. It
// returns once the datagram is queued (queuing is all it promises: a
// datagram may still be lost in the network, or dropped if too large or
// if the connection closes before sending it), or with an error when ctx
// is done, the connection ended, or datagrams were not negotiated. With a
// ctx already done, it queues the datagram only if there is room at once.
func (c *Conn) SendDatagramWait(ctx context.Context, p []byte) error {
	for {
		if err := c.datagramsUsable(true); err != nil {
			return err
		}
		ok, wait := c.state.datagrams.tryPushSend(p)
		if ok {
			c.wake()
			return nil
		}
		if wait == nil {
			return c.closedErr()
		}
		select {
		case <-wait:
		case <-c.ctx.Done():
			return context.Cause(c.ctx)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ReceiveDatagram returns the next datagram from the peer (RFC 9221),
// waiting for one until ctx is done or the connection ends. It fails at
// once with ErrDatagramsNotNegotiated, as SendDatagram does, when this
// side did not enable datagrams or the peer did not (a call made before
// the handshake completed finds out then). Received datagrams wait for
// ReceiveDatagram in a queue of Config.DatagramQueueLen; when it is full
// the oldest is dropped, and counted in Stats().UnreadDatagramsDropped.
// Datagrams received before the connection ended can still be read after.
func (c *Conn) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	for {
		p, wait := c.state.datagrams.popReceived()
		if p != nil {
			return p, nil
		}
		if err := c.datagramsUsable(false); err != nil {
			return nil, err
		}
		var handshake <-chan struct{}
		if !c.handshakeDoneNow() {
			handshake = c.handshakeDone // then the peer's choice is known
		}
		select {
		case <-wait:
		case <-handshake:
		case <-c.ctx.Done():
			return nil, context.Cause(c.ctx)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// datagramsUsable returns the error of a datagram call: why the
// connection ended, or ErrDatagramsNotNegotiated. For sending, datagrams
// must be known to be negotiated (the handshake completed); for
// receiving, it is enough that they may still be.
func (c *Conn) datagramsUsable(send bool) error {
	c.mu.Lock()
	ok, err, handshook := c.snapshot.datagrams, c.closeErr, c.handshook
	c.mu.Unlock()
	switch {
	case err != nil:
		return err
	case ok:
		return nil
	case !c.config.EnableDatagrams || handshook || send:
		return ErrDatagramsNotNegotiated
	}
	return nil
}

// handshakeDoneNow reports whether the handshake completed.
func (c *Conn) handshakeDoneNow() bool {
	select {
	case <-c.handshakeDone:
		return true
	default:
		return false
	}
}

// closedErr returns why the connection ended, for a datagram call that
// found the send queue closed: the close is published right after the
// queue closes (Conn.publish).
func (c *Conn) closedErr() error {
	<-c.ctx.Done()
	return context.Cause(c.ctx)
}

// CloseWithError closes the connection with an application error code and
// reason, which the peer receives in a CONNECTION_CLOSE frame. It returns
// once the frame is sent, or immediately if the connection already ended.
func (c *Conn) CloseWithError(code ApplicationErrorCode, reason string) error {
	c.request(&closeRequest{code: code, reason: reason}, nil)
	select {
	case <-c.ctx.Done():
	case <-c.done:
	}
	return nil
}

// Context returns a context cancelled when the connection ends; its cause
// (context.Cause) is the reason.
func (c *Conn) Context() context.Context { return c.ctx }

// HandshakeComplete returns a channel closed when the handshake completes.
func (c *Conn) HandshakeComplete() <-chan struct{} { return c.handshakeDone }

// LocalAddr returns the local address: the address of the socket the
// connection sends from, which changes when it migrates.
func (c *Conn) LocalAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.local
}

// RemoteAddr returns the peer's address. It changes when the connection
// moves to another path: the peer migrated or its NAT rebound (on a
// server, which validates the new address and reverts if that fails), or
// the client moved to a preferred address.
func (c *Conn) RemoteAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remote
}

// ConnectionState describes the connection once the handshake completed.
type ConnectionState struct {
	// TLS is the TLS state: negotiated protocol, cipher suite, peer
	// certificates, whether the session was resumed.
	TLS tls.ConnectionState
	// Version is the QUIC version in use.
	Version wire.Version
	// Used0RTT reports whether 0-RTT was used: on a client, the server
	// accepted the 0-RTT data sent (Transport.DialEarly); on a server, it
	// accepted 0-RTT (Config.Allow0RTT). Known once the handshake
	// completed.
	Used0RTT bool
	// SupportsDatagrams reports whether both sides enabled RFC 9221
	// datagrams.
	SupportsDatagrams bool
	// SupportsResetStreamAt reports whether both sides advertised
	// reset_stream_at (Config.EnableResetStreamAt), so that either may
	// send RESET_STREAM_AT.
	SupportsResetStreamAt bool
}

// ConnectionState returns the connection's state; it is meaningful after
// HandshakeComplete, except that a server connection that ListenEarly's
// Accept returned has TLS.NegotiatedProtocol and TLS.ServerName already,
// as the client's ClientHello decided them.
func (c *Conn) ConnectionState() ConnectionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ConnectionState{TLS: *c.snapshot.tlsState(), Version: c.snapshot.version, SupportsDatagrams: c.snapshot.datagrams, SupportsResetStreamAt: c.snapshot.resetStreamAt, Used0RTT: c.snapshot.used0RTT}
}

// Stats returns the connection's statistics.
func (c *Conn) Stats() ConnectionStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snapshot.stats
	s.DatagramsDropped = c.dropped
	s.UnsentDatagramsDropped, s.UnreadDatagramsDropped = c.state.datagrams.dropped()
	if c.handshook {
		tls := c.snapshot.tlsState()
		s.HandshakeComplete, s.HandshakeDuration = true, c.snapshot.handshakeDuration
		s.Version, s.CipherSuite, s.ALPN = c.snapshot.version, tls.CipherSuite, tls.NegotiatedProtocol
		s.Resumed, s.Used0RTT = tls.DidResume, c.snapshot.used0RTT
	}
	return s
}
