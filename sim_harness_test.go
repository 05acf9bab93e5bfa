package quic

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	mathrand "math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// Test files are named for what they test: conn_recv_..._test.go for
// conn_recv.go, endpoint_test.go for endpoint*.go, and so on; tests of a
// scenario that spans many files (a transfer through loss, a handshake
// under attack, random path changes) are scenario_*_test.go. This file and
// sim_helpers_test.go are the simulator harness (newSimPairOpts): two
// endpoints on a simulated network (internal/netsim) with a simulated
// clock.

// testTLS returns prepared client and server TLS configurations sharing a
// freshly made CA, for "localhost" with ALPN "test".
func testTLS(t testing.TB) (client, server *tls.Config) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	var err error
	client, err = handshake.PrepareTLSConfig(&tls.Config{RootCAs: roots, ServerName: "localhost", NextProtos: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	server, err = handshake.PrepareTLSConfig(&tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	return client, server
}

// simEndpoint wraps a connState as a netsim.Endpoint, as a Transport
// drives a Conn: every datagram goes through the real endpoint
// (endpoint.handle: routing by connection ID, stateless-reset detection;
// endpoint.handleUnrouted for the rest), and the connection's
// connection-ID events and the peer's reset tokens go to that endpoint
// before each poll (simEndpoint.sync, as Conn.routeConnIDs and
// Conn.syncResetTokens do). A server endpoint creates its connState from
// the first Initial packet it receives.
type simEndpoint struct {
	t       testing.TB
	c       *connState
	peer    netsim.Addr
	buf     []byte
	lastNow time.Time
	// server side
	pending   []*stream
	serverCfg *Config
	serverTLS *tls.Config
	seed      uint64
	resetter  *handshake.StatelessResetter // for the server's connState
	// ep is a server's real endpoint (endpoint.go), made at its first
	// datagram: it accepts the connection, or answers with Retry
	// (requireRetry), Version Negotiation or a stateless reset while
	// there is none. answers holds those answers until the next poll,
	// stats the endpoint's counters, received counts the datagrams
	// received.
	ep           *endpoint
	ident        *Conn                      // the connection's name in ep's tables
	tokens       []wire.StatelessResetToken // the peer's reset tokens registered with ep
	routed       [routeReset + 1]int        // datagrams by ep.handle's decision
	requireRetry bool
	answers      []simAnswer
	stats        transportCounters
	received     int

	// Test hooks: dropIn and dropOut, if set, drop the datagrams they
	// return true for, received or sent; inject holds datagrams to send
	// at the next poll, as they are (see injectPacket).
	dropIn                func(now time.Time, d *netsim.Datagram) bool
	dropOut               func(now time.Time, d []byte) bool
	inject                [][]byte
	droppedIn, droppedOut int
	sentOut               int
	lastSent              time.Time
	// onSend, if set, sees every datagram sent, its addresses and whether
	// it carries a new PATH_CHALLENGE.
	onSend func(from, to netsim.Addr, d []byte, challenge bool)
	// preferred, on a server, is the preferred address it offers.
	preferred *wire.PreferredAddress
	// maxRecvPayload, on a server, is the max_udp_payload_size it
	// advertises (0: the default).
	maxRecvPayload int
	// ecn, on a server, makes its connection mark packets (as a socket
	// with ECN does); on either side, the datagrams sent carry the
	// connection's marks.
	ecn bool
	// node is the simulator's node of the endpoint, if newSimPairOpts
	// attached it: the connection's wakeups wake it.
	node *netsim.Node
}

// simAddr is the inverse of netsim.Addr.AddrPort.
func simAddr(ap netip.AddrPort) netsim.Addr {
	b := ap.Addr().As4()
	return netsim.Addr{Host: uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), Port: ap.Port()}
}

func (e *simEndpoint) HandleDatagram(now time.Time, d *netsim.Datagram) {
	e.lastNow = now
	e.received++
	if e.dropIn != nil && e.dropIn(now, d) {
		e.droppedIn++
		return
	}
	ep := e.endpoint()
	r := ep.handle(d.Payload)
	e.routed[r.kind]++
	switch r.kind {
	case routeConn, routeReset:
		if r.c != e.ident || e.c == nil {
			return
		}
	case routeNone:
		if !e.handleUnrouted(now, d, r.cid) {
			return
		}
	default:
		return
	}
	e.c.handleDatagramOn(now, pathAddrs{local: d.Dst.AddrPort(), remote: d.Src.AddrPort()}, d.Payload, ackhandler.ECNMark(d.ECN))
	e.sync(now)
}

// sync hands the connection's connection-ID events to the endpoint, and
// its answers back, and registers the peer's stateless reset tokens with
// it: what Conn.routeConnIDs and Conn.syncResetTokens do.
func (e *simEndpoint) sync(now time.Time) {
	if e.c == nil {
		return
	}
	ep := e.endpoint()
	e.c.issueDueConnIDs(now)
	for {
		ev, ok := e.c.localIDs.pollEvent()
		if !ok {
			break
		}
		routed := ep.handleConnIDEvent(e.ident, ev)
		if ev.retire {
			continue
		}
		if err := e.c.localIDs.onRouted(ev.seq, ev.cid, routed); err != nil {
			e.c.closeWithError(now, err)
		}
	}
	var buf [maxResetTokensPerConn]wire.StatelessResetToken
	cur := e.c.peerIDs.usedResetTokens(buf[:0])
	if !slices.Equal(cur, e.tokens) {
		ep.resetTokens.update(e.ident, e.tokens, cur)
		e.tokens = append(e.tokens[:0], cur...)
	}
}

// simAnswer is a datagram a server's endpoint answers with.
type simAnswer struct {
	to netsim.Addr
	b  []byte
}

// simTokenKey protects the simulated servers' address tokens.
var simTokenKey = bytes.Repeat([]byte{0x70}, 32)

// endpoint returns the server's endpoint, making it at the first call:
// the code a Transport runs, with the simulation's seed for its random
// bytes and predictable connection IDs.
func (e *simEndpoint) endpoint() *endpoint {
	if e.ep != nil {
		return e.ep
	}
	tokens, err := handshake.NewTokenProtector(simTokenKey)
	if err != nil {
		e.t.Fatal(err)
	}
	rng := mathrand.New(mathrand.NewPCG(e.seed, 0x5e))
	gen := ConnectionIDGenerator(&testConnIDGen{next: 0x5000})
	if e.c != nil {
		gen = e.c.localIDs.gen // a client: its connection's generator
	}
	e.ident = &Conn{}
	e.ep = &endpoint{
		cidGen: gen, tokens: tokens,
		replay: NewTokenReplayGuard(DefaultTokenReplayCapacity),
		resetter: func() *handshake.StatelessResetter {
			if e.resetter == nil {
				return nil // no key: no stateless resets
			}
			return e.resetter
		},
		maxHandshakes: 1024,
		random: func(b []byte) {
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
		},
		stats: &e.stats,
	}
	if e.requireRetry {
		e.ep.requireValidation = func(net.Addr) bool { return true }
	}
	e.ep.routes.init()
	return e.ep
}

// handleUnrouted hands a datagram that routes to no connection to the
// endpoint, which starts the server's connection (a server without one),
// answers (Version Negotiation, Retry, stateless reset) or drops it. It
// reports whether the new connection is to process the datagram.
func (e *simEndpoint) handleUnrouted(now time.Time, d *netsim.Datagram, cid wire.ConnectionID) bool {
	ep := e.endpoint()
	var ls *listenState
	if e.serverCfg != nil {
		ls = &listenState{versions: e.serverCfg.Versions, allow0RTT: e.serverCfg.Allow0RTT, closed: e.c != nil}
	}
	r := ep.handleUnrouted(now, d.Payload, cid, net.UDPAddrFromAddrPort(d.Src.AddrPort()), ls, make([]byte, 0, packetBufferSize))
	switch r.outcome {
	case outcomeSend:
		e.answers = append(e.answers, simAnswer{d.Src, r.send})
		return false
	case outcomeAccept:
	default:
		return false // dropped; 0-RTT before its Initial is not kept
	}
	cp := r.accept.params
	cp.tls, cp.seed = e.serverTLS, e.seed
	cp.path = pathAddrs{local: d.Dst.AddrPort(), remote: d.Src.AddrPort()}
	cp.preferredAddress, cp.maxRecvPayload, cp.ecn = e.preferred, e.maxRecvPayload, e.ecn
	// As Listener.startConnection: the client's original destination ID
	// and the connection's first IDs route to it.
	if !ep.routes.add(r.accept.hdr.DstConnID, e.ident) {
		return false
	}
	var err error
	if cp.localConnID, err = ep.newConnID(e.ident); err != nil {
		e.t.Fatalf("server connection ID: %v", err)
	}
	if e.preferred != nil {
		if cp.preferredConnID, err = ep.newConnID(e.ident); err != nil {
			e.t.Fatalf("preferred address connection ID: %v", err)
		}
	}
	c, err := newConnState(now, wire.RoleServer, e.serverCfg, cp)
	if err != nil {
		e.t.Fatalf("server connection: %v", err)
	}
	if r.accept.token == tokenInvalidRetry {
		// As Listener.startConnection: INVALID_TOKEN (RFC 9000,
		// Section 8.1.2).
		c.bytesReceived = uint64(len(d.Payload))
		c.closeWithError(now, &wire.TransportError{Code: wire.InvalidToken, Reason: "invalid Retry token"})
	}
	if e.node != nil {
		c.streams.wake = e.node.Wake // as newSimPairOpts does for the client
	}
	e.c = c
	e.peer = d.Src
	e.sync(now)
	return r.accept.token != tokenInvalidRetry
}

func (e *simEndpoint) HandleTimeout(now time.Time) {
	e.lastNow = now
	if e.c != nil {
		e.c.handleTimeout(now)
	}
}

func (e *simEndpoint) PollTransmit(now time.Time, out *netsim.Outbox) {
	e.lastNow = now
	for _, d := range e.inject {
		out.Send(e.peer, d, netsim.NotECT)
	}
	e.inject = nil
	for _, a := range e.answers {
		out.Send(a.to, a.b, netsim.NotECT)
	}
	e.answers = nil
	if e.c == nil {
		return
	}
	e.sync(now)
	for i := 0; i < 64; i++ {
		challenges := e.c.paths.challengesSent
		d, addrs := e.c.pollTransmitOn(now, e.buf[:0])
		if d == nil && e.c.localIDs.eventsPending() {
			e.sync(now) // as Conn.flush: IDs issued while polling
			continue
		}
		if d == nil {
			return
		}
		if e.dropOut != nil && e.dropOut(now, d) {
			e.droppedOut++
			continue
		}
		e.sentOut++
		e.lastSent = now
		from, to := out.Local(), e.peer
		if addrs.remote.IsValid() {
			to = simAddr(addrs.remote)
		}
		if addrs.local.IsValid() {
			from = simAddr(addrs.local)
		}
		if e.onSend != nil {
			e.onSend(from, to, d, e.c.paths.challengesSent > challenges)
		}
		mark := netsim.NotECT
		if e.ecn {
			mark = netsim.ECN(e.c.sendECN)
		}
		out.SendFrom(from, to, d, mark)
	}
}

func (e *simEndpoint) NextDeadline() time.Time {
	if e.c == nil {
		return time.Time{}
	}
	return e.c.nextDeadline(e.lastNow)
}

// testConnIDGen makes predictable 8-byte connection IDs.
type testConnIDGen struct{ next uint64 }

func (g *testConnIDGen) GenerateConnectionID() (ConnectionID, error) {
	g.next++
	var b [8]byte
	for i := range b {
		b[i] = byte(g.next >> (56 - 8*i))
	}
	return wire.NewConnectionID(b[:]), nil
}

func (g *testConnIDGen) ConnectionIDLen() int { return 8 }

// simPair is a client and a server connection on a simulated path.
type simPair struct {
	sim            *netsim.Sim
	net            *netsim.Network
	path           netsim.Path
	client, server *simEndpoint
	cnode, snode   *netsim.Node
}

// run advances simulated time in 1 ms steps, calling step (the
// application's side: reads, writes) between them, until step reports done
// or limit passes.
func (p *simPair) run(t testing.TB, limit time.Duration, step func() bool) {
	t.Helper()
	end := p.sim.Now().Add(limit)
	for p.sim.Now().Before(end) {
		if step() {
			return
		}
		p.cnode.Wake()
		p.snode.Wake()
		p.sim.RunFor(time.Millisecond)
	}
	t.Fatalf("condition not reached within %v of simulated time", limit)
}

var testLink = netsim.LinkConfig{Bandwidth: 100_000_000, Delay: 10 * time.Millisecond, QueuePackets: 1000}

func TestSimHandshake(t *testing.T) {
	p := newSimPair(t, testLink, nil, 1)
	p.run(t, 5*time.Second, func() bool {
		return p.server.c != nil && p.client.c.handshakeConfirmed && p.server.c.handshakeConfirmed
	})
	// RFC 9001: the client completes after one round trip plus the
	// server's flight; confirmation needs HANDSHAKE_DONE, 1.5 RTT.
	if el := p.sim.Elapsed(); el > 100*time.Millisecond {
		t.Errorf("handshake took %v of simulated time on a 20 ms RTT path", el)
	}
	for _, c := range []*connState{p.client.c, p.server.c} {
		if !c.spaces[ackhandler.SpaceInitial].discarded || !c.spaces[ackhandler.SpaceHandshake].discarded {
			t.Errorf("%v kept Initial or Handshake keys after confirmation", c.role)
		}
		if c.closeState != stateActive {
			t.Errorf("%v closed: %v", c.role, c.closeErr)
		}
	}
	if st := p.client.c.tls.ConnectionState(); st.NegotiatedProtocol != "test" {
		t.Errorf("ALPN %q", st.NegotiatedProtocol)
	}
}

// simWrite writes p to s without blocking and returns how much was taken.
func simWrite(s *stream, p []byte) int {
	s.mu.Lock()
	n := s.send.write(p)
	s.mu.Unlock()
	if n > 0 {
		s.m.markAttention(s)
	}
	return n
}

// simRead reads what is available from s without blocking.
func simRead(s *stream, p []byte) (int, error) {
	n, err, _ := s.readNow(p, false)
	return n, err
}

func TestSimStreamTransfer(t *testing.T) {
	for _, size := range []int{1 << 20, 10 << 20} {
		p := newSimPair(t, testLink, nil, 2)
		p.run(t, 5*time.Second, func() bool { return p.client.c.handshakeComplete })
		s, _, err := p.client.c.streams.openStream(true)
		if err != nil || s == nil {
			t.Fatalf("openStream: %v %v", s, err)
		}
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		written := 0
		var got bytes.Buffer
		var srv *stream
		buf := make([]byte, 64<<10)
		eof := false
		p.run(t, 60*time.Second, func() bool {
			if written < len(data) {
				written += simWrite(s, data[written:])
				if written == len(data) {
					s.closeWrite()
				}
				p.cnode.Wake()
			}
			if srv == nil && p.server.c != nil {
				srv, _, _ = p.server.c.streams.acceptStream(true)
			}
			for srv != nil && !eof {
				n, err := simRead(srv, buf)
				got.Write(buf[:n])
				if err == io.EOF {
					eof = true
				} else if err != nil {
					t.Fatalf("read: %v", err)
				}
				if n == 0 {
					break
				}
				p.snode.Wake()
			}
			return eof
		})
		if !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("received %d bytes, want %d, equal=%v", got.Len(), len(data), bytes.Equal(got.Bytes(), data))
		}
		t.Logf("%d MB in %v of simulated time", size>>20, p.sim.Elapsed())
	}
}

