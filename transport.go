package quic

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"slices"
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
	// key per Transport, so resets work within its lifetime only.
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

	// DisableGSO, DisableGRO and DisableECN turn off UDP segmentation
	// offload, receive offload and ECN (RFC 9000, Section 13.4) on the
	// socket; DisableBatchIO makes it read and write one datagram per
	// system call. By default each is used where the platform offers it
	// (Linux, with Conn a *net.UDPConn) and turned off for the socket if
	// the kernel or the interface refuses it; SocketInfo tells what is in
	// use.
	DisableGSO, DisableGRO, DisableECN, DisableBatchIO bool

	// SocketBufferSize is the UDP receive and send buffer size asked of
	// the kernel, which caps it (net.core.rmem_max and wmem_max on Linux,
	// unless the process may override them). Default 7 MiB: a burst of
	// handshakes or a fast sender overflows the kernel default (about
	// 200 KiB on Linux) and loses datagrams.
	SocketBufferSize int

	initOnce sync.Once
	sock     sysConn
	rxCur    *rxMessage // the datagram being routed (read loop only)
	tokens   *handshake.TokenProtector
	initErr  error
	handlers packetHandlerMap
	// closed are the connections in the closing or draining state whose
	// IDs route to what is left of them (closed_conn.go).
	closed closedConns
	// resetTokens routes stateless resets (reset_tokens.go).
	resetTokens resetTokenMap
	resetter    *handshake.StatelessResetter
	listener    atomic.Pointer[Listener]
	ownConn     bool

	conns         atomic.Int64 // connections not ended, closed ones included (closed_conn.go)
	closeWhenIdle atomic.Bool  // close once conns drops to 0 (ListenAddr)

	closeOnce sync.Once
	closing   chan struct{}
	wg        sync.WaitGroup
	runners   runnerPool // conn_runner.go

	resetBudget atomic.Int64 // stateless resets still allowed this second

	// localAddr is the socket's local address as paths know it.
	localAddr netip.AddrPort
	stats     transportCounters // see Stats
}

func (t *Transport) init() error {
	t.initOnce.Do(func() {
		if t.Conn == nil {
			t.initErr = errors.New("quic: Transport.Conn is nil")
			return
		}
		if t.ConnectionIDGenerator == nil {
			t.ConnectionIDGenerator = NewRandomConnectionIDGenerator(8)
		}
		key := t.StatelessResetKey
		if len(key) == 0 {
			key = make([]byte, 32)
			rand.Read(key)
		}
		t.resetter, t.initErr = handshake.NewStatelessResetter(key)
		if t.initErr != nil {
			return
		}
		tkey := t.TokenKey
		if len(tkey) == 0 {
			tkey = make([]byte, 32)
			rand.Read(tkey)
		}
		t.tokens, t.initErr = handshake.NewTokenProtector(tkey)
		if t.MaxHandshakes <= 0 {
			t.MaxHandshakes = 1024
		}
		t.handlers.init()
		t.localAddr = t.localAddrPort()
		if t.SocketBufferSize <= 0 {
			t.SocketBufferSize = socketBufferSize
		}
		t.sock = newSysConn(t.Conn, socketOptions{
			disableGSO: t.DisableGSO, disableGRO: t.DisableGRO, disableECN: t.DisableECN,
			disableBatch: t.DisableBatchIO, bufferSize: t.SocketBufferSize,
		})
		t.closing = make(chan struct{})
		t.runners.ch = make(chan *Conn)
		t.wg.Add(1)
		go t.readLoop()
	})
	return t.initErr
}

