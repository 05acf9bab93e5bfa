package quic

// Sending stateless resets (RFC 9000, Section 10.3): the endpoint's
// answer to a short-header packet for a connection it does not know.
// Detecting them is reset_tokens.go (routing) and
// connState.isStatelessReset.

import (
	"time"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// statelessReset answers a short-header packet for an unknown connection
// ID with a stateless reset (RFC 9000, Section 10.3), or returns nil. It
// is smaller than the packet that triggered it ("An endpoint MUST NOT send
// a stateless reset that is three times or more larger than the packet it
// receives"; being smaller also prevents two endpoints from resetting each
// other forever, Section 10.3.3), at least 21 bytes long so that it looks
// like a short-header packet, and rate-limited.
func (e *endpoint) statelessReset(now time.Time, d []byte, cid wire.ConnectionID, out []byte) []byte {
	size := min(len(d)-1, 42)
	if size < handshake.MinStatelessResetLen || cid.Len() == 0 || e.resetter() == nil {
		return nil // no key (a simulated client): no resets
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
