package quic

import (
	"crypto/rand"
	"net"
	"net/netip"
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
// (simEndpoint in conn_sim_test.go), so that accepting, Retry, token
// checks, Version Negotiation and stateless resets are tested
// deterministically. Its state (the stateless-reset budget) belongs to the
// one goroutine that drives it.
type endpoint struct {
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
	return e.newConnection(now, d, peer, l, out)
}

// versionNegotiation answers a long-header packet of an unknown version
// (RFC 9000, Section 6.1): "A server sends a Version Negotiation packet in
// response to each packet that might initiate a new connection". Only
// datagrams of at least 1200 bytes get one, since only those can start a
// connection, which keeps the answer from amplifying an attack. It
// returns nil when there is nothing to send.
func (e *endpoint) versionNegotiation(d []byte, hdr wire.InvariantHeader, versions []wire.Version, out []byte) []byte {
	if len(d) < minInitialPacketSize || hdr.Version == wire.VersionNegotiationVersion {
		return nil
	}
	var r [5]byte
	e.random(r[:])
	list := make([]wire.Version, 0, len(versions)+1)
	for _, v := range versions {
		if v.IsSupported() {
			list = append(list, v)
		}
	}
	list = append(list, greaseVersion(r[1:], hdr.Version))
	e.stats.versionNegotiationsSent.Add(1)
	return wire.AppendVersionNegotiation(out[:0], 0x40|r[0], hdr.SrcConnID, hdr.DstConnID, list)
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

// statelessReset answers a short-header packet for an unknown connection
// ID with a stateless reset (RFC 9000, Section 10.3), or returns nil. It
// is smaller than the packet that triggered it ("An endpoint MUST NOT send
// a stateless reset that is three times or more larger than the packet it
// receives"; being smaller also prevents two endpoints from resetting each
// other forever, Section 10.3.3), at least 21 bytes long so that it looks
// like a short-header packet, and rate-limited.
func (e *endpoint) statelessReset(now time.Time, d []byte, cid wire.ConnectionID, out []byte) []byte {
	size := min(len(d)-1, 42)
	if size < handshake.MinStatelessResetLen || cid.Len() == 0 {
		return nil
	}
	if now.Sub(e.resetRefill) > time.Second {
		e.resetRefill, e.resetBudget = now, statelessResetsPerSecond
	}
	e.resetBudget--
	if e.resetBudget < 0 || (e.routedElsewhere != nil && e.routedElsewhere(cid)) {
		return nil
	}
	b := out[:size] // out has room for a datagram
	e.random(b[:size-wire.StatelessResetTokenLen])
	b[0] = 0x40 | b[0]&0x3f // short header form with the fixed bit
	token := e.resetter().Token(cid)
	copy(b[size-wire.StatelessResetTokenLen:], token[:])
	e.stats.resetsSent.Add(1)
	return b
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

// checkToken validates the token of a client's first Initial packet
// (RFC 9000, Section 8.1.3) from the address ap (apOK: known) and, for a
// valid Retry token, sets the connection IDs the server must echo in its
// transport parameters (Section 7.3): original_destination_connection_id
// is the Destination Connection ID of the Initial the Retry answered, and
// retry_source_connection_id the Retry's Source Connection ID, which is
// this Initial's Destination Connection ID. The Initial keys still come
// from this Initial's Destination Connection ID.
func (e *endpoint) checkToken(now time.Time, hdr wire.LongHeader, ap netip.AddrPort, apOK bool, cp *connParams) tokenVerdict {
	if len(hdr.Token) == 0 || !apOK {
		return tokenNone
	}
	tok, err := e.tokens.Open(hdr.Token, ap, now, retryTokenLifetime, newTokenTokenLifetime)
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
	// "Tokens that are provided in NEW_TOKEN frames ... SHOULD NOT be
	// accepted multiple times." (Section 8.1.4)
	if !e.replay.UseToken(tok.ID, tok.IssuedAt.Add(newTokenTokenLifetime), now) {
		e.stats.tokensReplayed.Add(1)
		return tokenNone
	}
	cp.addressValidated = true
	return tokenValid
}

// needRetry decides whether to validate a client's address with Retry.
func (e *endpoint) needRetry(peer net.Addr, l *listenState) bool {
	if f := e.requireValidation; f != nil {
		return f(peer)
	}
	return l.handshakes >= e.maxHandshakes/2
}

// retry answers a client's first Initial with a Retry packet (RFC 9000,
// Section 17.2.5) carrying a token that binds the client's address, its
// original Destination Connection ID and the new Source Connection ID the
// client must use, integrity-protected as RFC 9001, Section 5.8
// specifies. Nothing is kept: the token carries the state.
func (e *endpoint) retry(now time.Time, hdr wire.LongHeader, ap netip.AddrPort, apOK bool, out []byte) []byte {
	if !apOK {
		return nil
	}
	scid, err := e.cidGen.GenerateConnectionID()
	if err != nil {
		return nil
	}
	r := wire.RetryPacket{Version: hdr.Version, DstConnID: hdr.SrcConnID, SrcConnID: scid,
		Token: e.tokens.AppendRetryToken(nil, now, ap, hdr.DstConnID, scid)}
	b := r.Append(out[:0])
	b = handshake.AppendRetryIntegrityTag(b[:len(b)-wire.RetryIntegrityTagLen], hdr.Version, hdr.DstConnID.Bytes())
	e.stats.retriesSent.Add(1)
	return b
}

// cryptoRandom fills b from crypto/rand.
func cryptoRandom(b []byte) { rand.Read(b) }
