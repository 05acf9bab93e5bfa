package quic

import (
	"context"
	"crypto/rand"
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

// A Transport owns a UDP socket and the connections that use it: dialed
// ones and, after Listen, accepted ones. One goroutine reads the socket
// and routes each datagram by its destination connection ID to the
// connection's goroutine, without a global lock and without ever waiting
// for a connection. The zero value with Conn set is ready to use;
// configuration fields must be set before the first Listen or Dial.
// Multiple goroutines may invoke methods on a Transport simultaneously.
//
// Close shuts the Transport down, and returns once everything it started
// has stopped:
//   - from the moment Close is called, Listen, ListenEarly, Dial and
//     DialEarly fail with ErrTransportClosed, and so do dials in progress
//     that had not started their connection yet (the others fail with
//     their connection's error);
//   - the Listener closes (see Listener);
//   - every connection closes with an application close of code 0 and
//     reason "transport closed": the calls in progress on it and on its
//     streams return that *ApplicationError (see Conn);
//   - the connections then answer their peers' packets with their
//     CONNECTION_CLOSE until their closing periods end (three PTOs,
//     RFC 9000, Section 10.2), but Close waits for that 5 seconds at
//     most, whatever the peers' RTT and max_ack_delay, and not at all
//     when no connection is closing (connections the peer closed send
//     nothing more);
//   - the socket is closed if the Transport made it (ListenAddr,
//     DialAddr); otherwise the read loop is stopped with a read deadline
//     in the past, which the application resets to read the socket
//     again. A Transport never used starts nothing and leaves its socket
//     as it is.
//
// Close returns nil, may be called more than once and on the zero
// Transport; it must not be called from a Tracer callback, which runs on a
// connection's goroutine that Close waits for.
type Transport struct {
	// Conn is the UDP socket. Close closes it only if the Transport made
	// it (ListenAddr, DialAddr).
	Conn net.PacketConn

	// ConnectionIDGenerator makes the connection IDs of this Transport's
	// connections; a load balancer may need its own. Default: random
	// 8-byte IDs.
	ConnectionIDGenerator ConnectionIDGenerator

	// StatelessResetKey derives stateless reset tokens
	// (HMAC-SHA256 of the connection ID). Servers of a fleet that share
	// it can reset connections another of them lost. Default: a random
	// key per Transport, so resets work within its lifetime only; a
	// Transport that carries another's connections
	// (Listener.SetPreferredAddress, Conn.Migrate) takes that one's key.
	StatelessResetKey []byte

	// MaxHandshakes bounds the handshakes in progress on the listener;
	// Initial packets for new connections beyond it are dropped.
	// Default 1024.
	MaxHandshakes int

	// RequireAddressValidation, if set, is asked for each new connection
	// attempt without a valid address token whether to validate the
	// client's address first with a Retry packet (RFC 9000,
	// Section 8.1.2), at the cost of one round trip. Return true always to
	// validate every client. When nil, Retry is sent automatically while
	// the handshakes in progress plus those that failed within the last
	// second number at least half of MaxHandshakes, to shed floods of
	// Initials, spoofed or not, that start handshakes which never finish
	// or fail at once: with the default MaxHandshakes, such a flood costs
	// the server at most 512 handshakes per second. A handshake that
	// fails before the client's address is validated leaves no
	// connection in the closing state behind (RFC 9000, Section 10.2.3).
	RequireAddressValidation func(net.Addr) bool

	// TokenKey protects the address-validation tokens this Transport's
	// listener issues in Retry packets and NEW_TOKEN frames. Servers of a
	// fleet that share it accept each other's tokens. Default: a random
	// key per Transport.
	TokenKey []byte

	// TokenReplayGuard accepts each NEW_TOKEN token of TokenKey once
	// (RFC 9000, Section 8.1.4); a token used again leaves the client's
	// address unvalidated. Servers of a fleet sharing TokenKey need a
	// guard they share to refuse tokens used on another server. Default:
	// NewTokenReplayGuard(DefaultTokenReplayCapacity), for this Transport.
	TokenReplayGuard TokenReplayGuard

	// DisableGSO, DisableGRO and DisableECN turn off UDP segmentation
	// offload, receive offload and ECN (RFC 9000, Section 13.4) on the
	// socket; DisableBatchIO makes it read and write one datagram per
	// system call. By default each is used where the platform offers it
	// (Linux, with Conn a *net.UDPConn) and turned off for the socket if
	// the kernel or the interface refuses it; SocketInfo tells what is in
	// use.
	DisableGSO, DisableGRO, DisableECN, DisableBatchIO bool

	// Keys, if set, derives from one master secret the session-ticket
	// keys of the listener's tls.Config, the address-token keys and the
	// stateless reset key, and rotates the first two (see KeySchedule).
	// StatelessResetKey and TokenKey, if set, take precedence for their
	// keys, and so do WrapSession or UnwrapSession of the tls.Config.
	// Default nil: each key as its own field says.
	Keys *KeySchedule

	// SocketBufferSize is the UDP receive and send buffer size asked of
	// the kernel, which caps it (net.core.rmem_max and wmem_max on Linux,
	// unless the process may override them). Default 7 MiB: a burst of
	// handshakes or a fast sender overflows the kernel default (about
	// 200 KiB on Linux) and loses datagrams.
	SocketBufferSize int

	initOnce sync.Once
	sock     sysConn
	// rxCur is the datagram being routed on the slow path (new
	// connections, resets, version negotiation), which slowMu serializes
	// when several sockets are read at once (transport_reuseport.go).
	rxCur   *rxMessage
	slowMu  sync.Mutex
	extraRx extraSockets // more sockets to read (transport_reuseport.go)
	tokens  *handshake.TokenProtector
	initErr error
	// closed are the connections in the closing or draining state whose
	// IDs route to what is left of them (closed_conn.go).
	closed   closedConns
	resetKey *resetKey  // shared with the Transports carrying its connections (reset_tokens.go)
	resetMu  sync.Mutex // guards resetKey
	listener atomic.Pointer[Listener]
	ownConn  bool

	conns atomic.Int64 // connections not ended, closed ones included (closed_conn.go)
	// closeWhenIdle makes the Transport close once no connection runs
	// (closeIfIdle), for ListenAddr and DialAddr.
	closeWhenIdle atomic.Bool

	// life guards what Close must see whole: whether the Transport is
	// closed, the listener being set, and the connections that run.
	life      transportLife
	closeOnce sync.Once
	closing   chan struct{} // closed when Close starts
	// wg counts the read loop and the connections in life.conns; it is
	// added to only under life.mu while the Transport is not closed, so
	// never after Close started waiting on it.
	wg      sync.WaitGroup
	runners runnerPool // conn_driver_runner.go

	// ep routes datagrams to connections by their connection IDs (its
	// routes are safe for concurrent use) and decides, under slowMu,
	// about the datagrams that route to no connection.
	ep endpoint

	// localAddr is the socket's local address as paths know it.
	localAddr netip.AddrPort
	stats     transportCounters // see Stats
}

// ErrTransportClosed is returned by Listen, ListenEarly, Dial and
// DialEarly on a Transport that is closed or closing. It matches
// net.ErrClosed with errors.Is.
var ErrTransportClosed error = &closedError{"quic: transport closed"}

// closedError is an error of something closed, which errors.Is matches
// with net.ErrClosed as well as itself.
type closedError struct{ msg string }

func (e *closedError) Error() string { return e.msg }
func (e *closedError) Unwrap() error { return net.ErrClosed }

// transportLife is the Transport's lifecycle state, guarded by mu.
type transportLife struct {
	mu     sync.Mutex
	closed bool
	// conns are the connections whose goroutine has not finished for
	// good (parked ones included), which Close closes and waits for.
	conns map[*Conn]struct{}
}

// trackConn counts c as running until untrackConn, unless the Transport
// is closed. Every connection is tracked before it starts.
func (t *Transport) trackConn(c *Conn) bool {
	t.life.mu.Lock()
	defer t.life.mu.Unlock()
	if t.life.closed {
		return false
	}
	if t.life.conns == nil {
		t.life.conns = make(map[*Conn]struct{})
	}
	t.life.conns[c] = struct{}{}
	t.wg.Add(1)
	return true
}

// untrackConn ends what trackConn began: c's goroutine finished for good,
// or c never started.
func (t *Transport) untrackConn(c *Conn) {
	t.life.mu.Lock()
	delete(t.life.conns, c)
	t.life.mu.Unlock()
	t.wg.Done()
	t.closeIfIdle()
}

// abandonConn untracks c, which never started: Close, which may have
// listed it, finds it done.
func (t *Transport) abandonConn(c *Conn) {
	close(c.done)
	t.untrackConn(c)
}

// closeIfIdle closes the Transport, in the background, if it is to close
// once no connection runs (ListenAddr after its Listener closed, DialAddr
// once its connection ended) and none does. Closed connections' records
// do not count: Close lets them answer until their closing periods end,
// 5 s at most, so that a Transport of ListenAddr or DialAddr lives at
// most that long after its last connection closed.
func (t *Transport) closeIfIdle() {
	if !t.closeWhenIdle.Load() {
		return
	}
	t.life.mu.Lock()
	idle := len(t.life.conns) == 0 && !t.life.closed
	t.life.mu.Unlock()
	if idle {
		go t.Close()
	}
}

func (t *Transport) init() error {
	t.initOnce.Do(func() {
		// Close needs these even when the Transport cannot work.
		t.closing = make(chan struct{})
		t.runners.ch = make(chan *Conn)
		if t.Conn == nil {
			t.initErr = errors.New("quic: Transport.Conn is nil")
			return
		}
		if t.ConnectionIDGenerator == nil {
			t.ConnectionIDGenerator = NewRandomConnectionIDGenerator(8)
		}
		fleetReset, fleetTokens := t.fleetKeys() // keys_fleet.go
		key := t.StatelessResetKey
		if len(key) == 0 {
			key = fleetReset
		}
		t.resetKey, t.initErr = newResetKey(t, key)
		if t.initErr != nil {
			return
		}
		tkey := t.TokenKey
		if len(tkey) == 0 {
			tkey = make([]byte, 32)
			rand.Read(tkey)
		}
		t.tokens, t.initErr = handshake.NewTokenProtector(tkey)
		if fleetTokens != nil {
			t.tokens = fleetTokens
		}
		if t.TokenReplayGuard == nil {
			t.TokenReplayGuard = NewTokenReplayGuard(DefaultTokenReplayCapacity)
		}
		if t.MaxHandshakes <= 0 {
			t.MaxHandshakes = 1024
		}
		t.ep = endpoint{
			cidGen: t.ConnectionIDGenerator, tokens: t.tokens, replay: t.TokenReplayGuard,
			resetter: t.statelessResetter, routedElsewhere: t.routedElsewhere,
			maxHandshakes: int64(t.MaxHandshakes), requireValidation: t.RequireAddressValidation,
			random: cryptoRandom, stats: &t.stats,
		}
		t.ep.routes.init()
		t.localAddr = t.localAddrPort()
		if t.SocketBufferSize <= 0 {
			t.SocketBufferSize = socketBufferSize
		}
		t.sock = newSysConn(t.Conn, socketOptions{
			disableGSO: t.DisableGSO, disableGRO: t.DisableGRO, disableECN: t.DisableECN,
			disableBatch: t.DisableBatchIO, bufferSize: t.SocketBufferSize,
			receiveDrops: &t.stats.receiveDrops,
		})
		t.wg.Add(1)
		go t.readLoop(t.sock, true)
		t.startExtraReaders()
	})
	return t.initErr
}

// route delivers one datagram, or a run of segSize-byte datagrams for
// one connection ID, and reports whether a connection took ownership of
// its buffer bp. m describes how it arrived.
func (t *Transport) route(d []byte, bp *[]byte, segSize int, m *rxMessage) bool {
	r := t.ep.handle(d)
	switch r.kind {
	case routeInvalid:
		t.stats.countDrop(DropInvalid)
		return false
	case routeConn:
		if !r.c.enqueue(t.inboundFor(d, bp, segSize, m)) {
			t.stats.countDrop(DropQueueFull)
			return false
		}
		return true
	case routeReset:
		return r.c.enqueue(t.inboundFor(d, bp, segSize, m))
	case routeClosed:
		r.closed.handle(datagramCount(len(d), segSize), len(d), m.remote())
		return false
	}
	// The slow path answers from the address the datagram came to
	// (rxCur), one socket's read loop at a time.
	t.slowMu.Lock()
	t.rxCur = m
	defer func() { t.rxCur = nil; t.slowMu.Unlock() }()
	return t.handleUnrouted(d, bp, r.cid, m)
}

// handleUnrouted asks the endpoint (endpoint.go) what to do with a
// datagram that routes to no connection, and does it: send its answer,
// start the connection or keep the 0-RTT datagram (listener.go). It
// reports whether a connection or the listener took bp.
func (t *Transport) handleUnrouted(d []byte, bp *[]byte, cid wire.ConnectionID, m *rxMessage) bool {
	now := time.Now() // the slow path's clock reading, handed to the endpoint
	var ls *listenState
	l := t.listener.Load()
	if l != nil {
		s := l.state(now)
		ls = &s
	}
	peer := m.peer()
	out := getPacketBuffer()
	defer putPacketBuffer(out)
	r := t.ep.handleUnrouted(now, d, cid, peer, ls, (*out)[:0])
	if r.drop != "" {
		t.stats.countDrop(r.drop)
	}
	switch r.outcome {
	case outcomeSend:
		t.writeTo(r.send, peer)
	case outcomeEarly:
		if l.bufferEarly(now, r.accept.hdr.DstConnID, peer, d, bp) {
			return true
		}
		t.stats.countDrop(DropRejected)
	case outcomeAccept:
		if l.startConnection(now, d, bp, peer, &r.accept) {
			return true
		}
		t.stats.countDrop(DropRejected)
	}
	return false
}

// Listen makes the Transport accept connections with tlsConf (which must
// have Certificates or GetCertificate, and NextProtos) and conf (nil for
// defaults). A Transport has at most one listener.
func (t *Transport) Listen(tlsConf *tls.Config, conf *Config) (*Listener, error) {
	return t.listen(tlsConf, conf, false)
}

// ListenEarly is like Listen, but Accept returns connections as soon as
// they start, before their handshake completes, so that the application
// can read 0-RTT data (Config.Allow0RTT) and send 0.5-RTT data. Until
// HandshakeComplete, the client's address and identity are not verified
// and the data may be replayed (see Stream.ReceivedEarlyData).
func (t *Transport) ListenEarly(tlsConf *tls.Config, conf *Config) (*Listener, error) {
	return t.listen(tlsConf, conf, true)
}

func (t *Transport) listen(tlsConf *tls.Config, conf *Config, early bool) (*Listener, error) {
	if err := t.init(); err != nil {
		return nil, err
	}
	tc, err := handshake.PrepareTLSConfig(tlsConf)
	if err != nil {
		return nil, err
	}
	l := newListener(t, tc, conf.withDefaults())
	l.tickets = t.sessionTickets(tc)
	l.early = early
	t.life.mu.Lock()
	defer t.life.mu.Unlock()
	if t.life.closed {
		return nil, ErrTransportClosed
	}
	if !t.listener.CompareAndSwap(nil, l) {
		return nil, errors.New("quic: Transport already has a listener")
	}
	return l, nil
}

// Dial connects to addr and returns once the handshake completed, ctx is
// done (the attempt is then abandoned) or the connection failed. If
// tlsConf.ServerName is empty, the host of addr (its IP address) takes its
// place, as tls.Dial does: the server's certificate is verified against
// it, unless InsecureSkipVerify is set, and the session cache keeps the
// connection's sessions under it (crypto/tls stores none for a QUIC
// client without a ServerName).
func (t *Transport) Dial(ctx context.Context, addr net.Addr, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return t.dial(ctx, addr, tlsConf, conf, false, nil)
}

// DialEarly connects to addr like Dial but returns as soon as the
// connection is started, before the handshake completes. When tlsConf has
// a ClientSessionCache holding a session from an earlier connection to the
// server that allows 0-RTT, streams opened and data written before the
// handshake completes are sent in 0-RTT packets, within the limits the
// server gave in that earlier connection (RFC 9001, Section 4.6). If the
// server declines 0-RTT, the data is sent again after the handshake,
// transparently; ConnectionState().Used0RTT tells which happened.
//
// 0-RTT data can be replayed by an attacker: send in it only requests that
// are safe to process twice (idempotent). Without a usable session the
// data simply waits for the handshake. Wait for HandshakeComplete before
// relying on the server's identity or the connection state.
func (t *Transport) DialEarly(ctx context.Context, addr net.Addr, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return t.dial(ctx, addr, tlsConf, conf, true, nil)
}

// dial starts a client connection; token, if set, goes in its Initial
// packets (an address token from an earlier connection).
func (t *Transport) dial(ctx context.Context, addr net.Addr, tlsConf *tls.Config, conf *Config, early bool, token []byte) (*Conn, error) {
	if err := t.init(); err != nil {
		return nil, err
	}
	tc, err := handshake.PrepareTLSConfig(tlsConf)
	if err != nil {
		return nil, err
	}
	if tc.ServerName == "" {
		// tc is a copy (PrepareTLSConfig). The version of the sessions
		// (firstVersionFor) and crypto/tls's session cache both go by
		// ServerName.
		tc.ServerName = hostOf(addr)
	}
	cfg := conf.withDefaults()
	var dcidBytes [8]byte
	rand.Read(dcidBytes[:])
	dcid := wire.NewConnectionID(dcidBytes[:])
	first, fromSession := firstVersionFor(tc, cfg.Versions)
	tokenKey := tokenStoreKey(tc.ServerName, addr)
	if token == nil && cfg.TokenStore != nil {
		token = cfg.TokenStore.Get(tokenKey + "|" + first.String())
		for _, v := range cfg.Versions[1:] {
			// Without a session to decide, a token of another version
			// (the server upgraded the connection that got it) makes
			// the connection start in that version.
			if token != nil || fromSession {
				break
			}
			if v.IsSupported() && v != first {
				if token = cfg.TokenStore.Get(tokenKey + "|" + v.String()); token != nil {
					first = v
				}
			}
		}
	}
	var vcache *versionedSessionCache
	if tc.ClientSessionCache != nil {
		vcache = &versionedSessionCache{inner: tc.ClientSessionCache, first: first}
		tc.ClientSessionCache = vcache
	}
	c := newConn(t, addr, cfg)
	if !t.trackConn(c) {
		return nil, ErrTransportClosed
	}
	scid, err := t.ep.newConnID(c)
	if err != nil {
		t.abandonConn(c)
		return nil, err
	}
	tr := cfg.newTracer(c, true, dcid)
	cp := connParams{
		tls: tc, connIDGen: t.ConnectionIDGenerator, localConnID: scid,
		peerConnID: dcid, origDstConnID: dcid, version: first, statelessReset: t.statelessResetter(),
		seed: randomSeed(), early: early, token: token, tokenKey: tokenKey, path: t.pathAddrsFor(addr),
		tracer: tr, ecn: t.sock.ecn(),
	}
	cp.maxSendPayload, cp.maxRecvPayload = t.sock.payloadLimits()
	st, err := newConnState(time.Now(), wire.RoleClient, cfg, cp)
	if err != nil {
		tracerDone(tr)
		t.ep.routes.remove(scid, c)
		t.abandonConn(c)
		return nil, err
	}
	if vcache != nil {
		vcache.state = st
	}
	c.start(st)
	if early {
		return c, nil
	}
	select {
	case <-c.handshakeDone:
		return c, nil
	case <-c.ctx.Done():
		return nil, context.Cause(c.ctx)
	case <-ctx.Done():
		c.request(&closeRequest{reason: "dial canceled"}, nil)
		return nil, ctx.Err()
	}
}

// hostOf returns the host part of addr: the IP address of a UDP address,
// without its port, as tls.Dial takes the host name from its address.
func hostOf(addr net.Addr) string {
	if ua, ok := addr.(*net.UDPAddr); ok {
		return ua.AddrPort().Addr().Unmap().String()
	}
	if host, _, err := net.SplitHostPort(addr.String()); err == nil {
		return host
	}
	return addr.String()
}

// Close closes every connection of the Transport (with an application
// close of code 0), the listener, and the socket if the Transport made it,
// and waits for all the Transport's goroutines to exit. Connections that
// closed keep answering the peer with their CONNECTION_CLOSE until their
// closing period ends (RFC 9000, Section 10.2), for at most 5 seconds.
// See Transport for what it does to calls in progress.
func (t *Transport) Close() error {
	// A Transport never used is closed without starting: its socket is
	// left as it is, unless the Transport made it.
	t.initOnce.Do(func() {
		t.initErr = ErrTransportClosed
		t.closing = make(chan struct{})
		t.runners.ch = make(chan *Conn)
	})
	t.shutdown(closeLinger)
	t.wg.Wait()
	return nil
}

// closeLinger bounds how long Transport.Close lets closed connections
// answer with their CONNECTION_CLOSE, and separately how long it waits for
// the connections' goroutines to hand over to their closed-connection
// records (which they do at once, unless a goroutine is held up).
const closeLinger = 5 * time.Second

// shutdown is Close without waiting for the Transport's goroutines, for
// the read loop to call when the socket fails (Close would wait for the
// read loop itself). Closed connections answer for at most closedWait
// (closed_conn.go).
func (t *Transport) shutdown(closedWait time.Duration) {
	t.closeOnce.Do(func() {
		// From here on nothing starts: Listen, Dial and new connections
		// from the listener fail (trackConn), and the connections left
		// are the ones listed.
		t.life.mu.Lock()
		t.life.closed = true
		conns := make([]*Conn, 0, len(t.life.conns))
		for c := range t.life.conns {
			conns = append(conns, c)
		}
		t.life.mu.Unlock()
		close(t.closing)
		if l := t.listener.Load(); l != nil {
			l.Close()
		}
		for _, c := range conns {
			c.wake() // a parked connection has no goroutine to see closing
		}
		// Each connection sends its CONNECTION_CLOSE and hands its IDs
		// over to a closed-connection record at once; one deadline for
		// all of them.
		wait := time.NewTimer(closeLinger)
		for _, c := range conns {
			select {
			case <-c.done:
				continue
			case <-wait.C:
			}
			break
		}
		wait.Stop()
		t.endClosed(closedWait)
		switch {
		case t.Conn == nil:
		case t.ownConn:
			t.Conn.Close()
		case t.sock != nil: // the read loop runs
			t.Conn.SetReadDeadline(time.Unix(1, 0)) // unblock the read loop
		}
		t.extraRx.unblock()
	})
}

func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	var s uint64
	for _, x := range b {
		s = s<<8 | uint64(x)
	}
	return s
}

// ListenAddr listens on the UDP address addr (such as "127.0.0.1:4433")
// with a Transport of its own, which closes once the Listener is closed
// and the connections it accepted ended (their closing periods included,
// 5 seconds at most); its socket is then released.
func ListenAddr(addr string, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	return listenAddr(addr, tlsConf, conf, false)
}

// DialAddr dials the UDP address addr from a Transport of its own on an
// ephemeral port. If tlsConf.ServerName is empty, a copy of tlsConf gets
// the host of addr ("localhost" of "localhost:4433", as tls.Dial takes
// it): the server's certificate is verified against that name, and the
// session cache keeps the sessions to resume under it. The Transport
// closes in the background once the connection ended, or the dial
// failed, after the connection's closing period (5 seconds at most);
// DialAddr never waits for it.
func DialAddr(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return dialAddr(ctx, addr, tlsConf, conf, false)
}
