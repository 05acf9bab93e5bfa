package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// The connection's timers (RFC 9000, Section 10.1; RFC 9002, Section 6):
// one deadline for the driver to wait for, and handleTimeout, which runs
// what is due. The idle timeout itself is conn_idle_timeout.go; the probe
// timeout, ackhandler/loss_pto.go and conn_pto.go.

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
	// While the path is blocked nothing can be sent before the peer
	// sends more: no ACK is due.
	for s := range c.spaces {
		if s == 0 && c.pathBlocked() {
			break
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
	// Last: it is computed only when it may be the earliest.
	earliest(c.idleReleaseBefore(d))
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