func TestSimHandshakeUnderLoss(t *testing.T) {
	lossy := testLink
	lossy.LossProb = 0.3
	var dropped int64
	for seed := uint64(1); seed <= 20; seed++ {
		p := newSimPair(t, lossy, nil, seed)
		p.run(t, 60*time.Second, func() bool {
			return p.server.c != nil && p.client.c.handshakeConfirmed && p.server.c.handshakeConfirmed
		})
		dropped += p.path.AB.Stats().Dropped() + p.path.BA.Stats().Dropped()
	}
	if dropped == 0 {
		t.Fatal("no datagram was lost: the test did not exercise loss recovery")
	}
	t.Logf("20 handshakes completed with %d datagrams lost", dropped)
}

// RFC 9000, Section 10.1: "If a max_idle_timeout is specified by either
// endpoint ... the connection is silently closed and its state is
// discarded when it remains idle for longer than the minimum of the
// max_idle_timeout value advertised by both endpoints."
func TestSimIdleTimeout(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIdleTimeout: 30 * time.Second}, 3)
	p.run(t, 5*time.Second, func() bool { return p.client.c.handshakeConfirmed && p.server.c.handshakeConfirmed })
	p.sim.RunFor(time.Hour)
	for _, c := range []*connState{p.client.c, p.server.c} {
		if c.closeState != stateClosed {
			t.Fatalf("%v still open after an hour idle", c.role)
		}
		if _, ok := c.closeErr.(*IdleTimeoutError); !ok {
			t.Fatalf("%v closed with %v", c.role, c.closeErr)
		}
	}
}

