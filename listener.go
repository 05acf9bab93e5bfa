package quic

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// A Listener accepts QUIC connections on a Transport. Multiple goroutines
// may invoke methods on a Listener simultaneously.
//
// Close stops accepting at once: Accept calls in progress and later ones
// return ErrListenerClosed, and never a connection. The connections whose
// handshake completed but that Accept did not return yet are closed with
// the transport error CONNECTION_REFUSED (RFC 9000, Section 20.1), which
// tells their clients that the application saw nothing of them; those
// still in their handshake are closed so as it completes; Initial packets
// of new connections are dropped. Connections Accept returned are not
// affected. Closing the Transport closes its Listener. A Listener made by
// ListenAddr owns its Transport, which closes once the last accepted
// connection ended (see Transport: its closing period lasts 5 seconds at
// most). Close returns nil and may be called more than once.
type Listener struct {
	t            *Transport
	tls          *tls.Config
	tickets      *handshake.EpochKeys // Transport.Keys' session ticket keys, or nil
	config       *Config
	accept       chan *Conn
	closed       chan struct{}
	closeOnce    sync.Once
	handshakes   atomic.Int64
	ownTransport bool
	early        bool // ListenEarly: Accept returns connections before their handshake completes
	// earlyDatagrams holds 0-RTT datagrams that arrived before their
	// connection's Initial; only the Transport's read loop touches it.
	earlyDatagrams []earlyDatagram
	// preferred is set by SetPreferredAddress (listener_preferred.go).
	preferred atomic.Pointer[listenerPreferred]
	// failures counts the handshakes that failed lately, for the
	// automatic Retry decision (listener_retry.go).
	failures failureWindow
}

// acceptQueueLen bounds connections whose handshake completed but that
// Accept has not returned yet; beyond it new handshakes are refused.
const acceptQueueLen = 256

func newListener(t *Transport, tc *tls.Config, cfg *Config) *Listener {
	return &Listener{t: t, tls: tc, config: cfg, accept: make(chan *Conn, acceptQueueLen), closed: make(chan struct{})}
}

// Accept returns the next connection whose handshake completed (with
// ListenEarly, the next connection that started), waiting until one does,
// ctx is done or the Listener closes. After Close it returns
// ErrListenerClosed, and never a connection.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	if l.isClosed() {
		return nil, ErrListenerClosed
	}
	select {
	case c := <-l.accept:
		if l.isClosed() {
			// Close raced with this call: the connection goes with
			// the queue it was taken from.
			l.refuse(c)
			return nil, ErrListenerClosed
		}
		return c, nil
	case <-l.closed:
		return nil, ErrListenerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ErrListenerClosed is returned by Accept once the Listener is closed,
// or its Transport. It matches net.ErrClosed with errors.Is.
var ErrListenerClosed error = &closedError{"quic: listener closed"}

// Addr returns the local address.
func (l *Listener) Addr() net.Addr { return l.t.Conn.LocalAddr() }

// Close stops accepting connections, without waiting; see Listener for
// what it does to calls in progress and to connections not yet accepted.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.t.listener.CompareAndSwap(l, nil)
		l.refuseQueued()
		if l.ownTransport {
			// The Transport made by ListenAddr lives on while accepted
			// connections do, and closes after the last one.
			l.t.closeWhenIdle.Store(true)
			l.t.closeIfIdle()
		}
	})
	return nil
}

func (l *Listener) isClosed() bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// refuseQueued closes the connections in the accept queue, once the
// Listener is closed. Whoever queues a connection calls it after, if the
// Listener closed meanwhile (push), so that no connection stays queued.
func (l *Listener) refuseQueued() {
	for {
		select {
		case c := <-l.accept:
			l.refuse(c)
		default:
			return
		}
	}
}

// refuse closes c, which the application never had, without waiting:
// "CONNECTION_REFUSED (0x02): The server refused to accept a new
// connection." (RFC 9000, Section 20.1)
func (l *Listener) refuse(c *Conn) {
	c.request(&closeRequest{reason: "listener closed", refuse: true}, nil)
}

// tryPush queues c for Accept if there is room, and reports whether it
// did; a Listener that closed meanwhile closes it with the queue.
func (l *Listener) tryPush(c *Conn) bool {
	select {
	case l.accept <- c:
	default:
		return false
	}
	if l.isClosed() {
		l.refuseQueued()
	}
	return true
}

// push waits until c fits in the accept queue, or closes c if the
// Listener closes first.
func (l *Listener) push(c *Conn) {
	if l.isClosed() {
		l.refuse(c)
		return
	}
	select {
	case l.accept <- c:
		if l.isClosed() {
			l.refuseQueued()
		}
	case <-l.closed:
		l.refuse(c)
	}
}

// state is what the endpoint needs to know of l at now to decide about
// a new connection.
func (l *Listener) state(now time.Time) listenState {
	return listenState{
		versions: l.config.Versions, allow0RTT: l.config.Allow0RTT, closed: l.isClosed(),
		handshakes: l.handshakes.Load(), failures: l.failures.count(now), queued: len(l.accept),
	}
}

