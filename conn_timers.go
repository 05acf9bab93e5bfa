package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// nextDeadline returns when handleTimeout must next be called, or the zero
// time if nothing is scheduled. The connection's timers are few and fixed:
// loss detection and PTO, delayed ACKs, idle and handshake timeouts,
// keep-alive, pacing, discarding old 1-RTT keys and a server's 0-RTT
// keys, releasing the memory of a quiet connection, and the end of
// closing.
func (c *connState) nextDeadline(now time.Time) time.Time {
	var d time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (d.IsZero() || t.Before(d)) {
			d = t
		}
	}
	switch c.closeState {
	case stateClosing, stateDraining:
		return c.closing.deadline
	case stateClosed:
		return time.Time{}
	}
	earliest(c.sent.LossDetectionDeadline())
	for s := range c.spaces {
		if c.pathBlocked() {
			break // nothing can be sent before the peer sends more
		}
		// A server that received 0-RTT packets cannot acknowledge them
		// before it has 1-RTT keys: the ACK waits for the keys, not for a
		// timer (ACK frames are not allowed in 0-RTT packets either).
		pt, ok := c.packetTypeFor(ackhandler.Space(s))
		if sp := &c.spaces[s]; !sp.discarded && ok && pt != wire.PacketType0RTT {
			earliest(sp.recv.AckDeadline())
		}
	}
	earliest(c.idleDeadline)
	earliest(c.handshakeTimeout)
	earliest(c.keepAliveDeadline())
	earliest(c.pathProbeDeadline())
	earliest(c.pathDeadline())
	earliest(c.pmtuDeadline())
	earliest(c.idleReleaseDeadline())
	earliest(c.zeroRTTDiscard)
	if c.oneRTT != nil {
		earliest(c.oneRTT.NextDeadline())
	}
	if c.sent.BytesInFlight() < c.cc.CongestionWindow() && c.streams.hasDataToSend() {
		// Data may be waiting for the pacer only.
		if t := c.pacer.TimeUntilSend(now, c.cc.PacingRate()); t.After(now) {
			earliest(t)
		}
	}
	return d
}

// handleTimeout runs the timers that are due at now. Delayed ACKs and
// pacing need nothing here: pollTransmit sends what is due.
func (c *connState) handleTimeout(now time.Time) {
	switch c.closeState {
	case stateClosing, stateDraining:
		if !now.Before(c.closing.deadline) {
			c.closeState = stateClosed
			c.events.closed = true
		}
		return
	case stateClosed:
		return
	}
	if !c.handshakeTimeout.IsZero() && !now.Before(c.handshakeTimeout) {
		c.closeSilently(&HandshakeTimeoutError{})
		return
	}
	if !c.idleDeadline.IsZero() && !now.Before(c.idleDeadline) {
		c.closeSilently(&IdleTimeoutError{})
		return
	}
	if d := c.sent.LossDetectionDeadline(); !d.IsZero() && !now.Before(d) {
		c.sent.OnLossDetectionTimeout(now)
		c.pmtuOnPTO()
		if c.sent.ProbesToSend() > 0 {
			c.resendCryptoInProbes()
		}
	}
	c.onPathTimers(now)
	if c.closeState != stateActive {
		return
	}
	c.onPMTUTimer(now)
	if !c.zeroRTTDiscard.IsZero() && !now.Before(c.zeroRTTDiscard) {
		c.zeroRTTOpen, c.zeroRTTDiscard = nil, time.Time{} // RFC 9001, Section 4.9.3
	}
	if c.oneRTT != nil {
		c.oneRTT.OnTimeout(now)
		c.oneRTT.SetPTO(c.rtt.PTO(true))
	}
	if d := c.keepAliveDeadline(); !d.IsZero() && !now.Before(d) {
		c.onKeepAlive()
	}
	if d := c.pathProbeDeadline(); !d.IsZero() && !now.Before(d) {
		c.onPathProbe()
	}
	if d := c.idleReleaseDeadline(); !d.IsZero() && !now.Before(d) {
		c.releaseIdle(now)
	}
}

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
	if !c.handshakeComplete || c.pingToSend {
		return time.Time{}
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
	last := c.lastAckEliciting
	if c.sent.HasAckElicitingInFlight(ackhandler.SpaceApplication) {
		return time.Time{} // the PTO keeps the peer informed
	}
	return last.Add(period)
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
