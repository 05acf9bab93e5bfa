package quic

// The idle timeout (RFC 9000, Section 10.1): the deadline every packet
// received, and the first ack-eliciting packet sent after one, pushes
// back; handleTimeout (conn_timers.go) closes the connection silently
// when it passes. And what keeps a quiet connection alive: PINGs every
// Config.KeepAlivePeriod, or BLOCKED frames when flow control holds the
// data (Sections 4.1 and 10.1.2). Releasing the memory of a quiet
// connection is another matter: conn_idle_release.go.

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
)

// resetIdleTimer restarts the idle timer after receiving a packet, or
// sending the first ack-eliciting packet after one (sealPacket): "To
// avoid excessively small idle timeout periods, endpoints MUST increase the
// idle timeout period to be at least three times the current Probe Timeout
// (PTO)" (RFC 9000, Section 10.1). During the handshake it restarts the
// handshake's idle timeout the same way.
func (c *connState) resetIdleTimer(now time.Time) {
	c.lastReceived = now
	if c.idleTimeout <= 0 {
		c.idleDeadline = time.Time{}
		return
	}
	c.idleDeadline = now.Add(max(c.idleTimeout, 3*c.rtt.PTO(true)))
	if !c.handshakeComplete {
		c.handshakeTimeout = now.Add(c.config.HandshakeIdleTimeout)
	}
}

// keepAliveDeadline is when a PING is due to keep the connection alive:
// Config.KeepAlivePeriod after the last ack-eliciting packet sent, and
// never later than half the idle timeout. A sender blocked by flow control
// keeps the connection alive the same way, with BLOCKED frames, even
// without a KeepAlivePeriod: "To keep the connection from closing, a
// sender that is flow control limited SHOULD periodically send a
// STREAM_DATA_BLOCKED or DATA_BLOCKED frame when it has no ack-eliciting
// packets in flight." (RFC 9000, Section 4.1) Otherwise a reader pausing
// for longer than the idle timeout would lose the connection.
func (c *connState) keepAliveDeadline() time.Time {
	if !c.handshakeComplete || c.pingToSend || c.sent.HasAckElicitingInFlight(ackhandler.SpaceApplication) {
		return time.Time{} // with ack-eliciting packets in flight, the PTO keeps the peer informed
	}
	period := c.config.KeepAlivePeriod
	if c.idleTimeout > 0 {
		if period <= 0 && c.flowControlBlocked() {
			period = c.idleTimeout
		}
		period = min(period, c.idleTimeout/2)
	}
	if period <= 0 {
		return time.Time{}
	}
	return c.lastAckEliciting.Add(period)
}

// flowControlBlocked reports whether stream data waits while nothing
// ack-eliciting is in flight: with an empty network the congestion
// controller lets data go, so what holds it is flow control.
func (c *connState) flowControlBlocked() bool {
	return c.streams.hasDataWaiting() && !c.sent.HasAckElicitingInFlight(ackhandler.SpaceApplication)
}

// onKeepAlive sends a PING, or BLOCKED frames again if flow control is
// what keeps data waiting.
func (c *connState) onKeepAlive() {
	c.pingToSend = true
	if c.flowControlBlocked() {
		c.connSend.RearmBlocked()
		c.streams.rearmBlocked()
	}
}
