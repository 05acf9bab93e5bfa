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

	"github.com/quicstack/quic/handshake"

	"github.com/quicstack/quic/wire"
)

// A Listener accepts QUIC connections on a Transport.
type Listener struct {
	t            *Transport
	tls          *tls.Config
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

// Accept returns the next connection whose handshake completed.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	select {
	case c := <-l.accept:
		return c, nil
	case <-l.closed:
		return nil, errListenerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errListenerClosed = errors.New("quic: listener closed")

// Addr returns the local address.
func (l *Listener) Addr() net.Addr { return l.t.Conn.LocalAddr() }

// Close stops accepting connections. Handshakes in progress are abandoned;
// connections already accepted stay open. A Listener made by ListenAddr
// owns its Transport and socket, which then close once the last of those
// connections ends.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.t.listener.CompareAndSwap(l, nil)
		if l.ownTransport {
			// The Transport made by ListenAddr lives on while accepted
			// connections do, and closes after the last one.
			l.t.closeWhenIdle.Store(true)
			if l.t.conns.Load() == 0 {
				go l.t.Close()
			}
		}
	})
	return nil
}

// handleNewConnection starts a server connection for a client's first
// Initial packet. "A server MUST discard an Initial packet that is carried
// in a UDP datagram with a payload that is smaller than the smallest
// allowed maximum datagram size of 1200 bytes" (RFC 9000, Section 14.1),
// and the client's Destination Connection ID must be at least 8 bytes
// (Section 7.2).
func (l *Listener) handleNewConnection(d []byte, bp *[]byte, addr net.Addr) bool {
	select {
	case <-l.closed:
		return false
	default:
	}
	hdr, pnOff, err := wire.ParseLongHeader(d)
	if err != nil || hdr.DstConnID.Len() < 8 {
		return false
	}
	if hdr.Type == wire.PacketType0RTT {
		return l.bufferEarly(time.Now(), hdr.DstConnID, addr, d, bp)
	}
	if hdr.Type != wire.PacketTypeInitial || len(d) < minInitialPacketSize {
		return false
	}
	seal, open := authenticInitial(d, hdr, pnOff)
	if open == nil {
		return false
	}
	if l.handshakes.Load() >= int64(l.t.MaxHandshakes) || len(l.accept) >= acceptQueueLen {
		return false
	}
	now := time.Now()
	cp := connParams{
		tls: l.tls, connIDGen: l.t.ConnectionIDGenerator,
		peerConnID: hdr.SrcConnID, origDstConnID: hdr.DstConnID, version: hdr.Version,
		statelessReset: l.t.resetter, seed: randomSeed(), ecn: l.t.sock.ecn(),
		initialSeal: seal, initialOpen: open,
	}
	v := l.checkToken(now, hdr, addr, &cp)
	if v == tokenNone && l.needRetry(now, addr) {
		l.sendRetry(now, hdr, addr)
		return false
	}
	c := newConn(l.t, addr, l.config)
	c.origin = l
	// Packets the client sends to its original destination ID until it
	// learns ours must reach this connection too.
	if !l.t.handlers.add(hdr.DstConnID, c) {
		return false // a retransmitted Initial raced with the first
	}
	c.firstDstConnID = hdr.DstConnID
	if ap, ok := addrPortOf(addr); ok {
		cp.newToken = tokenMint{l.t.tokens, ap.Addr()}
	}
	cp.maxSendPayload, cp.maxRecvPayload = l.t.sock.payloadLimits()
	cp.routes = connRoutes{&l.t.handlers, c}
	cp.path = l.t.pathAddrsFor(addr)
	l.applyPreferred(c, &cp)
	cp.tracer = l.config.newTracer(c, false, cp.origDstConnID)
	st, err := newConnState(now, wire.RoleServer, l.config, cp)
	if err != nil {
		tracerDone(cp.tracer)
		l.t.handlers.remove(hdr.DstConnID, c)
		return false
	}
	if v == tokenInvalidRetry {
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

// waitHandshake, for ListenEarly, queues c for Accept at once and counts
// its handshake as in progress until it completes.
func (l *Listener) waitHandshake(c *Conn) {
	defer l.handshakes.Add(-1)
	select {
	case l.accept <- c:
	case <-l.closed:
		c.CloseWithError(0, "listener closed")
		return
	}
	select {
	case <-c.handshakeDone:
	case <-c.ctx.Done():
	case <-l.closed:
	}
}

// handshakeComplete queues c, whose handshake just completed, for Accept.
// It runs on c's goroutine (Conn.publishHandshake): rather than a
// goroutine per connection waiting for the handshake, as for ListenEarly,
// the connection hands itself over. When the queue is full, or the
// listener closed, a goroutine waits as before, so that the connection's
// goroutine never blocks. The handshake counts as in progress until the
// connection is queued; a connection that fails before its handshake
// completes stops counting in Conn.publish.
func (l *Listener) handshakeComplete(c *Conn) {
	select {
	case <-l.closed:
	default:
		select {
		case l.accept <- c:
			l.handshakes.Add(-1)
			return
		default:
		}
	}
	go l.queue(c)
}

// queue waits until c fits in the accept queue, or closes it if the
// listener closes first.
func (l *Listener) queue(c *Conn) {
	defer l.handshakes.Add(-1)
	select {
	case <-l.closed:
		c.CloseWithError(0, "listener closed")
		return
	default:
	}
	select {
	case l.accept <- c:
	case <-l.closed:
		c.CloseWithError(0, "listener closed")
	}
}

// Lifetimes of address tokens: Retry tokens are used one round trip after
// they are made; NEW_TOKEN tokens serve later connections.
const (
	retryTokenLifetime    = 10 * time.Second
	newTokenTokenLifetime = 24 * time.Hour
)

type tokenVerdict uint8

const (
	tokenNone         tokenVerdict = iota // no usable token: address not validated
	tokenValid                            // the address is validated
	tokenInvalidRetry                     // a Retry token that fails: INVALID_TOKEN
)

// checkToken validates the token of a client's first Initial packet
// (RFC 9000, Section 8.1.3) and, for a valid Retry token, sets the
// connection IDs the server must echo in its transport parameters
// (Section 7.3): original_destination_connection_id is the Destination
// Connection ID of the Initial the Retry answered, and
// retry_source_connection_id the Retry's Source Connection ID, which is
// this Initial's Destination Connection ID. The Initial keys still come
// from this Initial's Destination Connection ID.
func (l *Listener) checkToken(now time.Time, hdr wire.LongHeader, addr net.Addr, cp *connParams) tokenVerdict {
	if len(hdr.Token) == 0 {
		return tokenNone
	}
	ap, ok := addrPortOf(addr)
	if !ok {
		return tokenNone
	}
	tok, err := l.t.tokens.Open(hdr.Token, ap, now, retryTokenLifetime, newTokenTokenLifetime)
	if handshake.IsRetryToken(hdr.Token) {
		if err != nil || tok.RetrySrcConnID != hdr.DstConnID {
			return tokenInvalidRetry
		}
		cp.initialKeyConnID = hdr.DstConnID
		cp.origDstConnID = tok.OriginalDestConnID
		cp.retrySrcConnID, cp.hasRetrySrcConnID = tok.RetrySrcConnID, true
		cp.addressValidated = true
		return tokenValid
	}
	if err != nil {
		// "If the token is invalid, the server SHOULD proceed as if the
		// client did not have a validated address" (Section 8.1.3).
		return tokenNone
	}
	cp.addressValidated = true
	return tokenValid
}

// needRetry decides whether to validate a client's address with Retry:
// as RequireAddressValidation says, or else while the handshake load is
// high (listener_retry.go).
func (l *Listener) needRetry(now time.Time, addr net.Addr) bool {
	if f := l.t.RequireAddressValidation; f != nil {
		return f(addr)
	}
	return retryDue(l.handshakes.Load(), l.failures.count(now), l.t.MaxHandshakes)
}

// handshakeFailed counts a handshake of the listener's that ended before
// it completed, at now.
func (l *Listener) handshakeFailed(now time.Time) { l.failures.add(now) }

// sendRetry answers a client's first Initial with a Retry packet
// (RFC 9000, Section 17.2.5) carrying a token that binds the client's
// address, its original Destination Connection ID and the new Source
// Connection ID the client must use, integrity-protected as RFC 9001,
// Section 5.8 specifies. Nothing is kept: the token carries the state.
func (l *Listener) sendRetry(now time.Time, hdr wire.LongHeader, addr net.Addr) {
	ap, ok := addrPortOf(addr)
	if !ok {
		return
	}
	scid, err := l.t.ConnectionIDGenerator.GenerateConnectionID()
	if err != nil {
		return
	}
	r := wire.RetryPacket{Version: hdr.Version, DstConnID: hdr.SrcConnID, SrcConnID: scid,
		Token: l.t.tokens.AppendRetryToken(nil, now, ap, hdr.DstConnID, scid)}
	b := r.Append(make([]byte, 0, r.EncodedLen()+16))
	b = handshake.AppendRetryIntegrityTag(b[:len(b)-wire.RetryIntegrityTagLen], hdr.Version, hdr.DstConnID.Bytes())
	l.t.stats.retriesSent.Add(1)
	l.t.writeTo(b, addr)
}

// addrPortOf returns the IP address and port of a UDP address.
func addrPortOf(addr net.Addr) (netip.AddrPort, bool) {
	if u, ok := addr.(*net.UDPAddr); ok {
		return u.AddrPort(), true
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return ap, err == nil
}