func TestSimKeepAlive(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIdleTimeout: 30 * time.Second, KeepAlivePeriod: 10 * time.Second}, 4)
	p.run(t, 5*time.Second, func() bool { return p.client.c.handshakeConfirmed && p.server.c.handshakeConfirmed })
	p.sim.RunFor(10 * time.Minute)
	for _, c := range []*connState{p.client.c, p.server.c} {
		if c.closeState != stateActive {
			t.Fatalf("%v closed despite keep-alive: %v", c.role, c.closeErr)
		}
	}
}

// RFC 9000, Section 10.2: the peer of an endpoint that closes with
// CONNECTION_CLOSE learns the code, and both ends release the connection
// after the closing and draining periods.
func TestSimApplicationClose(t *testing.T) {
	p := newSimPair(t, testLink, nil, 5)
	p.run(t, 5*time.Second, func() bool { return p.client.c.handshakeConfirmed && p.server.c.handshakeConfirmed })
	p.client.c.closeApplication(p.sim.Now(), 0x42, "bye")
	p.run(t, 5*time.Second, func() bool {
		return p.client.c.closeState == stateClosed && p.server.c.closeState == stateClosed
	})
	ae, ok := p.server.c.closeErr.(*ApplicationError)
	if !ok || ae.Code != 0x42 || ae.Reason != "bye" || !ae.Remote {
		t.Fatalf("server saw %v", p.server.c.closeErr)
	}
	if ae, ok := p.client.c.closeErr.(*ApplicationError); !ok || ae.Remote {
		t.Fatalf("client saw %v", p.client.c.closeErr)
	}
}