// route delivers one datagram, or a run of segSize-byte datagrams for
// one connection ID, and reports whether a connection took ownership of
// its buffer bp. m describes how it arrived.
func (t *Transport) route(d []byte, bp *[]byte, segSize int, m *rxMessage) bool {
	if len(d) == 0 {
		t.stats.countDrop(DropInvalid)
		return false
	}
	cidLen := t.ConnectionIDGenerator.ConnectionIDLen()
	cid, err := wire.ParseDestConnectionID(d, cidLen)
	if err != nil {
		t.stats.countDrop(DropInvalid)
		return false
	}
	if r := t.handlers.get(cid); r.c != nil {
		if !r.c.enqueue(t.inboundFor(d, bp, segSize, m)) {
			t.stats.countDrop(DropQueueFull)
			return false
		}
		return true
	} else if r.closed != nil {
		r.closed.handle(datagramCount(len(d), segSize), len(d))
		return false
	}
	if !wire.IsLongHeader(d[0]) {
		if c := t.resetTokens.lookup(d); c != nil {
			return c.enqueue(t.inboundFor(d, bp, segSize, m))
		}
		t.stats.countDrop(DropUnknownConnection)
		t.maybeSendStatelessReset(d, cid, m.peer())
		return false
	}
	hdr, err := wire.ParseInvariantHeader(d, cidLen)
	if err != nil {
		t.stats.countDrop(DropInvalid)
		return false
	}
	l := t.listener.Load()
	if l == nil {
		t.stats.countDrop(DropRejected)
		return false
	}
	if !slices.Contains(l.config.Versions, hdr.Version) || !hdr.Version.IsSupported() {
		t.stats.countDrop(DropUnsupportedVersion)
		t.sendVersionNegotiation(d, hdr, m.peer(), l.config.Versions)
		return false
	}
	if l.handleNewConnection(d, bp, m.peer()) {
		return true
	}
	t.stats.countDrop(DropRejected)
	return false
}

// sendVersionNegotiation answers a long-header packet of an unknown version
// (RFC 9000, Section 6.1): "A server sends a Version Negotiation packet in
// response to each packet that might initiate a new connection". Only
// datagrams of at least 1200 bytes get one, since only those can start a
// connection, which keeps the answer from amplifying an attack.
func (t *Transport) sendVersionNegotiation(d []byte, hdr wire.InvariantHeader, addr net.Addr, versions []wire.Version) {
	if len(d) < minInitialPacketSize || hdr.Version == wire.VersionNegotiationVersion {
		return
	}
	var r [5]byte
	rand.Read(r[:])
	list := make([]wire.Version, 0, len(versions)+1)
	for _, v := range versions {
		if v.IsSupported() {
			list = append(list, v)
		}
	}
	list = append(list, greaseVersion(r[1:], hdr.Version))
	vn := wire.AppendVersionNegotiation(nil, 0x40|r[0], hdr.SrcConnID, hdr.DstConnID, list)
	t.stats.versionNegotiationsSent.Add(1)
	t.writeTo(vn, addr)
}

// greaseVersion returns a reserved version (0x?a?a?a?a) made of random
// bytes, for Version Negotiation packets: "Endpoints MAY add reserved
// versions to any field where unknown or unsupported versions are
// ignored to test that a peer correctly ignores the value." (RFC 9000,
// Section 15). It is never the client's version: a client "MUST discard a
// Version Negotiation packet that lists the QUIC version selected by the
// client" (Section 6.2), so a fixed value would make a client offering it
// (to solicit Version Negotiation, Section 6.3) ignore the answer.
func greaseVersion(random []byte, client wire.Version) wire.Version {
	v := wire.Version(uint32(random[0])<<24|uint32(random[1])<<16|uint32(random[2])<<8|uint32(random[3]))&0xf0f0f0f0 | 0x0a0a0a0a
	if v == client {
		v ^= 0x10000000
	}
	return v
}