// startConnection starts the server connection the endpoint decided to
// accept (endpoint.newConnection) for the client's first Initial d from
// addr, and hands it d; it reports whether the connection took bp.
func (l *Listener) startConnection(now time.Time, d []byte, bp *[]byte, addr net.Addr, a *acceptDecision) bool {
	hdr, cp := a.hdr, a.params
	cp.tls, cp.seed, cp.ecn = l.tls, randomSeed(), l.t.sock.ecn()
	cp.sessionTickets = l.tickets
	c := newConn(l.t, addr, l.config)
	c.origin = l
	if !l.t.trackConn(c) {
		return false // the Transport is closing
	}
	// Packets the client sends to its original destination ID until it
	// learns ours must reach this connection too.
	if !l.t.ep.routes.add(hdr.DstConnID, c) {
		l.t.abandonConn(c)
		return false // a retransmitted Initial raced with the first
	}
	c.firstDstConnID = hdr.DstConnID
	abandon := func() bool {
		for _, cid := range []ConnectionID{hdr.DstConnID, cp.localConnID, cp.preferredConnID} {
			l.t.ep.routes.remove(cid, c)
		}
		l.t.abandonConn(c)
		return false
	}
	// The endpoint picks and routes the connection's own first IDs
	// (endpoint.newConnID); it routes those the connection issues later
	// as the connection asks (Conn.routeConnIDs).
	var err error
	if cp.localConnID, err = l.t.ep.newConnID(c); err != nil {
		return abandon()
	}
	cp.maxSendPayload, cp.maxRecvPayload = l.t.sock.payloadLimits()
	cp.path = l.t.pathAddrsFor(addr)
	if err := l.applyPreferred(c, &cp); err != nil {
		return abandon()
	}
	cp.tracer = l.config.newTracer(c, false, cp.origDstConnID)
	st, err := newConnState(now, wire.RoleServer, l.config, cp)
	if err != nil {
		tracerDone(cp.tracer)
		return abandon()
	}
	if a.token == tokenInvalidRetry {
		// "If a server receives a client Initial that contains an invalid
		// Retry token but is otherwise valid, the server ... SHOULD
		// immediately close (Section 10.2) the connection with an
		// INVALID_TOKEN error." (RFC 9000, Section 8.1.2)
		st.bytesReceived = uint64(len(d))
		st.closeWithError(now, &wire.TransportError{Code: wire.InvalidToken, Reason: "invalid Retry token"})
		c.start(st)
		return false
	}
	l.handshakes.Add(1)
	if l.early {
		c.start(st)
		go l.waitHandshake(c)
	} else {
		c.listener = l
		c.start(st)
	}
	in := l.t.inbound(d, bp)
	in.addrs = cp.path
	took := c.enqueue(in)
	l.deliverEarly(c, hdr.DstConnID, addr)
	return took
}

// waitHandshake, for ListenEarly, queues c for Accept once its
// ClientHello was processed (its application protocol is known, as with
// quic-go's early listeners) and counts its handshake as in progress
// until it completes. A connection that fails first is not queued.
func (l *Listener) waitHandshake(c *Conn) {
	defer l.handshakes.Add(-1)
	select {
	case <-c.early.ready:
	case <-c.handshakeDone:
	case <-c.ctx.Done():
	case <-l.closed:
	}
	if !chanClosed(c.early.ready) && !chanClosed(c.handshakeDone) {
		if c.ctx.Err() == nil {
			l.refuse(c) // the listener closed
		}
		return
	}
	l.push(c)
	select {
	case <-c.handshakeDone:
	case <-c.ctx.Done():
	case <-l.closed:
	}
}

// handshakeComplete queues c, whose handshake just completed, for Accept.
// It runs on c's goroutine (Conn.publishHandshake): rather than a
// goroutine per connection waiting for the handshake, as for ListenEarly,
// the connection hands itself over. When the queue is full a goroutine
// waits as before, so that the connection's goroutine never blocks. The
// handshake counts as in progress until the connection is queued; a
// connection that fails before its handshake completes stops counting in
// Conn.publish.
func (l *Listener) handshakeComplete(c *Conn) {
	if l.isClosed() {
		l.handshakes.Add(-1)
		l.refuse(c)
		return
	}
	if l.tryPush(c) {
		l.handshakes.Add(-1)
		return
	}
	go l.queue(c)
}

// queue waits until c fits in the accept queue, or closes it if the
// listener closes first.
func (l *Listener) queue(c *Conn) {
	defer l.handshakes.Add(-1)
	l.push(c)
}

// handshakeFailed counts a handshake of the listener's that ended before
// it completed, at now, for the automatic Retry decision
// (listener_retry.go, endpoint.needRetry).
func (l *Listener) handshakeFailed(now time.Time) { l.failures.add(now) }

// addrPortOf returns the IP address and port of a UDP address.
func addrPortOf(addr net.Addr) (netip.AddrPort, bool) {
	if u, ok := addr.(*net.UDPAddr); ok {
		return u.AddrPort(), true
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return ap, err == nil
}
