package quic

import (
	"time"

	"github.com/quicstack/quic/congestion"
)

// What an idle connection gives back. A server holds many connections
// that are established and quiet; each keeps what it needs to go on (its
// state, the secrets its keys come from, its connection IDs and limits)
// and, once it has neither received nor sent a datagram for a while,
// releases what it can make again when the next one comes: the expanded
// 1-RTT keys (handshake.OneRTTKeys.Release, about 3 KB), the rings of
// sent-packet records (ackhandler.SentPacketHandler.ReleaseIdle), the
// congestion controller's per-packet records (congestion.IdleReleaser), the
// frame parsed packets are read into and an empty stream map. The Conn
// then lets its goroutine exit, with its stack, until a datagram, a timer
// or the application needs it again (conn_driver_park.go).

// idleReleaseDelay is how long a connection goes without receiving or
// sending a datagram before it releases its idle memory; at least three
// PTOs, so that ACK-only packets' records have expired by then. Making
// the keys again costs a few microseconds, once per quiet period.
const idleReleaseDelay = time.Second

// markActive records that a datagram was received or sent at now.
func (c *connState) markActive(now time.Time) {
	if now.Before(c.lastActivity) {
		c.idleReleaseLow = time.Time{} // a bound only while time goes forward
	}
	c.lastActivity = now
	c.idleReleased = false
}

// idleReleaseDeadline returns when the connection releases its idle
// memory, or the zero time if it did or cannot yet: only an established
// connection that is not closing does.
func (c *connState) idleReleaseDeadline() time.Time {
	if c.idleReleased || c.closeState != stateActive || !c.handshakeConfirmed || c.oneRTT == nil || c.lastActivity.IsZero() {
		return time.Time{}
	}
	d := c.lastActivity.Add(max(idleReleaseDelay, 3*c.rtt.PTO(true)))
	// The 1-RTT keys are released only once the previous read keys of
	// a key update are gone (RFC 9001, Section 6.5: kept for three PTOs,
	// as they were when the update came): not before.
	if k := c.oneRTT.NextDeadline(); k.After(d) {
		d = k
	}
	return d
}

// idleReleaseBefore returns idleReleaseDeadline if it may be earlier than
// d (or d is zero), else the zero time, which does not change the
// earliest of the two. It is nextDeadline's per-packet check: the time
// arithmetic of the exact deadline is done only when the lower bound
// idleReleaseLow (the last activity it saw plus idleReleaseDelay, at most
// the exact deadline because lastActivity only grows and the delay is at
// least idleReleaseDelay) is not after d; in a busy connection, about
// once per idleReleaseDelay.
func (c *connState) idleReleaseBefore(d time.Time) time.Time {
	if c.idleReleased || c.closeState != stateActive || !c.handshakeConfirmed || c.oneRTT == nil || c.lastActivity.IsZero() {
		return time.Time{}
	}
	if !d.IsZero() && !c.idleReleaseLow.IsZero() && c.idleReleaseLow.After(d) {
		return time.Time{}
	}
	c.idleReleaseLow = c.lastActivity.Add(idleReleaseDelay)
	if !d.IsZero() && c.idleReleaseLow.After(d) {
		return time.Time{}
	}
	return c.idleReleaseDeadline()
}

// releaseIdle releases what the connection can make again on its next
// datagram. Nothing it does changes the protocol's behaviour.
func (c *connState) releaseIdle(now time.Time) {
	c.idleReleased = true
	c.oneRTT.Release()
	c.sent.ReleaseIdle(now)
	if r, ok := c.cc.(congestion.IdleReleaser); ok {
		r.ReleaseIdle()
	}
	c.streams.releaseIdle()
	c.rxFrame = nil
}

// mayPark reports whether the connection released its idle memory and has
// been quiet since, or is closing or draining and released what those
// states do not use (conn_close_draining.go): its goroutine may exit until a
// datagram or its next deadline (conn_driver_park.go).
func (c *connState) mayPark() bool {
	switch c.closeState {
	case stateActive:
		return c.idleReleased
	case stateClosing, stateDraining:
		return c.closing.released
	}
	return false
}