// maybeSendStatelessReset answers a short-header packet for an unknown
// connection ID with a stateless reset (RFC 9000, Section 10.3). It is
// smaller than the packet that triggered it ("An endpoint MUST NOT send a
// stateless reset that is three times or more larger than the packet it
// receives"; being smaller also prevents two endpoints from resetting each
// other forever, Section 10.3.3), at least 21 bytes long so that it looks
// like a short-header packet, and rate-limited.
func (t *Transport) maybeSendStatelessReset(d []byte, cid wire.ConnectionID, addr net.Addr) {
	size := min(len(d)-1, 42)
	if size < handshake.MinStatelessResetLen || cid.Len() == 0 || t.resetBudget.Add(-1) < 0 {
		return
	}
	bp := getPacketBuffer() // no allocation per garbage packet
	defer putPacketBuffer(bp)
	b := (*bp)[:size]
	rand.Read(b[:size-wire.StatelessResetTokenLen])
	b[0] = 0x40 | b[0]&0x3f // short header form with the fixed bit
	token := t.resetter.Token(cid)
	copy(b[size-wire.StatelessResetTokenLen:], token[:])
	t.stats.resetsSent.Add(1)
	t.writeTo(b, addr)
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
	l.early = early
	if !t.listener.CompareAndSwap(nil, l) {
		return nil, errors.New("quic: Transport already has a listener")
	}
	return l, nil
}

// Dial connects to addr and returns once the handshake completed, ctx is
// done (the attempt is then abandoned) or the connection failed.
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
	tr := cfg.newTracer(c, true, dcid)
	cp := connParams{
		tls: tc, connIDGen: t.ConnectionIDGenerator, routes: connRoutes{&t.handlers, c},
		peerConnID: dcid, origDstConnID: dcid, version: first, statelessReset: t.resetter,
		seed: randomSeed(), early: early, token: token, tokenKey: tokenKey, path: t.pathAddrsFor(addr),
		tracer: tr, ecn: t.sock.ecn(),
	}
	cp.maxSendPayload, cp.maxRecvPayload = t.sock.payloadLimits()
	st, err := newConnState(time.Now(), wire.RoleClient, cfg, cp)
	if err != nil {
		tracerDone(tr)
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
		c.request(&closeRequest{0, "dial canceled"}, nil)
		return nil, ctx.Err()
	}
}

// Close closes every connection of the Transport (with an application
// close of code 0), the listener, and the socket if the Transport made it,
// and waits for all the Transport's goroutines to exit. Connections that
// closed keep answering the peer with their CONNECTION_CLOSE until their
// closing period ends (RFC 9000, Section 10.2), for at most 5 seconds.
func (t *Transport) Close() error {
	t.init()
	t.shutdown(5 * time.Second)
	t.wg.Wait()
	return nil
}

// shutdown is Close without waiting for the Transport's goroutines, for
// the read loop to call when the socket fails (Close would wait for the
// read loop itself). Closed connections answer for at most closedWait
// (closed_conn.go).
func (t *Transport) shutdown(closedWait time.Duration) {
	t.closeOnce.Do(func() {
		close(t.closing)
		if l := t.listener.Load(); l != nil {
			l.Close()
		}
		conns := t.handlers.all()
		for _, c := range conns {
			c.wake() // a parked connection has no goroutine to see closing
		}
		for _, c := range conns {
			select {
			case <-c.done:
			case <-time.After(5 * time.Second):
			}
		}
		t.endClosed(closedWait)
		if t.ownConn {
			t.Conn.Close()
		} else {
			t.Conn.SetReadDeadline(time.Unix(1, 0)) // unblock the read loop
		}
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
// with a Transport of its own, closed with the Listener.
func ListenAddr(addr string, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, err
	}
	t := &Transport{Conn: udp, ownConn: true}
	l, err := t.Listen(tlsConf, conf)
	if err != nil {
		t.Close()
		return nil, err
	}
	l.ownTransport = true
	return l, nil
}

// DialAddr dials the UDP address addr from a Transport of its own on an
// ephemeral port, closed when the connection ends.
func DialAddr(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	t := &Transport{Conn: udp, ownConn: true}
	c, err := t.Dial(ctx, raddr, tlsConf, conf)
	if err != nil {
		t.Close()
		return nil, err
	}
	// The Transport closes once the connection ended, its closing or
	// draining state included (closed_conn.go).
	t.closeWhenIdle.Store(true)
	if t.conns.Load() == 0 {
		go t.Close()
	}
	return c, nil
}
