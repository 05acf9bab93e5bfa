package ackhandler

import (
	"math/rand/v2"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// Constants of RFC 9002, Section 6.1 and Appendix A.2.
const (
	// PacketThreshold is kPacketThreshold: "The RECOMMENDED initial value
	// for the packet reordering threshold (kPacketThreshold) is 3". It
	// counts packet numbers, so a skipped number counts too (RFC 9002's
	// pseudocode "assumes that there were no sender-induced gaps"): a
	// packet just below one is declared lost one packet earlier. Skips are
	// one in 256 to 512 packets.
	PacketThreshold = 3
	// TimeThresholdNum/TimeThresholdDen is kTimeThreshold: "The
	// RECOMMENDED time threshold (kTimeThreshold), expressed as an RTT
	// multiplier, is 9/8."
	TimeThresholdNum, TimeThresholdDen = 9, 8
)

// Packet number skipping (RFC 9000, Section 21.4): one packet number in
// every skipMin to skipMax of the application data space is skipped, at
// random, and the last maxSkipped skipped numbers are remembered. The
// Initial and Handshake spaces, which carry a few packets of handshake
// data, number their packets consecutively.
const (
	skipMin    = 256
	skipMax    = 512
	maxSkipped = 8
	// maxPNJump bounds the gap between consecutive packet numbers passed
	// to OnPacketSent, which is filled with never-sent slots.
	maxPNJump = 1 << 16
)

// Config configures a SentPacketHandler.
type Config struct {
	// Role is this endpoint's role. A client "MUST set the PTO timer if
	// the client has not received an acknowledgment for any of its
	// Handshake packets and the handshake is not confirmed ... even if
	// there are no packets in flight" (RFC 9002, Section 6.2.2.1); a
	// server's peer always counts as having completed address validation.
	Role wire.Role
	// RTT is the connection's RTT estimator; required. The handler
	// updates it with the samples of ACK frames; the peer's max_ack_delay
	// (RTTStats.SetMaxAckDelay) enters the PTO of the application data
	// space and the persistent congestion duration.
	RTT *congestion.RTTStats
	// Controller is the congestion controller; required.
	Controller congestion.Controller
	// Frames learns about acknowledged and lost frames; nil means nobody.
	Frames FrameHandler
	// Rand is the source of randomness for packet number skipping. If
	// nil, a PCG generator seeded with Seed is used, so that a given seed
	// gives the same packet numbers on every run.
	Rand *rand.Rand
	// Seed seeds the generator when Rand is nil.
	Seed uint64
	// DisablePacketNumberSkipping turns off the optimistic-ACK defence of
	// RFC 9000, Section 21.4, so that packet numbers are consecutive.
	DisablePacketNumberSkipping bool
	// DisableECN starts ECN validation in the ECNFailed state: packets
	// are never marked and ECN counts are ignored.
	DisableECN bool
}

// SentPacketHandler records the packets a connection sends in its three
// packet number spaces and runs loss detection and the probe timeout
// (RFC 9002, Section 6 and Appendix A), persistent congestion detection
// (Section 7.6) and ECN validation (RFC 9000, Section 13.4.2), reporting
// to a congestion.Controller and a FrameHandler.
//
// The connection's use, for each packet it sends:
//
//	pn, pnLen := h.NextPacketNumber(space)
//	mark := h.ECNMarking()
//	... h.AddFrame(space, FrameRecord{...}) for each frame it writes ...
//	h.OnPacketSent(now, space, SentPacket{PacketNumber: pn, Size: n,
//		AckEliciting: true, InFlight: true, ECN: mark})
//
// for each ACK frame it receives, h.OnAckReceived; around the handshake,
// SetHandshakeConfirmed, DropSpace when Initial and Handshake keys are
// discarded, and at a server SetAmplificationLimited; and when
// h.LossDetectionDeadline() passes, h.OnLossDetectionTimeout, after which
// it sends h.ProbesToSend() ack-eliciting packets in h.ProbeSpace(),
// bypassing the congestion controller (RFC 9002, Section 7.5).
//
// A SentPacketHandler is not safe for concurrent use. OnPacketSent,
// AddFrame, OnAckReceived and OnLossDetectionTimeout do not allocate once
// its ring buffers and event slices have grown to the connection's
// working size; the controller and the FrameHandler are called
// synchronously with structures the handler owns and reuses.
type SentPacketHandler struct {
	lostPackets uint64 // packets declared lost, for statistics
	// fullScan makes detectLost walk from the ring's first record in
	// every pass, as before the scan cursor (tests compare the two).
	fullScan bool

	role   wire.Role
	rtt    *congestion.RTTStats
	cc     congestion.Controller
	frames FrameHandler
	// lossObserver is frames, if it is a PacketLossObserver.
	lossObserver PacketLossObserver
	rng          *rand.Rand
	skip         bool

	spaces        [spaceCount]spaceState
	bytesInFlight int

	ptoCount    int
	probes      int
	probeSpace  Space
	earlyProbes int // ProbeEarly's count
	deadline    time.Time
	// timerDue: packets were sent since deadline was computed, at
	// timerNow (setTimerLater).
	timerDue bool
	timerNow time.Time

	handshakeConfirmed   bool
	peerValidated        bool // set explicitly
	handshakeAckReceived bool
	ampLimited           bool

	// firstRTTSample is when the first RTT sample was taken
	// (first_rtt_sample); hasFirstRTTSample reports that there was one.
	firstRTTSample    time.Time
	hasFirstRTTSample bool
	// rttFloor: application data packets below it give no RTT sample
	// (IgnoreRTTSamplesBefore).
	rttFloor wire.PacketNumber

	ecn ecnValidator

	// Packet number skipping in the application data space.
	skipAt     wire.PacketNumber
	skipped    [maxSkipped]wire.PacketNumber
	numSkipped int

	// events are the controller's events, reused from one ACK or loss to
	// the next; made on first use and dropped by ReleaseIdle.
	events *controllerEvents
}

// controllerEvents are the events a SentPacketHandler reports to its
// congestion controller.
type controllerEvents struct {
	ack  congestion.AckEvent
	cong congestion.CongestionEvent
}

// ev returns the reused events, making them if needed.
func (h *SentPacketHandler) ev() *controllerEvents {
	if h.events == nil {
		h.events = &controllerEvents{ack: congestion.AckEvent{RTT: h.rtt}}
	}
	return h.events
}

// spaceState is the state of one packet number space.
type spaceState struct {
	packets sentRing
	frames  frameRing
	// pendingFrames is the position of the first frame added for the
	// packet being built.
	pendingFrames uint64

	nextPN       wire.PacketNumber
	lastSent     wire.PacketNumber // InvalidPacketNumber before any
	largestAcked wire.PacketNumber // InvalidPacketNumber before any

	lossTime             time.Time // loss_time
	lastAckElicitingTime time.Time // time_of_last_ack_eliciting_packet
	ackElicitingInFlight int
	sentAny, dropped     bool

	// lastAckedSentTime is the latest send time of an acknowledged
	// packet, for persistent congestion across spaces.
	lastAckedSentTime time.Time
	// lostRunStart, if not zero, is the send time of the earliest lost
	// packet of a run, that persistent congestion can count, whose
	// records compaction removed with no acknowledged packet after it:
	// detectLost continues the run from the ring's first record.
	// lostRunPN is that packet's number: an acknowledgment of a packet
	// from it to the ring's first record ends the run too.
	lostRunStart time.Time
	lostRunPN    wire.PacketNumber
	// scan is where the next loss-detection pass starts (detectLost).
	scan scanCursor

	ecnCounts          wire.ECNCounts // counts of the last validated ACK frame
	ect0Sent, ect1Sent uint64
}

// The errors OnAckReceived returns. They are shared; do not modify them.
var (
	errAckUnsent = &wire.TransportError{
		Code:      wire.ProtocolViolation,
		FrameType: wire.FrameTypeAck,
		Reason:    "ACK for a packet that was not sent",
	}
	errAckSkipped = &wire.TransportError{
		Code:      wire.ProtocolViolation,
		FrameType: wire.FrameTypeAck,
		Reason:    "ACK for a skipped packet number",
	}
)

// New returns a SentPacketHandler. It panics if cfg.RTT or
// cfg.Controller is nil.
func New(cfg Config) *SentPacketHandler {
	if cfg.RTT == nil || cfg.Controller == nil {
		panic("ackhandler: Config.RTT and Config.Controller are required")
	}
	h := &SentPacketHandler{
		role:   cfg.Role,
		rtt:    cfg.RTT,
		cc:     cfg.Controller,
		frames: cfg.Frames,
		rng:    cfg.Rand,
		skip:   !cfg.DisablePacketNumberSkipping,
	}
	h.lossObserver, _ = cfg.Frames.(PacketLossObserver)
	if h.rng == nil {
		h.rng = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	}
	// A sample taken before this handler existed (a resumed RTT) counts
	// as prior to every packet for persistent congestion.
	h.hasFirstRTTSample = cfg.RTT.HasSample()
	for i := range h.spaces {
		s := &h.spaces[i]
		s.lastSent = wire.InvalidPacketNumber
		s.largestAcked = wire.InvalidPacketNumber
	}
	h.skipAt = h.nextSkip(0)
	h.ecn.reset(cfg.DisableECN)
	return h
}

// nextSkip returns the packet number to skip after pn.
func (h *SentPacketHandler) nextSkip(pn wire.PacketNumber) wire.PacketNumber {
	return pn + skipMin + wire.PacketNumber(h.rng.IntN(skipMax-skipMin+1))
}

// NextPacketNumber returns the packet number for the next packet of space
// and the number of bytes to encode it with (wire.PacketNumberLen, given
// the largest acknowledged). Until OnPacketSent, it returns the same
// number. Now and then it skips a packet number, to detect peers that
// acknowledge packets they did not receive: "An endpoint MAY skip packet
// numbers when sending packets to detect this behavior" (RFC 9000,
// Section 21.4).
func (h *SentPacketHandler) NextPacketNumber(space Space) (pn wire.PacketNumber, pnLen int) {
	s := &h.spaces[space]
	if h.skip && space == SpaceApplication && s.nextPN == h.skipAt {
		h.skipped[h.numSkipped%maxSkipped] = s.nextPN
		h.numSkipped++
		s.nextPN++
		h.skipAt = h.nextSkip(s.nextPN)
	}
	return s.nextPN, wire.PacketNumberLen(s.nextPN, s.largestAcked)
}

// LargestAcked returns the largest packet number the peer acknowledged in
// space, or wire.InvalidPacketNumber.
func (h *SentPacketHandler) LargestAcked(space Space) wire.PacketNumber {
	return h.spaces[space].largestAcked
}

// AddFrame records a frame of the packet being built in space; the frames
// added since the last OnPacketSent for that space belong to the next
// packet sent in it.
func (h *SentPacketHandler) AddFrame(space Space, f FrameRecord) {
	h.spaces[space].frames.push(f)
}

// DiscardFrames forgets the frames added for a packet of space that will
// not be sent after all.
func (h *SentPacketHandler) DiscardFrames(space Space) {
	s := &h.spaces[space]
	s.frames.tail = s.pendingFrames
}

// OnPacketSent records a sent packet (RFC 9002, Appendix A.5). The
// caller sets p.PacketNumber, p.Size, p.AckEliciting, p.InFlight and
// p.ECN; the handler sets p.SentTime to now and p.Frames to the frames
// added since the previous packet of the space. An ack-eliciting packet
// is always in flight. Packets in flight are reported to the controller.
//
// Packet numbers must increase within a space, by at most 65536; a
// number left out (skipped by NextPacketNumber or otherwise) counts as
// never sent. OnPacketSent panics if the packet number does not increase
// or the space was dropped.
func (h *SentPacketHandler) OnPacketSent(now time.Time, space Space, p SentPacket) {
	s := &h.spaces[space]
	if s.dropped {
		panic("ackhandler: packet sent in a dropped packet number space")
	}
	if p.PacketNumber <= s.lastSent || p.PacketNumber > wire.MaxPacketNumber {
		panic("ackhandler: packet numbers must increase")
	}
	if s.packets.n > 0 && p.PacketNumber-s.lastSent > maxPNJump {
		panic("ackhandler: packet number jumps too far")
	}
	if p.AckEliciting {
		p.InFlight = true
	}
	p.SentTime = now
	p.Frames = FrameRange{start: s.pendingFrames, n: uint32(s.frames.tail - s.pendingFrames)}
	s.pendingFrames = s.frames.tail
	if s.packets.n == 0 {
		s.packets.headPN = p.PacketNumber
	} else {
		for pn := s.lastSent + 1; pn < p.PacketNumber; pn++ {
			e := s.packets.push()
			*e = sentEntry{SentPacket: SentPacket{PacketNumber: pn, Frames: FrameRange{start: p.Frames.start}}}
		}
	}
	e := s.packets.push()
	*e = sentEntry{SentPacket: p, state: sentOutstanding}
	s.lastSent = p.PacketNumber
	s.nextPN = max(s.nextPN, p.PacketNumber+1)
	s.sentAny = true

	switch p.ECN {
	case ECT0:
		s.ect0Sent++
	case ECT1:
		s.ect1Sent++
	}
	h.ecn.onSent(p.ECN)

	if !p.InFlight {
		h.expireNotInFlight(now, space, s)
		return
	}
	h.bytesInFlight += p.Size
	if p.AckEliciting {
		s.lastAckElicitingTime = now
		s.ackElicitingInFlight++
		if h.probes > 0 && space == h.probeSpace {
			h.probes--
		}
	}
	h.cc.OnPacketSent(now, int64(p.PacketNumber), p.Size, h.bytesInFlight)
	h.setTimerLater(now)
}

// OnAckReceived processes an ACK frame received in space (RFC 9002,
// Appendix A.7). ackDelayExponent is the peer's ack_delay_exponent.
//
// It marks the newly acknowledged packets, takes an RTT sample if "the
// largest acknowledged packet number is newly acknowledged, and at least
// one of the newly acknowledged packets was ack-eliciting" (RFC 9002,
// Section 5.1), validates the ECN counts, declares packets lost, reports
// to the FrameHandler and then the controller (OnCongestionEvent if
// packets were lost or the ECN-CE count increased, then OnAck),
// and rearms the loss detection timer. An ACK frame for a dropped space is
// ignored. Only f.Ranges is acted on: ranges the parser counted in
// f.IgnoredRanges (a frame with more than it keeps) are treated as not
// acknowledged by this frame, as if the peer had omitted them (RFC 9000,
// Section 13.2.3), so the packets in them may be declared lost and, if a
// later frame acknowledges them, are late acknowledgments.
//
// It returns a PROTOCOL_VIOLATION *wire.TransportError if the frame
// acknowledges a packet number that was never sent, skipped ones
// included: "An endpoint SHOULD treat receipt of an acknowledgment for a
// packet it did not send as a connection error of type
// PROTOCOL_VIOLATION, if it is able to detect the condition" (RFC 9000,
// Section 13.1). After an error the connection must close; the handler's
// state is then unspecified.
func (h *SentPacketHandler) OnAckReceived(now time.Time, space Space, f *wire.AckFrame, ackDelayExponent uint8) error {
	s := &h.spaces[space]
	if s.dropped || len(f.Ranges) == 0 {
		return nil
	}
	largest := f.Ranges[0].Largest
	if largest > s.lastSent {
		return errAckUnsent
	}
	if space == SpaceApplication {
		for i := range min(h.numSkipped, maxSkipped) {
			if f.AcksPacket(h.skipped[i]) {
				return errAckSkipped
			}
		}
	}
	if space == SpaceHandshake {
		h.handshakeAckReceived = true
	}
	if !s.lostRunStart.IsZero() {
		// A late acknowledgment of a packet whose record is gone, sent
		// during the lost run that compaction carried, ends the run
		// (detectLost): that packet, or the first, was not lost.
		for _, r := range f.Ranges {
			if r.Largest >= s.lostRunPN && r.Smallest < s.packets.headPN {
				s.lostRunStart = time.Time{}
				s.scan.valid = false
				break
			}
		}
	}
	largestIncreased := largest > s.largestAcked
	if largestIncreased {
		s.largestAcked = largest
	}

	ev := &h.ev().ack
	ev.Acked = ev.Acked[:0]
	ev.AckedBytes = 0
	priorInFlight := h.bytesInFlight
	var (
		newlyAcked           int
		ackElicitingAcked    bool
		largestNewly         wire.PacketNumber
		largestNewlySent     time.Time
		newlyECT0, newlyECT1 uint64
	)
	// Walk the ranges from the smallest packet numbers up, so that the
	// acknowledged packets are reported in ascending order.
	if s.packets.n > 0 {
		for i := len(f.Ranges) - 1; i >= 0; i-- {
			r := f.Ranges[i]
			lo, hi := max(r.Smallest, s.packets.headPN), min(r.Largest, s.lastSent)
			for pn := lo; pn <= hi; pn++ {
				e := s.packets.at(pn)
				switch e.state {
				case sentUnsent:
					return errAckSkipped
				case sentLost:
					// Declared lost, yet it arrived: the marking did
					// not make it lose, and the peer's ECN counts
					// include it now (RFC 9000, Section 13.4.2).
					e.state = sentAcked
					s.scan.valid = false // it ends a run of lost packets
					h.ecn.onLateAck(e.ECN)
					switch e.ECN {
					case ECT0:
						newlyECT0++
					case ECT1:
						newlyECT1++
					}
					continue
				case sentOutstanding:
				default:
					continue
				}
				e.state = sentAcked
				newlyAcked++
				if e.SentTime.After(s.lastAckedSentTime) {
					s.lastAckedSentTime = e.SentTime
				}
				largestNewly, largestNewlySent = pn, e.SentTime
				if e.InFlight {
					h.bytesInFlight -= e.Size
					ev.Acked = append(ev.Acked, congestion.AckedPacket{
						PacketNumber: int64(pn), Bytes: e.Size, SentTime: e.SentTime,
					})
					ev.AckedBytes += e.Size
				}
				if e.AckEliciting {
					ackElicitingAcked = true
					s.ackElicitingInFlight--
				}
				switch e.ECN {
				case ECT0:
					newlyECT0++
				case ECT1:
					newlyECT1++
				}
				h.ecn.onAcked(e.ECN)
				h.reportFrames(space, s, e.Frames, true)
			}
		}
	}
	// "Nothing to do if there are no newly acked packets."
	if newlyAcked == 0 {
		return nil
	}

	// RFC 9002, Section 5.1: "An endpoint generates an RTT sample on
	// receiving an ACK frame that meets the following two conditions: the
	// largest acknowledged packet number is newly acknowledged, and at
	// least one of the newly acknowledged packets was ack-eliciting."
	if largestNewly == largest && ackElicitingAcked && (space != SpaceApplication || largestNewly >= h.rttFloor) {
		var ackDelay time.Duration
		// "an endpoint ... MAY ignore the acknowledgment delay for
		// Initial packets, since these acknowledgments are not delayed by
		// the peer" (RFC 9002, Section 5.3).
		if space != SpaceInitial {
			ackDelay = wire.AckDelayToDuration(f.Delay, ackDelayExponent)
		}
		h.rtt.Update(now.Sub(largestNewlySent), ackDelay, h.handshakeConfirmed)
		if !h.hasFirstRTTSample {
			h.hasFirstRTTSample = true
			h.firstRTTSample = now
		}
	}

	// "Process ECN information if present."
	ce := h.ecn.validate(s, f, largestIncreased, newlyECT0, newlyECT1)

	h.resetCongestionEvent()
	h.detectLost(now, space)

	// RFC 9002, Appendix A.7: ECN and the losses first, then the newly
	// acknowledged packets, so that the ACK frame that starts a recovery
	// period does not first grow the window that the period then cuts:
	// "ProcessECN(ack, pn_space); lost_packets =
	// DetectAndRemoveLostPackets(pn_space); if (!lost_packets.empty()):
	// OnPacketsLost(lost_packets); OnPacketsAcked(newly_acked_packets)".
	// As there, the acknowledged packets still count in flight when the
	// losses are reported.
	lostBytes := 0
	if cev := &h.ev().cong; len(cev.Lost) > 0 || ce {
		cev.ECN = ce
		if ce && largestNewlySent.After(cev.SentTime) {
			cev.SentTime = largestNewlySent
		}
		lostBytes = cev.LostBytes
		h.reportCongestion(now, priorInFlight, priorInFlight-lostBytes)
	}
	if len(ev.Acked) > 0 {
		ev.PriorInFlight = priorInFlight - lostBytes
		ev.BytesInFlight = h.bytesInFlight
		h.cc.OnAck(now, ev)
	}

	// "Reset pto_count unless the client is unsure if the server has
	// validated the client's address."
	if h.peerCompletedAddressValidation() {
		h.ptoCount = 0
	}
	h.compact(now, s)
	h.setTimer(now)
	return nil
}

// expireNotInFlight drops the oldest records of packets that are not in
// flight (ACK-only packets) once they are older than three PTO periods.
// Such packets are acknowledged only when the peer sends an ACK frame
// for other reasons ("Non-ack-eliciting packets are eventually
// acknowledged when the endpoint sends an ACK frame in response to other
// events", RFC 9000, Section 13.2.1), which may be never for an endpoint
// that only receives data; without this their records would pile up.
// Their frames are reported lost.
func (h *SentPacketHandler) expireNotInFlight(now time.Time, space Space, s *spaceState) {
	limit := now.Add(-3 * h.rtt.PTO(true))
	for {
		h.compact(now, s)
		if s.packets.n == 0 {
			return
		}
		e := s.packets.front()
		if e.state != sentOutstanding || e.InFlight || !e.SentTime.Before(limit) {
			return
		}
		h.declareLost(space, s, e, false)
	}
}

// reportFrames calls the FrameHandler for the frames of a packet.
func (h *SentPacketHandler) reportFrames(space Space, s *spaceState, r FrameRange, acked bool) {
	if h.frames == nil {
		return
	}
	for pos := r.start; pos < r.start+uint64(r.n); pos++ {
		if acked {
			h.frames.OnFrameAcked(space, s.frames.at(pos))
		} else {
			h.frames.OnFrameLost(space, s.frames.at(pos))
		}
	}
}

// compact removes from the front of the sent-packet ring of s the
// records of acknowledged, abandoned and never-sent packets, and those of
// lost packets sent more than two PTO periods before now, and the frame
// records only they used. Lost packets are remembered for a while:
// "After a packet is declared lost, the endpoint can still maintain state
// for it for an amount of time to allow for packet reordering" (RFC 9002,
// Appendix A.1); a late acknowledgment then counts for ECN validation.
func (h *SentPacketHandler) compact(now time.Time, s *spaceState) {
	keepLostSince := now.Add(-2 * h.rtt.PTO(true))
	for s.packets.n > 0 {
		e := s.packets.front()
		switch {
		case e.state == sentOutstanding:
			s.compactFrames()
			return
		case e.state == sentLost:
			if !e.SentTime.Before(keepLostSince) {
				s.compactFrames()
				return
			}
			h.ecn.onLostExpired(e.ECN)
			if s.lostRunStart.IsZero() && h.countsForPersistentCongestion(e) {
				s.lostRunStart, s.lostRunPN = e.SentTime, e.PacketNumber
			}
		case e.state == sentAcked:
			s.lostRunStart = time.Time{} // the run ends (detectLost)
		}
		s.packets.popFront()
	}
	s.compactFrames()
}

// compactFrames frees the frame records before those of the first packet
// in the ring.
func (s *spaceState) compactFrames() {
	if s.packets.n > 0 {
		s.frames.head = s.packets.front().Frames.start
	} else {
		s.frames.head = s.pendingFrames
	}
}

// BytesInFlight returns the bytes of the packets in flight in all spaces.
func (h *SentPacketHandler) BytesInFlight() int { return h.bytesInFlight }

// HasAckElicitingInFlight reports whether ack-eliciting packets of space
// are in flight; probes "SHOULD send ack-eliciting packets from other
// packet number spaces with in-flight data" (RFC 9002, Section 6.2.4).
func (h *SentPacketHandler) HasAckElicitingInFlight(space Space) bool {
	return h.spaces[space].ackElicitingInFlight > 0
}

// ECNMarking returns the ECN codepoint for the next packet: ECT(0) while
// ECN is being tested (the first ECNTestingPackets marked packets) and
// once the path is capable, Not-ECT otherwise (RFC 9000, Appendix A.4).
// The connection passes the codepoint it used in SentPacket.ECN.
func (h *SentPacketHandler) ECNMarking() ECNMark { return h.ecn.marking() }

// ECNState returns the state of ECN validation.
func (h *SentPacketHandler) ECNState() ECNState { return h.ecn.state }

// RestartECNValidation starts ECN validation anew, for a new path:
// "An endpoint thus attempts to use ECN and validates this for each new
// connection, when switching to a server's preferred address, and on
// active connection migration to a new path" (RFC 9000, Section 13.4.2).
//
// Marked packets sent on the old path that are still in flight count
// toward the new validation when they are acknowledged or lost; the
// handler does not track paths.
func (h *SentPacketHandler) RestartECNValidation() {
	h.ecn.reset(false)
}

// LostPackets returns how many packets were declared lost so far, in all
// packet number spaces (RFC 9002, Section 6.1).
func (h *SentPacketHandler) LostPackets() uint64 { return h.lostPackets }

// ReleaseIdle gives back the memory of an idle connection's records: it
// expires the records of ACK-only packets older than three PTO periods
// (as sending another would), and frees the rings of every space left
// with no record, and the controller's events with their lists. They are
// made again when the next packet is sent or acknowledged, which
// allocates.
// Call it when nothing was sent or received for a while; it changes
// nothing the handler reports.
func (h *SentPacketHandler) ReleaseIdle(now time.Time) {
	for i := range h.spaces {
		s := &h.spaces[i]
		if s.dropped {
			continue
		}
		h.expireNotInFlight(now, Space(i), s)
		if s.packets.n == 0 {
			s.packets.release()
		}
		if s.frames.head == s.frames.tail && s.pendingFrames == s.frames.tail {
			s.frames.release()
		}
	}
	h.events = nil
}
