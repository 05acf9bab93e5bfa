package quic

import (
	"crypto/rand"
	"net"
	"slices"
	"time"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// The endpoint: what a socket does with a datagram whose Destination
// Connection ID routes to no connection (RFC 9000, Section 5.2). It starts
// a server connection (Section 7) with the address-validation state of the
// client's token (Section 8.1), answers with Version Negotiation
// (Section 6.1), Retry (Section 8.1.2) or a stateless reset
// (Section 10.3), keeps 0-RTT data that came before its Initial
// (Section 5.2.2), or drops the datagram.
//
// endpoint is sans-IO, like connState: it is handed the time and the
// datagram and returns what to send and what to start; it never reads the
// clock, never touches a socket and starts no goroutine. The Transport's
// read loop drives it (Transport.route) and so does the simulator
// (simEndpoint in sim_harness_test.go), so that accepting, Retry, token
// checks, Version Negotiation and stateless resets are tested
// deterministically. It owns the routing table (routes, endpoint_routes.go)
// as data: connections ask it to route and retire their IDs through
// events (connIDEvent) that their drivers hand it. Its other state (the
// stateless-reset budget) belongs to the one goroutine that drives
// handleUnrouted.
type endpoint struct {
	// routes maps connection IDs to connections; its shards' locks make
	// it safe for concurrent use (endpoint_routes.go).
	routes packetHandlerMap
	// resetTokens maps the peers' stateless reset tokens to connections,
	// under its own lock (reset_tokens.go).
	resetTokens resetTokenMap

	cidGen ConnectionIDGenerator
	tokens *handshake.TokenProtector
	replay TokenReplayGuard
	// resetter returns the stateless-reset token source of the moment
	// (a Transport may take another's key, reset_tokens.go).
	resetter func() *handshake.StatelessResetter
	// routedElsewhere, if set, reports that a Transport sharing the reset
	// key routes cid, so that no reset may be sent for it.
	routedElsewhere func(cid wire.ConnectionID) bool
	// maxHandshakes and requireValidation are Transport.MaxHandshakes and
	// Transport.RequireAddressValidation.
	maxHandshakes     int64
	requireValidation func(net.Addr) bool
	random            func([]byte) // crypto/rand.Read unless a test seeds it
	stats             *transportCounters

	// Stateless resets still allowed in the second that began at
	// resetRefill; the zero time fills the budget at the first reset: a
	// restarted server's first second is when its lost connections' peers
	// most need resets.
	resetBudget int
	resetRefill time.Time
}

// statelessResetsPerSecond bounds the stateless resets an endpoint sends.
const statelessResetsPerSecond = 100

// listenState is what the endpoint needs to know of the listener when it
// decides about a new connection; nil: no listener.
type listenState struct {
	versions   []wire.Version
	allow0RTT  bool
	closed     bool
	handshakes int64 // in progress
	failures   int64 // handshakes that failed lately (listener_retry.go)
	queued     int   // waiting for Accept
}

// endpointOutcome is what to do with a datagram that routes nowhere.
type endpointOutcome uint8

const (
	outcomeDrop   endpointOutcome = iota
	outcomeSend                   // send endpointResult.send back to the sender
	outcomeAccept                 // start a server connection with endpointResult.accept
	outcomeEarly                  // keep the 0-RTT datagram for the connection its Initial will start
)

// endpointResult is the endpoint's decision about one datagram.
type endpointResult struct {
	outcome endpointOutcome
	// drop, if set, is counted as the datagram's drop reason (also with
	// outcomeSend: the datagram itself reaches no connection).
	drop PacketDropReason
	// send is the datagram to answer with (outcomeSend), in the caller's
	// buffer.
	send []byte
	// accept holds, for outcomeAccept, the client's first Initial's
	// header and the connection parameters decided from it; for
	// outcomeEarly, the header.
	accept acceptDecision
}

// acceptDecision is what the endpoint decided about a new server
// connection: its parameters (connection IDs, version, Initial keys,
// address validation, NEW_TOKEN source) and the token's verdict. The
// driver adds what only it knows (TLS, tracer, path, payload limits).
type acceptDecision struct {
	hdr    wire.LongHeader
	token  tokenVerdict
	params connParams
}

// handleUnrouted decides what to do with datagram d from peer whose
// Destination Connection ID cid routes to no connection and, for a short
// header, whose last 16 bytes are no stateless reset token of ours. Answers
// are built in out, which has room for a datagram of packetBufferSize.
func (e *endpoint) handleUnrouted(now time.Time, d []byte, cid wire.ConnectionID, peer net.Addr, l *listenState, out []byte) endpointResult {
	if !wire.IsLongHeader(d[0]) {
		if b := e.statelessReset(now, d, cid, out); b != nil {
			return endpointResult{outcome: outcomeSend, drop: DropUnknownConnection, send: b}
		}
		return endpointResult{drop: DropUnknownConnection}
	}
	hdr, err := wire.ParseInvariantHeader(d, e.cidGen.ConnectionIDLen())
	if err != nil {
		return endpointResult{drop: DropInvalid}
	}
	if l == nil {
		return endpointResult{drop: DropRejected}
	}
	if !slices.Contains(l.versions, hdr.Version) || !hdr.Version.IsSupported() {
		if b := e.versionNegotiation(d, hdr, l.versions, out); b != nil {
			return endpointResult{outcome: outcomeSend, drop: DropUnsupportedVersion, send: b}
		}
		return endpointResult{drop: DropUnsupportedVersion}
	}
	r := e.newConnection(now, d, peer, l, out)
	if r.outcome == outcomeDrop {
		// A Handshake packet for a connection this server does not know:
		// its handshake ended here (HandshakeIdleTimeout) while the
		// client's was complete. "An endpoint MAY send a Stateless Reset
		// in response to a packet with a long header. Sending a
		// Stateless Reset is not effective prior to the stateless reset
		// token being available to a peer." (RFC 9000, Section 10.3) A
		// client sending Handshake packets to this ID has the token if
		// its handshake completed, and until the handshake is confirmed
		// it sends nothing else: "An endpoint MUST NOT set its PTO timer
		// for the Application Data packet number space until the
		// handshake is confirmed" (RFC 9002, Section 6.2.1). Ignored, it
		// would probe until its idle timeout.
		if pt, err := wire.PacketTypeOf(d); err == nil && pt == wire.PacketTypeHandshake {
			if b := e.statelessReset(now, d, cid, out); b != nil {
				return endpointResult{outcome: outcomeSend, drop: r.drop, send: b}
			}
		}
	}
	return r
}

// newConnection decides about a long-header packet of a version the
// listener accepts: a client's first Initial packet starts a connection,
// or a Retry, when its address is to be validated first. "A server MUST
// discard an Initial packet that is carried in a UDP datagram with a
// payload that is smaller than the smallest allowed maximum datagram size
// of 1200 bytes" (RFC 9000, Section 14.1), and the client's Destination
// Connection ID must be at least 8 bytes (Section 7.2).
func (e *endpoint) newConnection(now time.Time, d []byte, peer net.Addr, l *listenState, out []byte) endpointResult {
	reject := endpointResult{drop: DropRejected}
	if l.closed {
		return reject
	}
	hdr, pnOff, err := wire.ParseLongHeader(d)
	if err != nil || hdr.DstConnID.Len() < 8 || !wire.FixedBitSet(d[0]) {
		// A zero Fixed Bit: "not valid packets in this version and MUST
		// be discarded" (RFC 9000, Section 17.2; connState.handlePacket).
		return reject
	}
	if hdr.Type == wire.PacketType0RTT {
		if !l.allow0RTT {
			return reject
		}
		return endpointResult{outcome: outcomeEarly, accept: acceptDecision{hdr: hdr}}
	}
	if hdr.Type != wire.PacketTypeInitial || len(d) < minInitialPacketSize {
		return reject
	}
	seal, open := authenticInitial(d, hdr, pnOff)
	if open == nil {
		return reject
	}
	if l.handshakes >= e.maxHandshakes || l.queued >= acceptQueueLen {
		return reject
	}
	a := acceptDecision{hdr: hdr, params: connParams{
		connIDGen:  e.cidGen,
		peerConnID: hdr.SrcConnID, origDstConnID: hdr.DstConnID, version: hdr.Version,
		statelessReset: e.resetter(), initialSeal: seal, initialOpen: open,
	}}
	ap, apOK := addrPortOf(peer)
	a.token = e.checkToken(now, hdr, ap, apOK, &a.params)
	if a.token == tokenNone && e.needRetry(peer, l) {
		if b := e.retry(now, hdr, ap, apOK, out); b != nil {
			return endpointResult{outcome: outcomeSend, drop: DropRejected, send: b}
		}
		return reject
	}
	if apOK {
		a.params.newToken = tokenMint{e.tokens, ap.Addr()}
	}
	return endpointResult{outcome: outcomeAccept, accept: a}
}

// cryptoRandom fills b from crypto/rand.
func cryptoRandom(b []byte) { rand.Read(b) }
