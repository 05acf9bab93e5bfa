package quic

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// Deterministic tests of the endpoint (endpoint.go): real client Initial
// packets in, decisions and answers out, with explicit time.

// testEndpoint returns an endpoint with predictable connection IDs, a
// token key and a stateless reset key, and its counters.
func testEndpoint(t *testing.T) *endpoint {
	t.Helper()
	tokens, err := handshake.NewTokenProtector(simTokenKey)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := handshake.NewStatelessResetter(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return &endpoint{
		cidGen: &testConnIDGen{next: 0x5000}, tokens: tokens,
		replay:        NewTokenReplayGuard(DefaultTokenReplayCapacity),
		resetter:      func() *handshake.StatelessResetter { return rs },
		maxHandshakes: 4,
		random:        func(b []byte) { clear(b) },
		stats:         &transportCounters{},
	}
}

var testClientAddr = netip.MustParseAddrPort("192.0.2.1:5000")

// newClientInitial returns a client connection of version v with token and
// its first datagram (an Initial padded to 1200 bytes).
func newClientInitial(t *testing.T, now time.Time, v wire.Version, token []byte) (*connState, []byte) {
	t.Helper()
	ctls, _ := testTLS(t)
	dcid := wire.NewConnectionID([]byte{0xd0, 1, 2, 3, 4, 5, 6, 7})
	c, err := newConnState(now, wire.RoleClient, (&Config{Versions: []wire.Version{v}}).withDefaults(), connParams{
		tls: ctls, connIDGen: &testConnIDGen{next: 0xc000}, peerConnID: dcid, origDstConnID: dcid,
		version: v, seed: 1, token: token,
	})
	if err != nil {
		t.Fatal(err)
	}
	d := c.pollTransmit(now, make([]byte, 0, 1500))
	if len(d) < minInitialPacketSize {
		t.Fatalf("client's first datagram has %d bytes", len(d))
	}
	return c, d
}

func handleTest(e *endpoint, now time.Time, d []byte, l *listenState) endpointResult {
	cid, _ := wire.ParseDestConnectionID(d, 8)
	return e.handleUnrouted(now, d, cid, net.UDPAddrFromAddrPort(testClientAddr), l, make([]byte, 0, packetBufferSize))
}

// A client's first Initial starts a connection with the client's IDs and
// its Initial keys; one of an unsupported version gets a Version
// Negotiation packet listing ours and a reserved version (RFC 9000,
// Sections 6.1 and 15); one too small, or beyond the handshake limit, or
// on a closed listener, is dropped (Section 14.1).
func TestEndpointAcceptAndVersionNegotiation(t *testing.T) {
	now := time.Unix(1000, 0)
	e := testEndpoint(t)
	l := &listenState{versions: []wire.Version{wire.Version1}}
	_, d := newClientInitial(t, now, wire.Version1, nil)
	r := handleTest(e, now, d, l)
	if r.outcome != outcomeAccept || r.accept.token != tokenNone || r.accept.params.initialOpen == nil {
		t.Fatalf("first Initial: outcome %d, token %d", r.outcome, r.accept.token)
	}
	if cp := r.accept.params; cp.origDstConnID != r.accept.hdr.DstConnID || cp.peerConnID != r.accept.hdr.SrcConnID || cp.version != wire.Version1 || !cp.newToken.valid() {
		t.Errorf("connection parameters %+v", cp)
	}
	if r := handleTest(e, now, d[:1100], l); r.outcome != outcomeDrop || r.drop != DropRejected {
		t.Errorf("a 1100-byte Initial: outcome %d, drop %q", r.outcome, r.drop)
	}
	if r := handleTest(e, now, d, &listenState{versions: l.versions, handshakes: 4}); r.outcome != outcomeDrop {
		t.Errorf("beyond MaxHandshakes: outcome %d", r.outcome)
	}
	if r := handleTest(e, now, d, &listenState{versions: l.versions, closed: true}); r.outcome != outcomeDrop {
		t.Errorf("closed listener: outcome %d", r.outcome)
	}
	if r := handleTest(e, now, d, nil); r.outcome != outcomeDrop || r.drop != DropRejected {
		t.Errorf("no listener: outcome %d", r.outcome)
	}

	r = handleTest(e, now, d, &listenState{versions: []wire.Version{wire.Version2}})
	if r.outcome != outcomeSend || r.drop != DropUnsupportedVersion {
		t.Fatalf("Initial of version 1 to a version 2 server: outcome %d, drop %q", r.outcome, r.drop)
	}
	vn, err := wire.ParseVersionNegotiation(r.send)
	if err != nil || !vn.Contains(wire.Version2) || vn.Contains(wire.Version1) || vn.NumVersions() != 2 {
		t.Fatalf("Version Negotiation %x: %v", r.send, err)
	}
	if e.stats.versionNegotiationsSent.Load() != 1 {
		t.Error("Version Negotiation not counted")
	}
	// A Version Negotiation answer needs 1200 bytes: no amplification.
	if r := handleTest(e, now, d[:1100], &listenState{versions: []wire.Version{wire.Version2}}); r.outcome == outcomeSend {
		t.Error("Version Negotiation sent for a datagram below 1200 bytes")
	}
}

// Retry (RFC 9000, Section 8.1.2): with address validation required, the
// first Initial gets a Retry; the client's Initial with its token is
// accepted with the address validated and the IDs of Section 7.3; the same
// token under another key is INVALID_TOKEN.
func TestEndpointRetry(t *testing.T) {
	now := time.Unix(1000, 0)
	e := testEndpoint(t)
	e.requireValidation = func(net.Addr) bool { return true }
	l := &listenState{versions: []wire.Version{wire.Version1}}
	c, d := newClientInitial(t, now, wire.Version1, nil)
	odcid := c.origDstConnID
	r := handleTest(e, now, d, l)
	if r.outcome != outcomeSend || e.stats.retriesSent.Load() != 1 {
		t.Fatalf("outcome %d, %d Retry sent", r.outcome, e.stats.retriesSent.Load())
	}
	retry, err := wire.ParseRetryPacket(r.send)
	if err != nil {
		t.Fatal(err)
	}
	c.handleDatagram(now, bytes.Clone(r.send), 0)
	if !c.hasRetried {
		t.Fatal("the client did not take the Retry")
	}
	d = c.pollTransmit(now, make([]byte, 0, 1500))
	r = handleTest(e, now, d, l)
	if r.outcome != outcomeAccept || r.accept.token != tokenValid {
		t.Fatalf("Initial with the Retry token: outcome %d, token %d", r.outcome, r.accept.token)
	}
	cp := r.accept.params
	if !cp.addressValidated || cp.origDstConnID != odcid || !cp.hasRetrySrcConnID || cp.retrySrcConnID != retry.SrcConnID || cp.initialKeyConnID != retry.SrcConnID {
		t.Errorf("parameters after Retry: %+v", cp)
	}
	other := testEndpoint(t)
	other.tokens, _ = handshake.NewTokenProtector(bytes.Repeat([]byte{1}, 32))
	if r := handleTest(other, now, d, l); r.outcome != outcomeAccept || r.accept.token != tokenInvalidRetry {
		t.Errorf("Retry token of another key: outcome %d, token %d", r.outcome, r.accept.token)
	}
	// Expired: "a Retry token ... SHOULD have a short lifetime".
	if r := handleTest(e, now.Add(retryTokenLifetime+time.Second), d, l); r.accept.token != tokenInvalidRetry {
		t.Errorf("expired Retry token: token %d", r.accept.token)
	}
}

// A NEW_TOKEN token validates the address once; used again it is
// ignored (RFC 9000, Section 8.1.4) and counted.
func TestEndpointNewTokenReplay(t *testing.T) {
	now := time.Unix(1000, 0)
	e := testEndpoint(t)
	l := &listenState{versions: []wire.Version{wire.Version1}}
	tok := e.tokens.AppendNewToken(nil, now.Add(-time.Hour), testClientAddr.Addr())
	_, d := newClientInitial(t, now, wire.Version1, tok)
	if r := handleTest(e, now, d, l); r.outcome != outcomeAccept || r.accept.token != tokenValid || !r.accept.params.addressValidated {
		t.Fatalf("first use: outcome %d, token %d", r.outcome, r.accept.token)
	}
	if r := handleTest(e, now, d, l); r.outcome != outcomeAccept || r.accept.token != tokenNone || r.accept.params.addressValidated {
		t.Fatalf("second use: outcome %d, token %d", r.outcome, r.accept.token)
	}
	if e.stats.tokensReplayed.Load() != 1 {
		t.Errorf("%d replays counted", e.stats.tokensReplayed.Load())
	}
}

// A short-header datagram for an unknown connection ID gets a stateless
// reset (RFC 9000, Section 10.3): smaller than the datagram, at least 21
// bytes, with the fixed bit, ending with the ID's token; at most 100 a
// second.
func TestEndpointStatelessReset(t *testing.T) {
	now := time.Unix(1000, 0)
	e := testEndpoint(t)
	cid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	d := append([]byte{0x41}, cid.Bytes()...)
	d = append(d, make([]byte, 50)...)
	for i := range statelessResetsPerSecond {
		r := handleTest(e, now, d, nil)
		if r.outcome != outcomeSend || r.drop != DropUnknownConnection {
			t.Fatalf("reset %d: outcome %d", i, r.outcome)
		}
		tok := e.resetter().Token(cid)
		if len(r.send) != 42 || r.send[0]&0xc0 != 0x40 || !bytes.Equal(r.send[len(r.send)-16:], tok[:]) {
			t.Fatalf("reset %x", r.send)
		}
	}
	if r := handleTest(e, now, d, nil); r.outcome != outcomeDrop {
		t.Fatal("more than 100 resets in a second")
	}
	if r := handleTest(e, now.Add(1001*time.Millisecond), d, nil); r.outcome != outcomeSend {
		t.Fatal("no reset a second later")
	}
	if r := handleTest(e, now.Add(2*time.Second), d[:21], nil); r.outcome != outcomeDrop {
		t.Fatal("a reset for a 21-byte datagram would not be smaller")
	}
	if e.stats.resetsSent.Load() != statelessResetsPerSecond+1 {
		t.Errorf("%d resets counted", e.stats.resetsSent.Load())
	}
}

// 0-RTT before its Initial is kept only by a listener that allows 0-RTT
// (RFC 9000, Section 5.2.2).
func TestEndpointEarly0RTT(t *testing.T) {
	e := testEndpoint(t)
	b := []byte{0xc0 | 0x01<<4} // long header, 0-RTT, v1
	b = append(b, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0x40, 20)
	b = append(b, make([]byte, 20)...)
	now := time.Unix(1000, 0)
	if r := handleTest(e, now, b, &listenState{versions: []wire.Version{wire.Version1}, allow0RTT: true}); r.outcome != outcomeEarly {
		t.Errorf("0-RTT with Allow0RTT: outcome %d", r.outcome)
	}
	if r := handleTest(e, now, b, &listenState{versions: []wire.Version{wire.Version1}}); r.outcome != outcomeDrop {
		t.Errorf("0-RTT without Allow0RTT: outcome %d", r.outcome)
	}
}

// The endpoint owns the routing table: it picks and routes a new
// connection's handshake ID (newConnID), routes the IDs a connection
// issues later as the connection's events ask (handleConnIDEvent),
// refusing an ID another connection holds so that the connection picks
// another, and stops routing retired ones. An ID is routed before a frame
// can carry it: "When an endpoint issues a connection ID, it MUST accept
// packets that carry this connection ID for the duration of the
// connection or until its peer invalidates the connection ID via a
// RETIRE_CONNECTION_ID frame" (RFC 9000, Section 5.1.1).
func TestEndpointConnIDEvents(t *testing.T) {
	e := testEndpoint(t)
	e.routes.init()
	a, b := &Conn{}, &Conn{}
	// Connection a: its handshake ID comes from the endpoint, routed.
	aid, err := e.newConnID(a)
	if err != nil || aid.Len() != 8 {
		t.Fatalf("newConnID = %v, %v", aid, err)
	}
	short := func(cid ConnectionID) []byte {
		return append(append([]byte{0x40}, cid.Bytes()...), make([]byte, 30)...)
	}
	if r := e.handle(short(aid)); r.kind != routeConn || r.c != a {
		t.Fatalf("a's ID routes to %+v", r)
	}
	// Connection b generates its IDs; the next one it makes is a's.
	gen := &connIDTestGen{n: 8, next: 100}
	var ids localConnIDs
	if err := ids.init(gen, nil, ConnectionID{}, 0); err != nil {
		t.Fatal(err)
	}
	drain := func() (issued, refused, retired int) {
		for {
			ev, ok := ids.pollEvent()
			if !ok {
				return
			}
			routed := e.handleConnIDEvent(b, ev)
			switch {
			case ev.retire:
				retired++
				continue
			case routed:
				issued++
			default:
				refused++
			}
			if err := ids.onRouted(ev.seq, ev.cid, routed); err != nil {
				t.Fatal(err)
			}
		}
	}
	if issued, _, _ := drain(); issued != 1 {
		t.Fatalf("%d handshake IDs routed, want 1", issued)
	}
	// The next ID b makes is a's.
	ids.gen = &collidingGen{first: aid, rest: gen}
	if err := ids.setPeerLimit(2); err != nil {
		t.Fatal(err)
	}
	if ids.hasFrames() {
		t.Fatal("a frame for an ID the endpoint has not routed")
	}
	issued, refused, _ := drain()
	if issued != 1 || refused != 1 {
		t.Fatalf("issued %d, refused %d; want a's ID refused and another routed", issued, refused)
	}
	f, ok := ids.nextFrame()
	if !ok || f.ConnectionID == aid {
		t.Fatalf("frame %+v %v: want one for an ID other than a's", f, ok)
	}
	if r := e.handle(short(f.ConnectionID)); r.kind != routeConn || r.c != b {
		t.Fatalf("b's new ID routes to %+v", r)
	}
	if r := e.handle(short(aid)); r.c != a {
		t.Fatal("a lost its ID to b")
	}
	// The peer retires it: it routes nowhere, and an unknown short
	// header goes to the unrouted path.
	ids.frameSent(f.SequenceNumber)
	if err := ids.onRetire(f.SequenceNumber, ids.initial()); err != nil {
		t.Fatal(err)
	}
	if _, _, retired := drain(); retired != 1 {
		t.Fatalf("%d retired, want 1", retired)
	}
	if r := e.handle(short(f.ConnectionID)); r.kind != routeNone {
		t.Fatalf("a retired ID routes to %+v", r)
	}
	// When b is gone, none of its IDs route.
	ids.removeAll()
	drain()
	for i := range e.routes.shards {
		for cid, r := range e.routes.shards[i].m {
			if r.c == b {
				t.Errorf("%v still routes to b", cid)
			}
		}
	}
}

// collidingGen returns first, then what rest generates.
type collidingGen struct {
	first ConnectionID
	used  bool
	rest  ConnectionIDGenerator
}

func (g *collidingGen) ConnectionIDLen() int { return g.rest.ConnectionIDLen() }
func (g *collidingGen) GenerateConnectionID() (ConnectionID, error) {
	if !g.used {
		g.used = true
		return g.first, nil
	}
	return g.rest.GenerateConnectionID()
}

// A client's endpoint routes the server's Version Negotiation packet by
// its Destination Connection ID, the client's Source Connection ID
// (RFC 9000, Section 17.2.1), to the connection, which gives up when no
// version is left in common (Section 6.2); one for another connection ID
// routes nowhere and is dropped.
func TestSimClientEndpointVersionNegotiation(t *testing.T) {
	p := newSimPairOpts(t, testLink, 61, simPairOpts{
		client: &Config{Versions: []wire.Version{wire.Version1}},
		server: &Config{Versions: []wire.Version{wire.Version2}},
	})
	c := p.client.c
	// A stray one first, to another connection ID: dropped by the
	// endpoint before any connection sees it.
	stray := wire.AppendVersionNegotiation(nil, 0x55, []byte{9, 9, 9, 9, 9, 9, 9, 9}, c.origDstConnID.Bytes(), []wire.Version{wire.Version2})
	p.client.HandleDatagram(p.sim.Now(), &netsim.Datagram{Src: netsim.Addr{Host: 2, Port: 443}, Dst: netsim.Addr{Host: 1, Port: 5000}, Payload: stray})
	if c.closeState != stateActive || p.client.routed[routeNone] != 1 {
		t.Fatalf("after a stray Version Negotiation packet: state %v, routed %v", c.closeState, p.client.routed)
	}
	p.run(t, 5*time.Second, func() bool { return c.closeState != stateActive })
	var ve *VersionNegotiationError
	if !errors.As(c.closeErr, &ve) {
		t.Fatalf("client closed with %v, want a VersionNegotiationError", c.closeErr)
	}
	if p.server.c != nil {
		t.Error("the server started a connection for a version it does not accept")
	}
	if p.client.routed[routeNone] != 1 || p.client.routed[routeConn] == 0 {
		t.Errorf("client's endpoint routed %v (by kind), want the stray packet unrouted and the server's to the connection", p.client.routed)
	}
}

// An issued ID routes in all of a connection's Transports or in none: if
// one of them already routes it to another connection, the others stop
// routing it again and the connection is told to pick another, since the
// peer may send that ID to any of the connection's sockets (hostile
// review of issue 24: the extra Transports' answer was ignored).
func TestRouteConnIDEventAllOrNone(t *testing.T) {
	home := testEndpoint(t)
	home.routes.init()
	extra := make([]*Transport, 2)
	for i := range extra {
		extra[i] = &Transport{}
		extra[i].ep.routes.init()
	}
	c, other := &Conn{}, &Conn{}
	free := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	taken := wire.NewConnectionID([]byte{9, 9, 9, 9, 9, 9, 9, 9})
	extra[1].ep.routes.add(taken, other)

	if !routeConnIDEvent(c, home, extra, connIDEvent{seq: 1, cid: free}) {
		t.Fatal("a free ID was refused")
	}
	for i, e := range []*endpoint{home, &extra[0].ep, &extra[1].ep} {
		if got := e.routes.get(free).c; got != c {
			t.Errorf("endpoint %d: the free ID routes to %p, want the connection", i, got)
		}
	}
	if routeConnIDEvent(c, home, extra, connIDEvent{seq: 2, cid: taken}) {
		t.Fatal("an ID another connection holds in an extra Transport was accepted")
	}
	if got := home.routes.get(taken).c; got != nil {
		t.Error("the refused ID still routes in the home Transport")
	}
	if got := extra[0].ep.routes.get(taken).c; got != nil {
		t.Error("the refused ID still routes in the first extra Transport")
	}
	if got := extra[1].ep.routes.get(taken).c; got != other {
		t.Error("the other connection lost its ID")
	}
}