// Many short request-response streams through a small stream limit: the
// limit rises as streams close (RFC 9000, Section 4.6), so all complete.
func TestSimManyStreamsThroughLimit(t *testing.T) {
	const total = 2000
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 100}, 6)
	p.run(t, 5*time.Second, func() bool { return p.client.c.handshakeComplete })
	opened, done := 0, 0
	var clientStreams []*stream
	buf := make([]byte, 64)
	maxOpenAtOnce := 0
	p.run(t, 120*time.Second, func() bool {
		for opened < total {
			s, _, err := p.client.c.streams.openStream(true)
			if err != nil {
				t.Fatal(err)
			}
			if s == nil {
				break
			}
			opened++
			simWrite(s, []byte("ping"))
			s.closeWrite()
			clientStreams = append(clientStreams, s)
		}
		maxOpenAtOnce = max(maxOpenAtOnce, len(clientStreams))
		if p.server.c != nil {
			for {
				s, _, _ := p.server.c.streams.acceptStream(true)
				if s == nil {
					break
				}
				p.server.pending = append(p.server.pending, s)
			}
			keep := p.server.pending[:0]
			for _, s := range p.server.pending {
				n, err := simRead(s, buf)
				_ = n
				if err == io.EOF {
					simWrite(s, []byte("pong"))
					s.closeWrite()
					continue
				}
				keep = append(keep, s)
			}
			p.server.pending = keep
		}
		keepC := clientStreams[:0]
		for _, s := range clientStreams {
			_, err := simRead(s, buf)
			if err == io.EOF {
				done++
				continue
			}
			keepC = append(keepC, s)
		}
		clientStreams = keepC
		return done == total
	})
	if maxOpenAtOnce > 100 {
		t.Errorf("had %d streams open at once with a limit of 100", maxOpenAtOnce)
	}
	t.Logf("%d streams in %v of simulated time", total, p.sim.Elapsed())
}
