package quic

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/quicstack/quic/handshake"
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
