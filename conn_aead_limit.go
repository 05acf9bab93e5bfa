package quic

import (
	"errors"
	"time"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// The integrity limit of RFC 9001, Section 6.6, applied across all keys:
// "If the total number of received packets that fail authentication
// within the connection, across all keys, exceeds the integrity limit for
// the selected AEAD, the endpoint MUST immediately close the connection
// with a connection error of type AEAD_LIMIT_REACHED and not process any
// more packets." The 1-RTT keys count their own failures
// (handshake.OneRTTKeys.FailedDecryptions); the connection counts those of
// the Initial, 0-RTT and Handshake keys, and checks the sum. Until TLS
// selects a cipher suite, the limit is that of the Initial packets' AEAD,
// AES-128-GCM.

// setIntegrityLimit sets the limit for the AEAD of TLS cipher suite
// suite, once TLS selected it (the Handshake keys use it).
func (c *connState) setIntegrityLimit(suite uint16) {
	if l := handshake.IntegrityLimit(suite); l > 0 {
		c.integrityLimit = l
	}
}

// onAuthFailure records that a received packet failed authentication,
// one of 1-RTT if oneRTT (already counted by the 1-RTT keys), and closes
// the connection when the total exceeds the limit. err is the error the
// packet's Opener returned; a packet too short to open did not fail
// authentication and is not counted.
func (c *connState) onAuthFailure(now time.Time, err error, oneRTT bool) {
	if !errors.Is(err, handshake.ErrDecryptionFailed) {
		return
	}
	if !oneRTT {
		c.aeadFailures++
	}
	total := c.aeadFailures
	if c.oneRTT != nil {
		total += c.oneRTT.FailedDecryptions()
	}
	if total > c.integrityLimit {
		c.closeWithError(now, &wire.TransportError{Code: wire.AEADLimitReached,
			Reason: "integrity limit reached: too many packets failed authentication"})
	}
}
