package quic

// The probe timeout (RFC 9002, Section 6.2) on the connection's side:
// what the probe packets carry. When the timer fires and how many probes
// are owed is ackhandler's (ackhandler/loss_pto.go); handleTimeout
// (conn_timers.go) runs it and the send path (conn_send.go) sends the
// probes.

import (
	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// resendCryptoInProbes marks unacknowledged data of the probe space for
// retransmission, so that the probe packets a probe timeout owes carry
// it: "Endpoints SHOULD include new data in packets that are sent on PTO
// expiration. Previously sent data MAY be sent if no new data can be
// sent" (RFC 9002, Section 6.2.4). A probe that repeats what is missing
// replaces a lost packet a round trip sooner than a PING, whose
// acknowledgment must come back before loss is declared, and under heavy
// loss that round trip costs doubling probe timeouts. In the Initial and
// Handshake spaces it resends all the unacknowledged CRYPTO data (the
// ClientHello, the server's first flight); in the application space, a
// HANDSHAKE_DONE not yet acknowledged (without it the client keeps
// probing with Handshake packets the server can no longer read) and the
// oldest unacknowledged stream data, up to the two probe datagrams. The
// original frames stay in flight: whichever copy is acknowledged first
// settles the data.
func (c *connState) resendCryptoInProbes() {
	s := c.sent.ProbeSpace()
	if c.spaces[s].discarded {
		return
	}
	cs := c.spaces[s].crypto
	budget := 2 * c.maxDatagramSize
	c.sent.OutstandingFrames(s, func(f *ackhandler.FrameRecord) {
		switch {
		case f.Type == wire.FrameTypeCrypto && cs != nil:
			cs.send.onLost(f.Offset, int(f.Length), false)
		case f.Type == wire.FrameTypeHandshakeDone:
			c.handshakeDoneToSend = true
		case f.Type.IsStream() && budget > 0:
			budget -= int(f.Length)
			c.streams.onFrameLost(f)
		}
	})
}
