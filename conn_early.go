package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
)

// 0-RTT on the client (RFC 9000, Section 7.4.1; RFC 9001, Section 4.6).
//
// While the handshake runs, a client resuming a session that allows early
// data sends application data in 0-RTT packets, within the limits the
// server had given in that session: "When 0-RTT is attempted, the client
// remembers ... and uses the remembered values until it receives the
// server's transport parameters" (paraphrasing RFC 9000, Section 7.4.1).
// If the server declines, everything sent in 0-RTT is sent again in 1-RTT
// packets, against the server's real limits, without the application
// noticing: "If the server rejects 0-RTT, the client ... MUST send any
// 0-RTT data again in 1-RTT" (RFC 9001, Section 4.6.2 / RFC 9000,
// Section 7.4.1, "the client ... resets ... the state of all streams").

// onEarlyDataOffered puts the remembered server parameters in force when the
// 0-RTT keys are installed on a client: the flow-control and stream
// limits, the largest datagram (which pollTransmit takes from earlyParams:
// "lowering the max_udp_payload_size could result in dropped packets",
// Section 7.4.1) and the idle timeout, the
// smaller of the handshake's and the remembered max_idle_timeout
// (Section 10.1: "the minimum of the max_idle_timeout value advertised by
// both endpoints"). disable_active_migration needs no action before the
// handshake is confirmed, when no client migrates (Section 9), and
// grease_quic_bit none from an endpoint that never clears the QUIC bit.
func (c *connState) onEarlyDataOffered(now time.Time) {
	rp, ok := c.tls.RememberedParams()
	if !ok || c.peerParams != nil {
		return
	}
	tp := rp.TransportParameters()
	c.earlyParams = &tp
	c.obs.offered0RTT = true
	c.connSend.OnMaxData(tp.InitialMaxData)
	c.streams.onPeerParams(&tp)
	if tp.MaxIdleTimeout > 0 && tp.MaxIdleTimeout < c.idleTimeout {
		c.idleTimeout = tp.MaxIdleTimeout
		c.idleDeadline = now.Add(max(c.idleTimeout, 3*c.rtt.PTO(true)))
	}
}

// end0RTT, on a client whose handshake completed, puts the server's
// real limits in force, which applyPeerParams held back while 0-RTT
// packets could still be sent: "When sending frames in 0-RTT packets, a
// client MUST only use remembered transport parameters; importantly, it
// MUST NOT use updated values that it learns from the server's updated
// transport parameters or from frames received in 1-RTT packets. Updated
// values of transport parameters from the handshake apply only to 1-RTT
// packets." (RFC 9000, Section 7.4.1) The server's parameters arrive in
// its EncryptedExtensions, which may come a packet or a round trip
// before its Finished. Frames received in 1-RTT packets (MAX_DATA,
// MAX_STREAM_DATA, MAX_STREAMS) are processed once the 1-RTT keys are
// there, which crypto/tls hands over as it completes the handshake: no
// 0-RTT packet is sent after them.
//
// "Once the handshake completes, the client updates the flow control
// limits on all sending streams using the updated values" (Section
// 7.4.1); the limits only ever grow, as a server that accepted 0-RTT
// "MUST NOT reduce any limits".
func (c *connState) end0RTT() {
	if c.earlyParams == nil {
		return
	}
	c.earlyParams = nil
	if c.peerParams != nil {
		c.applyPeerLimits()
	}
}

// onEarlyDataRejected undoes 0-RTT: the server processed none of it. The
// packets are declared lost, streams keep their IDs and data but forget
// what was sent and the credit it used, and the limits are those of the
// server's real transport parameters ("a client MUST ... reset ... flow
// control ... to the values in the new transport parameters", RFC 9000,
// Section 7.4.1).
func (c *connState) onEarlyDataRejected(now time.Time) {
	c.zeroRTTSeal = nil
	if c.earlyParams == nil {
		return
	}
	c.earlyParams = nil
	// The loss callbacks run first; the rewind below then discards what
	// they marked, so that all data counts as never sent.
	c.sent.Requeue(now, ackhandler.SpaceApplication)
	c.connSend.Init(0)
	c.streams.resetForRejected0RTT()
	if c.peerParams != nil {
		c.applyPeerLimits()
	}
}

// resetForRejected0RTT rewinds every stream to nothing sent and no credit,
// and the stream-count limits to none, until the real transport parameters
// apply. The streams this endpoint opened are held back (stream.held):
// they keep their IDs, which the application holds, but the server's real
// limit may be lower than the remembered one they were opened under, and
// "Endpoints MUST NOT exceed the limit set by their peer. An endpoint that
// receives a frame with a stream ID exceeding the limit it has sent MUST
// treat this as a connection error of type STREAM_LIMIT_ERROR" (RFC 9000,
// Section 4.6). releaseHeldStreams lets them go in order of their IDs as
// the limits allow, first when the real transport parameters apply, then
// as MAX_STREAMS frames raise them; until then they wait as an opener
// waits in OpenStreamSync. (Five streams opened in 0-RTT under a
// remembered limit of 100, the server now allowing 2: both ends closed
// with STREAM_LIMIT_ERROR.)
func (m *streamsMap) resetForRejected0RTT() {
	m.mu.Lock()
	m.peerParams = nil
	m.peerMaxBidi, m.peerMaxUni = 0, 0
	streams := make([]*stream, 0, len(m.streams))
	for _, s := range m.streams {
		streams = append(streams, s)
	}
	m.mu.Unlock()
	c := m.c
	for _, s := range streams {
		s.mu.Lock()
		if s.hasSend {
			s.send.rewind()
			s.sentEnd = 0
			s.sendFC.Init(0)
			s.creditKnown = false
		}
		s.mu.Unlock()
		if s.id.Initiator() == m.role && !s.held {
			s.held = true
			c.heldStreams = append(c.heldStreams, s)
		}
	}
	// The loss of the 0-RTT packets queued some of them already.
	for _, s := range m.copySendable() {
		if s.held {
			m.q().remove(s)
			s.inSendable = false
		}
	}
	clear(m.sendableCopy)
	for s := m.q().retransmit.head; s != nil; {
		next := s.sched.links[listRetransmit].next
		if s.held {
			m.q().retransmit.remove(s)
		}
		s = next
	}
	for _, s := range streams {
		m.markSendable(s)
	}
}

// releaseHeldStreams lets the streams held back after rejected 0-RTT
// (resetForRejected0RTT) send, as far as the peer's stream limits allow.
func (c *connState) releaseHeldStreams() {
	if len(c.heldStreams) == 0 {
		return
	}
	m := c.streams
	m.mu.Lock()
	maxBidi, maxUni := m.peerMaxBidi, m.peerMaxUni
	m.mu.Unlock()
	keep := c.heldStreams[:0]
	for _, s := range c.heldStreams {
		limit := maxBidi
		if !s.id.IsBidi() {
			limit = maxUni
		}
		if s.id.Num() > limit {
			keep = append(keep, s)
			continue
		}
		s.held = false
		m.markSendable(s)
	}
	clear(c.heldStreams[len(keep):])
	c.heldStreams = keep
	if len(keep) == 0 {
		c.heldStreams = nil
	}
}

// rewind forgets that anything was sent: all written data, and the FIN,
// will be sent again as new data. Nothing may have been acknowledged.
func (b *sendBuffer) rewind() {
	if b.isReset {
		return
	}
	b.sent = b.acked
	b.ackedRanges = nil
	b.lost = nil
	b.finSent, b.finLost = false, false
}
