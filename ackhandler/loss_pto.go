package ackhandler

import (
	"math"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// Loss detection and the probe timeout (RFC 9002, Sections 6.1 and 6.2):
// packet and time thresholds, the loss-detection timer and its PTO
// backoff, and the probes a PTO owes. What the probes carry is decided by
// the connection (conn_pto.go in the root package).

// detectLost declares lost the packets of space that meet the packet or
// time threshold (RFC 9002, Appendix A.10, DetectAndRemoveLostPackets),
// appending them to h.ev().cong, sets the space's loss_time for those that
// may become lost later, and detects persistent congestion.
//
// Persistent congestion pairs a packet it declares lost with any earlier
// lost one, whichever pass declared it: "A sender establishes persistent
// congestion after the receipt of an acknowledgment if two packets that
// are ack-eliciting are declared lost" (RFC 9002, Section 7.6.2), and the
// pseudocode's check of one pass's losses (Appendix B.8) misses the pair
// that two passes declare, as when the first of them is lost by the
// packet threshold and the second, sent just before the packet whose
// acknowledgment declared the first, waits for the time threshold. The
// run of lost packets with no acknowledged packet between them starts at
// the earliest one: in the ring when its record is still there (earlier
// passes' records stay sentLost), or, for records compaction removed,
// at the start the space carried from them (spaceState.lostRunStart).
//
// A pass walks from the space's scan cursor, the first packet the last
// pass left outstanding, with the run the records before it give: its
// cost follows the packets acknowledged or sent since, not the distance
// to the oldest lost packet kept (up to two PTO periods of packets).
func (h *SentPacketHandler) detectLost(now time.Time, space Space) {
	s := &h.spaces[space]
	s.lossTime = time.Time{}
	if s.largestAcked == wire.InvalidPacketNumber || s.packets.n == 0 {
		return
	}
	// RFC 9002, Section 6.1.2: "The time threshold is:
	// max(kTimeThreshold * max(smoothed_rtt, latest_rtt), kGranularity)"
	lossDelay := TimeThresholdNum * max(h.rtt.Latest(), h.rtt.Smoothed()) / TimeThresholdDen
	lossDelay = max(lossDelay, congestion.Granularity)
	lostSendTime := now.Add(-lossDelay)
	// RFC 9002, Section 7.6.1: "(smoothed_rtt + max(4*rttvar,
	// kGranularity) + max_ack_delay) * kPersistentCongestionThreshold".
	// "Unlike the PTO computation in Section 6.2, this duration includes
	// the max_ack_delay irrespective of the packet number spaces in which
	// losses are established."
	pcDuration := h.rtt.PTO(true) * congestion.PersistentCongestionThreshold
	// The pass starts at the scan cursor (spaceState.scan): below it no
	// packet is outstanding, so the walk costs what changed since the
	// last pass, not the distance to the oldest lost packet kept.
	start, rec := s.packets.headPN, lostRun{in: !s.lostRunStart.IsZero(), start: s.lostRunStart}
	if s.scan.valid && s.scan.pn >= start && !h.fullScan {
		start, rec = s.scan.pn, s.scan.run
	}
	// rec is the run as the records alone give it (the state the cursor
	// keeps); inRun and runStart are this pass's, which a packet
	// acknowledged in another space may restart.
	inRun, runStart := rec.in, rec.start
	saved := false
	hi := min(s.largestAcked, s.lastSent)
	for pn := start; pn <= hi; pn++ {
		e := s.packets.at(pn)
		switch e.state {
		case sentAcked:
			// Persistent congestion requires that "none of the packets
			// sent between the send times of these two packets are
			// acknowledged" (RFC 9002, Section 7.6.2).
			inRun = false
			rec.in = false
			continue
		case sentLost:
			// Declared lost by an earlier pass: it may start a run.
			if h.countsForPersistentCongestion(e) {
				if !inRun {
					inRun, runStart = true, e.SentTime
				}
				if !rec.in {
					rec = lostRun{true, e.SentTime}
				}
			}
			continue
		case sentOutstanding:
		default:
			continue
		}
		// RFC 9002, Section 6.1: a packet is lost if "The packet was sent
		// kPacketThreshold packets before an acknowledged packet
		// (Section 6.1.1), or it was sent long enough in the past
		// (Section 6.1.2)."
		if !e.SentTime.After(lostSendTime) || s.largestAcked >= pn+PacketThreshold {
			h.declareLost(space, s, e, true)
			if h.countsForPersistentCongestion(e) {
				if !rec.in {
					rec = lostRun{true, e.SentTime}
				}
				if !inRun {
					inRun, runStart = true, e.SentTime
				} else if e.SentTime.Sub(runStart) > pcDuration {
					if h.ackedElsewhereBetween(space, runStart, e.SentTime) {
						runStart = e.SentTime
					} else {
						h.ev().cong.PersistentCongestion = true
					}
				}
			}
			continue
		}
		if !saved {
			// The first packet left outstanding: the next pass starts
			// here.
			s.scan = scanCursor{valid: true, pn: pn, run: rec}
			saved = true
		}
		// "If packets sent prior to the largest acknowledged packet
		// cannot yet be declared lost, then a timer SHOULD be set for the
		// remaining time." Packets not in flight (only ACK frames) are
		// declared lost by a later ACK frame only, without a timer.
		if e.InFlight {
			if t := e.SentTime.Add(lossDelay); s.lossTime.IsZero() || t.Before(s.lossTime) {
				s.lossTime = t
			}
		}
	}
	if !saved {
		s.scan = scanCursor{valid: true, pn: max(start, hi+1), run: rec}
	}
}

// lostRun is the state of a run of lost packets for persistent
// congestion (detectLost): whether one is open, and its first packet's
// send time.
type lostRun struct {
	in    bool
	start time.Time
}

// scanCursor is where detectLost's next pass starts: pn, with no
// outstanding packet of the space below it, and the run of lost packets
// the records [headPN, pn) give (as compaction carries it in
// lostRunStart). Everything that changes those records or that run
// otherwise (a late acknowledgment of a lost packet, of a compacted one)
// clears valid, and the pass walks from the ring's first record.
type scanCursor struct {
	valid bool
	pn    wire.PacketNumber
	run   lostRun
}

// countsForPersistentCongestion reports whether a lost packet can be one
// of the two that establish persistent congestion: "These two packets
// MUST be ack-eliciting" and "a prior RTT sample existed when these two
// packets were sent" (RFC 9002, Section 7.6.2).
func (h *SentPacketHandler) countsForPersistentCongestion(e *sentEntry) bool {
	return e.AckEliciting && h.hasFirstRTTSample && !e.SentTime.Before(h.firstRTTSample)
}

// ackedElsewhereBetween reports whether a packet of a space other than
// space, sent strictly between a and b, is known to be acknowledged.
// "Since network congestion is not affected by packet number spaces,
// persistent congestion SHOULD consider packets sent across packet number
// spaces" (RFC 9002, Section 7.6.2). Other spaces are checked through the
// latest send time of their acknowledged packets only, which can miss an
// earlier acknowledgment and then errs toward declaring persistent
// congestion, as the RFC allows for implementations that use one space.
func (h *SentPacketHandler) ackedElsewhereBetween(space Space, a, b time.Time) bool {
	for i := range h.spaces {
		if t := h.spaces[i].lastAckedSentTime; Space(i) != space && t.After(a) && t.Before(b) {
			return true
		}
	}
	return false
}

// declareLost removes an outstanding packet: declared lost (lost, added
// to the congestion event) or abandoned (!lost). Its frames are reported
// lost either way.
func (h *SentPacketHandler) declareLost(space Space, s *spaceState, e *sentEntry, lost bool) {
	e.state = sentAbandoned
	if lost {
		e.state = sentLost
		h.lostPackets++
		if h.lossObserver != nil {
			h.lossObserver.OnPacketLost(space, e.PacketNumber, e.Size)
		}
	}
	if e.InFlight {
		h.bytesInFlight -= e.Size
		if lost {
			ev := &h.ev().cong
			ev.Lost = append(ev.Lost, congestion.LostPacket{
				PacketNumber: int64(e.PacketNumber), Bytes: e.Size, SentTime: e.SentTime,
			})
			ev.LostBytes += e.Size
			if e.SentTime.After(ev.SentTime) {
				ev.SentTime = e.SentTime
			}
		}
	}
	if e.AckEliciting {
		s.ackElicitingInFlight--
	}
	h.ecn.onGone(e.ECN, lost)
	h.reportFrames(space, s, e.Frames, false)
}

// Abandon forgets packet pn of space, if outstanding, as never sent: the
// network stack refused it. It no longer counts in flight, and its frames
// are reported lost, as for a packet abandoned when its space is dropped.
func (h *SentPacketHandler) Abandon(now time.Time, space Space, pn wire.PacketNumber) {
	s := &h.spaces[space]
	if s.packets.n == 0 || pn < s.packets.headPN || pn > s.lastSent {
		return
	}
	if e := s.packets.at(pn); e.state == sentOutstanding {
		h.declareLost(space, s, e, false)
		h.setTimer(now)
	}
}

func (h *SentPacketHandler) resetCongestionEvent() {
	ev := &h.ev().cong
	ev.Lost = ev.Lost[:0]
	ev.LostBytes = 0
	ev.ECN = false
	ev.SentTime = time.Time{}
	ev.PersistentCongestion = false
	ev.PriorInFlight, ev.BytesInFlight = 0, 0
}

// reportCongestion passes h.ev().cong to the controller with the bytes
// in flight before and after the lost packets were removed.
func (h *SentPacketHandler) reportCongestion(now time.Time, priorInFlight, bytesInFlight int) {
	ev := &h.ev().cong
	ev.PriorInFlight = priorInFlight
	ev.BytesInFlight = bytesInFlight
	if ev.PersistentCongestion {
		// "Endpoints SHOULD set the min_rtt to the newest RTT sample
		// after persistent congestion is established" (RFC 9002,
		// Section 5.2).
		h.rtt.OnPersistentCongestion()
	}
	h.cc.OnCongestionEvent(now, ev)
}

// lossTimeAndSpace returns the earliest loss_time and its space
// (GetLossTimeAndSpace of RFC 9002, Appendix A.8).
func (h *SentPacketHandler) lossTimeAndSpace() (time.Time, Space) {
	var (
		t  time.Time
		sp Space
	)
	for i := range h.spaces {
		lt := h.spaces[i].lossTime
		if !lt.IsZero() && (t.IsZero() || lt.Before(t)) {
			t, sp = lt, Space(i)
		}
	}
	return t, sp
}

// ptoBackoff returns d * 2^n, saturating instead of overflowing.
func ptoBackoff(d time.Duration, n int) time.Duration {
	const limit = math.MaxInt64 / 4
	for ; n > 0 && d < limit; n-- {
		d *= 2
	}
	return min(d, limit)
}

func (h *SentPacketHandler) anyAckElicitingInFlight() bool {
	for i := range h.spaces {
		if h.spaces[i].ackElicitingInFlight > 0 {
			return true
		}
	}
	return false
}

// peerCompletedAddressValidation is PeerCompletedAddressValidation of
// RFC 9002, Appendix A.8: "Assume clients validate the server's address
// implicitly"; "Servers complete address validation when a protected
// packet is received."
func (h *SentPacketHandler) peerCompletedAddressValidation() bool {
	return h.role == wire.RoleServer || h.handshakeConfirmed || h.handshakeAckReceived || h.peerValidated
}

// antiDeadlockSpace is the space of the client's anti-deadlock probe:
// "the client MUST send a Handshake packet if it has Handshake keys,
// otherwise it MUST send an Initial packet" (RFC 9002, Section 6.2.2.1).
// The client is taken to have Handshake keys once it sent a Handshake
// packet or discarded its Initial keys.
func (h *SentPacketHandler) antiDeadlockSpace() Space {
	if h.spaces[SpaceHandshake].sentAny || h.spaces[SpaceInitial].dropped {
		return SpaceHandshake
	}
	return SpaceInitial
}

// ptoTimeAndSpace is GetPtoTimeAndSpace of RFC 9002, Appendix A.8. It
// reports antiDeadlock for the client's probe without ack-eliciting
// packets in flight, which runs from now.
//
// One refinement: a client whose only ack-eliciting packets in flight are
// 0-RTT packets, before the handshake is confirmed, would have no timer
// at all in the pseudocode and could deadlock against a server at its
// amplification limit; it gets the anti-deadlock timer.
func (h *SentPacketHandler) ptoTimeAndSpace(now time.Time) (t time.Time, space Space, antiDeadlock bool) {
	// "duration = (smoothed_rtt + max(4 * rttvar, kGranularity))
	// * (2 ^ pto_count)"
	base := ptoBackoff(h.rtt.PTO(false), h.ptoCount)
	if !h.anyAckElicitingInFlight() {
		// "Anti-deadlock PTO starts from the current time"
		return now.Add(base), h.antiDeadlockSpace(), true
	}
	d := base
	for i := range h.spaces {
		s := &h.spaces[i]
		if s.ackElicitingInFlight == 0 {
			continue
		}
		if Space(i) == SpaceApplication {
			// "An endpoint MUST NOT set its PTO timer for the Application
			// Data packet number space until the handshake is confirmed"
			// (RFC 9002, Section 6.2.1).
			if !h.handshakeConfirmed {
				break
			}
			// "Include max_ack_delay and backoff for Application Data."
			d += ptoBackoff(h.rtt.MaxAckDelay(), h.ptoCount)
		}
		if pt := s.lastAckElicitingTime.Add(d); t.IsZero() || pt.Before(t) {
			t, space = pt, Space(i)
		}
	}
	if t.IsZero() && !h.peerCompletedAddressValidation() {
		return now.Add(base), h.antiDeadlockSpace(), true
	}
	return t, space, false
}

// setTimerLater is setTimer for a packet sent: the deadline is computed
// when it is next looked at, once for a burst of packets rather than for
// each (profiles: the PTO computation per packet sent).
func (h *SentPacketHandler) setTimerLater(now time.Time) {
	h.timerDue, h.timerNow = true, now
}

// currentDeadline returns the deadline, computing it if setTimerLater
// was called since.
func (h *SentPacketHandler) currentDeadline() time.Time {
	if h.timerDue {
		h.setTimer(h.timerNow)
	}
	return h.deadline
}

// setTimer is SetLossDetectionTimer of RFC 9002, Appendix A.8.
func (h *SentPacketHandler) setTimer(now time.Time) {
	h.timerDue = false
	if t, _ := h.lossTimeAndSpace(); !t.IsZero() {
		// "Time threshold loss detection."
		h.deadline = t
		return
	}
	if h.ampLimited {
		// "The server's timer is not set if nothing can be sent."
		h.deadline = time.Time{}
		return
	}
	if !h.anyAckElicitingInFlight() && h.peerCompletedAddressValidation() {
		// "There is nothing to detect lost, so no timer is set."
		h.deadline = time.Time{}
		return
	}
	h.deadline, _, _ = h.ptoTimeAndSpace(now)
}

// LossDetectionDeadline returns when OnLossDetectionTimeout is to be
// called: the earliest time threshold loss time, else the probe timeout,
// or the zero time when no timer is armed. It may lie in the past: "Timers
// set in the past fire immediately" (RFC 9002, Appendix A.8).
func (h *SentPacketHandler) LossDetectionDeadline() time.Time { return h.currentDeadline() }

// OnLossDetectionTimeout handles the expiry of the loss detection timer
// (RFC 9002, Appendix A.9); it does nothing if the deadline has not
// passed. With a pending time threshold loss time it declares packets
// lost. Otherwise it is a probe timeout: the PTO backoff doubles
// ("When a PTO timer expires, the PTO backoff MUST be increased",
// RFC 9002, Section 6.2.1) and ProbesToSend reports the probes owed: two
// ack-eliciting packets in ProbeSpace ("An endpoint MAY send up to two
// full-sized datagrams containing ack-eliciting packets", Section 6.2.4),
// or, for the client's anti-deadlock probe, one Handshake packet or one
// Initial packet in a datagram of at least 1200 bytes.
func (h *SentPacketHandler) OnLossDetectionTimeout(now time.Time) {
	if d := h.currentDeadline(); d.IsZero() || now.Before(d) {
		return
	}
	if t, sp := h.lossTimeAndSpace(); !t.IsZero() {
		h.resetCongestionEvent()
		prior := h.bytesInFlight
		h.detectLost(now, sp)
		if len(h.ev().cong.Lost) > 0 {
			h.reportCongestion(now, prior, h.bytesInFlight)
		}
		h.compact(now, &h.spaces[sp])
		h.setTimer(now)
		return
	}
	_, sp, antiDeadlock := h.ptoTimeAndSpace(now)
	h.probeSpace = sp
	h.probes = 2
	if antiDeadlock {
		h.probes = 1
	}
	h.ptoCount++
	h.ecn.onPTO()
	h.setTimer(now)
}

// maxEarlyProbes bounds ProbeEarly per connection: an endpoint may send
// unacknowledged CRYPTO data before the probe timeout "for a limited number
// of times per connection" (RFC 9002, Section 6.2.3).
const maxEarlyProbes = 3

// ProbeEarly owes one probe in space s now, without waiting for the probe
// timeout and without raising the PTO backoff, if s has ack-eliciting
// packets in flight and no probe is owed already, at most maxEarlyProbes
// times per connection; it reports whether it did. A server calls it when
// a client's Initial packet shows that the client still lacks the
// server's Initial packets: "When a server receives an Initial packet
// containing duplicate CRYPTO data, it can assume the client did not
// receive all of the server's CRYPTO data sent in Initial packets"
// (RFC 9002, Section 6.2.3). Without it, a server whose first flight is
// lost again and again waits out a backoff that doubles each time.
func (h *SentPacketHandler) ProbeEarly(s Space) bool {
	sp := &h.spaces[s]
	if h.probes > 0 || h.earlyProbes >= maxEarlyProbes || sp.dropped || sp.ackElicitingInFlight == 0 {
		return false
	}
	h.earlyProbes++
	h.probeSpace, h.probes = s, 1
	return true
}

// ProbesToSend returns the number of ack-eliciting probe packets owed
// after a probe timeout, in ProbeSpace: 0, 1 or 2. Each ack-eliciting
// packet sent in ProbeSpace counts as one. Probes "MUST NOT be blocked by
// the congestion controller" (RFC 9002, Section 7.5). "When there is no
// data to send, the sender SHOULD send a PING or other ack-eliciting
// frame in a single packet" (Section 6.2.4).
func (h *SentPacketHandler) ProbesToSend() int { return h.probes }

// ProbeSpace returns the packet number space of the probes owed.
func (h *SentPacketHandler) ProbeSpace() Space { return h.probeSpace }

// PTOCount returns pto_count, the number of probe timeouts since the last
// acknowledgment that reset it.
func (h *SentPacketHandler) PTOCount() int { return h.ptoCount }

// SetHandshakeConfirmed records that the handshake is confirmed (RFC 9001,
// Section 4.1.2): the PTO of the application data space may be armed, ACK
// delays are capped by max_ack_delay, and the peer counts as having
// validated this endpoint's address.
func (h *SentPacketHandler) SetHandshakeConfirmed(now time.Time) {
	h.handshakeConfirmed = true
	h.setTimer(now)
}

// SetPeerCompletedAddressValidation records that the server validated
// this client's address, for cases the handler cannot see itself (it
// infers it from a Handshake ACK frame or handshake confirmation, as in
// RFC 9002, Appendix A.8). It has no effect at a server.
func (h *SentPacketHandler) SetPeerCompletedAddressValidation(now time.Time) {
	h.peerValidated = true
	h.setTimer(now)
}

// SetAmplificationLimited tells a server whether it is blocked by the
// anti-amplification limit (RFC 9000, Section 8.1). While it is, the PTO
// timer is not armed: "If no additional data can be sent, the server's
// PTO timer MUST NOT be armed until datagrams have been received from the
// client" (RFC 9002, Section 6.2.2.1). When a datagram lifts the limit,
// call it with false and then, if LossDetectionDeadline is not after now,
// OnLossDetectionTimeout: "If the PTO timer is then set to a time in the
// past, it is executed immediately."
func (h *SentPacketHandler) SetAmplificationLimited(now time.Time, limited bool) {
	h.ampLimited = limited
	h.setTimer(now)
}

// DropSpace discards a packet number space whose keys were discarded
// (RFC 9002, Section 6.4 and Appendix A.11): "The sender MUST discard all
// recovery state associated with those packets and MUST remove them from
// the count of bytes in flight." The packets are not declared lost and
// their frames are not reported. pto_count is reset and the timer rearmed:
// "When Initial or Handshake keys are discarded, the PTO and loss
// detection timers MUST be reset" (Section 6.2.2). Packets can no longer
// be sent in the space and its ACK frames are ignored.
func (h *SentPacketHandler) DropSpace(now time.Time, space Space) {
	s := &h.spaces[space]
	if s.dropped {
		return
	}
	for i := 0; i < s.packets.n; i++ {
		e := s.packets.at(s.packets.headPN + wire.PacketNumber(i))
		if e.state == sentLost {
			h.ecn.onLostExpired(e.ECN)
			continue
		}
		if e.state != sentOutstanding {
			continue
		}
		if e.InFlight {
			h.bytesInFlight -= e.Size
		}
		h.ecn.onGone(e.ECN, false)
	}
	s.packets.release()
	s.frames.release()
	*s = spaceState{
		nextPN:            s.nextPN,
		lastSent:          s.lastSent,
		largestAcked:      s.largestAcked,
		lastAckedSentTime: s.lastAckedSentTime,
		sentAny:           s.sentAny,
		dropped:           true,
	}
	h.ptoCount = 0
	if h.probeSpace == space {
		h.probes = 0
	}
	h.setTimer(now)
}

// OutstandingFrames calls f for each frame of the outstanding packets of
// space (sent, neither acknowledged nor declared lost), oldest packet
// first. It changes no state: the connection uses it to resend
// unacknowledged CRYPTO data in probe packets.
func (h *SentPacketHandler) OutstandingFrames(space Space, f func(*FrameRecord)) {
	s := &h.spaces[space]
	for i := 0; i < s.packets.n; i++ {
		e := s.packets.at(s.packets.headPN + wire.PacketNumber(i))
		if e.state != sentOutstanding {
			continue
		}
		for pos := e.Frames.start; pos < e.Frames.start+uint64(e.Frames.n); pos++ {
			f(s.frames.at(pos))
		}
	}
}

// Requeue removes every outstanding packet of space from bytes in flight
// and reports their frames lost to the FrameHandler, without telling the
// congestion controller, and resets pto_count. It serves the cases where
// sent packets were not lost but must be sent again: a Retry ("Clients
// that receive a Retry packet reset congestion control and loss recovery
// state, including resetting any pending timers", RFC 9002, Section 6.3;
// the connection resets the RTT estimator and controller itself), and
// rejected 0-RTT ("When 0-RTT is rejected, recovery state for all
// in-flight 0-RTT packets is discarded", Section 6.4), whose data the
// connection resends in 1-RTT packets. The space remains usable.
func (h *SentPacketHandler) Requeue(now time.Time, space Space) {
	s := &h.spaces[space]
	for i := 0; i < s.packets.n; i++ {
		if e := s.packets.at(s.packets.headPN + wire.PacketNumber(i)); e.state == sentOutstanding {
			h.declareLost(space, s, e, false)
		}
	}
	s.lossTime = time.Time{}
	h.compact(now, s)
	h.ptoCount = 0
	h.setTimer(now)
}
