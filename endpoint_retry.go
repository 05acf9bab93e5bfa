package quic

// Address validation of new connections (RFC 9000, Section 8.1): the
// token of a client's first Initial (a Retry token, or a NEW_TOKEN token
// of an earlier connection) and the Retry packet that asks for one. The
// tokens themselves are sealed by handshake/address_token.go; the Retry
// integrity tag is handshake/retry.go; the client's side is
// connState.handleRetry (conn_recv.go).

import (
	"net"
	"net/netip"
	"time"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

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

// needRetry decides whether to validate a client's address with Retry:
// as RequireAddressValidation says, or else while the handshake load is
// high (listener_retry.go).
func (e *endpoint) needRetry(peer net.Addr, l *listenState) bool {
	if f := e.requireValidation; f != nil {
		return f(peer)
	}
	return retryDue(l.handshakes, l.failures, int(e.maxHandshakes))
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
