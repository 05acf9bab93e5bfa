package ackhandler

import (
	"time"

	"github.com/quicstack/quic/wire"
)

// DefaultMaxReceivedRanges is the default bound on the number of ranges of
// received packet numbers a ReceivedPackets remembers, and so on the
// number of ranges of the ACK frames it writes.
const DefaultMaxReceivedRanges = 64

// DefaultMaxAckDelay is the default of the max_ack_delay transport
// parameter, 25 milliseconds (RFC 9000, Section 18.2).
const DefaultMaxAckDelay = 25 * time.Millisecond

// ReceivedPackets tracks the packets received in one packet number space
// and decides when to acknowledge them (RFC 9000, Section 13.2).
//
// Received packet numbers are kept as a sorted set of at most
// DefaultMaxReceivedRanges ranges (see SetMaxRanges); when a new range
// would exceed the bound, the oldest range is dropped. Packet numbers
// below the lowest range still tracked after such a drop, or below the
// point given to IgnoreBelow, are treated as duplicates: "A receiver MUST retain an ACK
// Range unless it can ensure that it will not subsequently accept packets
// with numbers in that range. Maintaining a minimum packet number that
// increases as ranges are discarded is one way to achieve this with
// minimal state" (RFC 9000, Section 13.2.3).
//
// The use, for each authenticated packet:
//
//	if r.IsDuplicate(pn) { drop it }
//	... process its frames ...
//	r.OnPacket(now, pn, ackEliciting, ecn)
//
// and, when building packets: if r.AckDeadline() is not zero and not
// after now (or an ACK can ride along in a packet being sent anyway and
// r.AckPending()), r.AppendAck(now, &frame, exponent), write the frame,
// and once the packet is sent, r.OnAckSent().
//
// A ReceivedPackets is not safe for concurrent use; its methods do not
// allocate.
type ReceivedPackets struct {
	space Space

	// ranges holds the received packet numbers in ascending order,
	// disjoint and non-adjacent; cap(ranges) is maxRanges+1.
	ranges    []wire.AckRange
	maxRanges int
	// ignoreBelow is the lowest packet number still accepted.
	ignoreBelow wire.PacketNumber

	largest             wire.PacketNumber // largest received
	largestTime         time.Time         // when largest was received
	largestAckEliciting wire.PacketNumber // largest ack-eliciting received

	ecn     wire.ECNCounts
	ecnSeen bool
	lastCE  bool // the last packet received was CE-marked
	// ackFreqSeen: an ACK_FREQUENCY frame was applied, whose sequence
	// number is ackFreqSeq (OnAckFrequency).
	ackFreqSeen bool
	ackFreqSeq  uint64

	// ACK policy (draft-ietf-quic-ack-frequency, Section 4).
	threshold        uint64
	maxAckDelay      time.Duration
	reorderThreshold uint64

	// ACK scheduling state since the last ACK frame sent.
	pending          bool      // a packet arrived since the last ACK
	unackedEliciting uint64    // ack-eliciting packets since the last ACK
	firstUnacked     time.Time // arrival of the first of them
	immediate        bool      // an immediate ACK is due
	immediateTime    time.Time // when it became due

	largestAckSent wire.PacketNumber // Largest Acknowledged of the last ACK sent
	largestInAck   wire.PacketNumber // Largest Acknowledged of the last AppendAck
}

// NewReceivedPackets returns the tracker of received packets for a packet
// number space, with the default policy: an ACK for every second
// ack-eliciting packet (threshold 1), a reordering threshold of 1,
// max_ack_delay DefaultMaxAckDelay and DefaultMaxReceivedRanges ranges.
// In the Initial and Handshake spaces every ack-eliciting packet is
// acknowledged immediately: "An endpoint MUST acknowledge all
// ack-eliciting Initial and Handshake packets immediately" (RFC 9000,
// Section 13.2.1).
func NewReceivedPackets(space Space) *ReceivedPackets {
	r := &ReceivedPackets{
		space:               space,
		largest:             wire.InvalidPacketNumber,
		largestAckEliciting: wire.InvalidPacketNumber,
		largestAckSent:      wire.InvalidPacketNumber,
		largestInAck:        wire.InvalidPacketNumber,
		threshold:           1,
		reorderThreshold:    1,
		maxAckDelay:         DefaultMaxAckDelay,
	}
	r.SetMaxRanges(DefaultMaxReceivedRanges)
	return r
}

// SetMaxRanges sets the number of ranges remembered; n < 1 means
// DefaultMaxReceivedRanges. Lowering it drops the oldest ranges. The
// ranges' storage grows on demand, so that a connection whose packets
// arrive in order (or that is idle) holds a few bytes, not n ranges.
func (r *ReceivedPackets) SetMaxRanges(n int) {
	if n < 1 {
		n = DefaultMaxReceivedRanges
	}
	for len(r.ranges) > n {
		r.dropOldest()
	}
	r.maxRanges = n
}

// SetMaxAckDelay sets this endpoint's max_ack_delay, the longest an ACK
// for an ack-eliciting packet is delayed (the value sent in the
// max_ack_delay transport parameter; default DefaultMaxAckDelay).
func (r *ReceivedPackets) SetMaxAckDelay(d time.Duration) { r.maxAckDelay = d }

// SetAckFrequency applies the fields of an ACK_FREQUENCY frame the peer
// sent (draft-ietf-quic-ack-frequency, Section 4): threshold is the
// Ack-Eliciting Threshold ("the maximum number of ack-eliciting packets
// the recipient of this frame receives without sending an
// acknowledgment"; default 1, 0 acknowledges every ack-eliciting packet
// immediately), maxAckDelay the Requested Max Ack Delay, and
// reorderThreshold the Reordering Threshold ("A value of 0 indicates
// out-of-order packets do not elicit an immediate ACK"; default 1). It
// does not look at the frame's sequence number: OnAckFrequency does. The
// connection checks the validity of the values.
func (r *ReceivedPackets) SetAckFrequency(threshold uint64, maxAckDelay time.Duration, reorderThreshold uint64) {
	r.threshold = threshold
	r.maxAckDelay = maxAckDelay
	r.reorderThreshold = reorderThreshold
}

// OnAckFrequency applies an ACK_FREQUENCY frame with sequence number seq
// (see SetAckFrequency for the other fields) and reports whether it did:
// "A receiving endpoint MUST ignore a received ACK_FREQUENCY frame unless
// the Sequence Number value in the frame is greater than the largest
// processed value" (draft-ietf-quic-ack-frequency, Section 4), so that an
// older frame reordered behind a newer one does not override it.
func (r *ReceivedPackets) OnAckFrequency(seq, threshold uint64, maxAckDelay time.Duration, reorderThreshold uint64) bool {
	if r.ackFreqSeen && seq <= r.ackFreqSeq {
		return false
	}
	r.ackFreqSeen, r.ackFreqSeq = true, seq
	r.SetAckFrequency(threshold, maxAckDelay, reorderThreshold)
	return true
}

// AckFrequencySequence returns the Sequence Number of the last
// ACK_FREQUENCY frame applied, and whether one was.
func (r *ReceivedPackets) AckFrequencySequence() (uint64, bool) { return r.ackFreqSeq, r.ackFreqSeen }

// LargestReceived returns the largest packet number received, or
// wire.InvalidPacketNumber. It is kept even when ranges are dropped:
// receivers "MUST retain the largest packet number that has been
// successfully processed, as that is used to recover packet numbers from
// subsequent packets" (RFC 9000, Section 13.2.3).
func (r *ReceivedPackets) LargestReceived() wire.PacketNumber { return r.largest }

// IsDuplicate reports whether a packet with number pn was already
// received, or lies below the lowest packet number still tracked and is
// therefore treated as one. "ECN counts are only incremented when QUIC
// packets from the received IP packet are processed. As such, duplicate
// QUIC packets are not processed" (RFC 9000, Section 13.4.1).
func (r *ReceivedPackets) IsDuplicate(pn wire.PacketNumber) bool {
	if pn < r.ignoreBelow {
		return true
	}
	i := r.search(pn)
	return i < len(r.ranges) && r.ranges[i].Smallest <= pn
}

// search returns the index of the first range whose Largest is >= pn.
func (r *ReceivedPackets) search(pn wire.PacketNumber) int {
	lo, hi := 0, len(r.ranges)
	// Most packets arrive in order: check the last range first.
	if hi > 0 && r.ranges[hi-1].Largest < pn {
		return hi
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r.ranges[mid].Largest < pn {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// OnPacket records a processed packet: its number, whether it was
// ack-eliciting, and the ECN codepoint of the IP packet that carried it.
// It reports whether the packet is a duplicate, in which case nothing is
// recorded.
func (r *ReceivedPackets) OnPacket(now time.Time, pn wire.PacketNumber, ackEliciting bool, ecn ECNMark) (duplicate bool) {
	if pn < 0 || r.IsDuplicate(pn) {
		return true
	}
	r.insert(pn)
	// "On receiving an IP packet with an ECT(0), ECT(1), or ECN-CE
	// codepoint, an ECN-enabled endpoint accesses the ECN field and
	// increases the corresponding ECT(0), ECT(1), or ECN-CE count"
	// (RFC 9000, Section 13.4.1).
	switch ecn {
	case ECT0:
		r.ecn.ECT0++
		r.ecnSeen = true
	case ECT1:
		r.ecn.ECT1++
		r.ecnSeen = true
	case CE:
		r.ecn.CE++
		r.ecnSeen = true
	}
	if pn > r.largest {
		r.largest = pn
		r.largestTime = now
	}
	r.pending = true
	prevCE := r.lastCE
	r.lastCE = ecn == CE
	if !ackEliciting {
		// "An endpoint MUST NOT send a non-ack-eliciting packet in
		// response to a non-ack-eliciting packet, even if there are
		// packet gaps that precede the received packet."
		return false
	}
	prevLargest := r.largestAckEliciting
	if pn > r.largestAckEliciting {
		r.largestAckEliciting = pn
	}
	r.unackedEliciting++
	if r.firstUnacked.IsZero() {
		r.firstUnacked = now
	}
	if r.immediate {
		return false
	}
	if r.space != SpaceApplication ||
		// "A receiving endpoint SHOULD send at least one ACK frame after
		// receiving more than this many ack-eliciting packets"
		// (draft-ietf-quic-ack-frequency, Section 4); with the default
		// of 1, "A receiver SHOULD send an ACK frame after receiving at
		// least two ack-eliciting packets" (RFC 9000, Section 13.2.2).
		r.unackedEliciting > r.threshold ||
		r.ceElicitsAck(ecn, prevCE) ||
		r.reordered(pn, prevLargest) {
		r.immediate = true
		r.immediateTime = now
	}
	return false
}

// ceElicitsAck reports whether a CE mark calls for an immediate ACK:
// "packets marked with the ECN Congestion Experienced (CE) codepoint in the
// IP header SHOULD be acknowledged immediately" (RFC 9000, Section
// 13.2.1), and with an Ack-Eliciting Threshold above 1, "CE-marking only
// triggers an immediate acknowledgement when there is a transition from
// non-CE-marked to CE-marked" (draft-ietf-quic-ack-frequency, Section 6.3).
func (r *ReceivedPackets) ceElicitsAck(ecn ECNMark, prevCE bool) bool {
	return ecn == CE && (r.threshold <= 1 || !prevCE)
}

// reordered reports whether the ack-eliciting packet pn, just inserted,
// elicits an immediate ACK because of reordering; prevLargest is the
// largest ack-eliciting packet number received before it.
func (r *ReceivedPackets) reordered(pn, prevLargest wire.PacketNumber) bool {
	switch {
	case r.reorderThreshold == 0:
		// "If the most recent ACK_FREQUENCY frame received from the peer
		// has a Reordering Threshold value of 0, the endpoint SHOULD NOT
		// send an immediate acknowledgment in response to packets
		// received out of order" (draft-ietf-quic-ack-frequency, 6.2).
		return false
	case r.reorderThreshold == 1:
		// RFC 9000, Section 13.2.1: "an endpoint SHOULD generate and send
		// an ACK frame without delay when it receives an ack-eliciting
		// packet either: when the received packet has a packet number
		// less than another ack-eliciting packet that has been received,
		// or when the packet has a packet number larger than the
		// highest-numbered ack-eliciting packet that has been received
		// and there are missing packets between that packet and this
		// packet."
		if pn < prevLargest {
			return true
		}
		rng := r.ranges[r.search(pn)]
		return rng.Smallest > max(prevLargest+1, r.ignoreBelow)
	}
	// draft-ietf-quic-ack-frequency, Section 6.2: "SHOULD send an
	// immediate ACK whenever it receives an ack-eliciting, out-of order
	// packet whose packet number is outside the reordering window of the
	// peer, i.e. when * the difference between the smallest Unreported
	// Missing packet and the Largest Unacked packet is greater than or
	// equal to the Reordering Threshold value; or * the received packet
	// number is less than or equal to Largest Acked - Reordering
	// Threshold."
	th := wire.PacketNumber(min(r.reorderThreshold, uint64(wire.MaxPacketNumber)))
	lowest := r.ignoreBelow // smallest candidate for Unreported Missing
	if r.largestAckSent != wire.InvalidPacketNumber {
		if pn <= r.largestAckSent-th {
			return true
		}
		// "Largest Reported Missing: ... Largest Acked - Reordering
		// Threshold", exclusive.
		lowest = max(lowest, r.largestAckSent-th+1)
	}
	missing := r.smallestMissingFrom(lowest)
	return missing < r.largestAckEliciting && r.largestAckEliciting-missing >= th
}

// smallestMissingFrom returns the smallest packet number >= pn that was
// not received.
func (r *ReceivedPackets) smallestMissingFrom(pn wire.PacketNumber) wire.PacketNumber {
	for _, rng := range r.ranges[r.search(pn):] {
		if rng.Smallest > pn {
			return pn
		}
		pn = rng.Largest + 1
	}
	return pn
}

// insert adds pn, which is not in the set, to the ranges.
func (r *ReceivedPackets) insert(pn wire.PacketNumber) {
	n := len(r.ranges)
	if n > 0 && r.ranges[n-1].Largest+1 == pn { // the common case
		r.ranges[n-1].Largest = pn
		return
	}
	i := r.search(pn - 1) // first range with Largest+1 >= pn
	switch {
	case i < n && r.ranges[i].Largest+1 == pn:
		r.ranges[i].Largest = pn
		if i+1 < n && r.ranges[i+1].Smallest == pn+1 {
			r.ranges[i].Largest = r.ranges[i+1].Largest
			r.ranges = append(r.ranges[:i+1], r.ranges[i+2:]...)
		}
	case i < n && r.ranges[i].Smallest == pn+1:
		r.ranges[i].Smallest = pn
	default:
		r.ranges = append(r.ranges, wire.AckRange{})
		copy(r.ranges[i+1:], r.ranges[i:])
		r.ranges[i] = wire.AckRange{Smallest: pn, Largest: pn}
		if len(r.ranges) > r.maxRanges {
			r.dropOldest()
		}
	}
}

// dropOldest removes the range with the smallest packet numbers; there
// are at least two. Everything below the next range becomes a duplicate,
// the missing packets just below it included, so that they cannot come
// back as a new oldest range only to be dropped again.
func (r *ReceivedPackets) dropOldest() {
	r.ignoreBelow = max(r.ignoreBelow, r.ranges[1].Smallest)
	r.ranges = append(r.ranges[:0], r.ranges[1:]...)
}

// IgnoreBelow stops tracking and acknowledging packet numbers below pn;
// packets below pn are treated as duplicates from then on. The connection
// calls it with the Largest Acknowledged of an ACK frame of its own plus
// one when the packet that carried that frame is acknowledged: "When a
// packet containing an ACK frame is acknowledged, the receiver can stop
// acknowledging packets less than or equal to the Largest Acknowledged
// field in the sent ACK frame" (RFC 9000, Section 13.2.4).
func (r *ReceivedPackets) IgnoreBelow(pn wire.PacketNumber) {
	if pn <= r.ignoreBelow {
		return
	}
	r.ignoreBelow = pn
	i := 0
	for i < len(r.ranges) && r.ranges[i].Largest < pn {
		i++
	}
	r.ranges = append(r.ranges[:0], r.ranges[i:]...)
	if len(r.ranges) > 0 && r.ranges[0].Smallest < pn {
		r.ranges[0].Smallest = pn
	}
}

// AckPending reports whether a packet was received since the last ACK
// frame was sent, so that an ACK frame could usefully ride along in a
// packet sent for another reason (RFC 9000, Section 13.2: "When sending a
// packet for any reason, an endpoint SHOULD attempt to include an ACK
// frame if one has not been sent recently").
func (r *ReceivedPackets) AckPending() bool { return r.pending && len(r.ranges) > 0 }

// AckDeadline returns when an ACK frame must be sent: the zero time if
// none is due (no ack-eliciting packet arrived since the last ACK), a time
// not after now if one is due immediately, or else the arrival of the
// first unacknowledged ack-eliciting packet plus max_ack_delay: "ack-
// eliciting packets MUST be acknowledged at least once within the maximum
// delay an endpoint communicated using the max_ack_delay transport
// parameter" (RFC 9000, Section 13.2.1).
func (r *ReceivedPackets) AckDeadline() time.Time {
	switch {
	case len(r.ranges) == 0:
		return time.Time{}
	case r.immediate:
		return r.immediateTime
	case r.unackedEliciting > 0:
		return r.firstUnacked.Add(r.maxAckDelay)
	}
	return time.Time{}
}

// OnImmediateAck records an IMMEDIATE_ACK frame received at now: "An
// endpoint SHOULD send a packet containing an ACK frame immediately upon
// receiving an IMMEDIATE_ACK frame" (draft-ietf-quic-ack-frequency,
// Section 5).
func (r *ReceivedPackets) OnImmediateAck(now time.Time) {
	if !r.immediate {
		r.immediate = true
		r.immediateTime = now
	}
}

// AppendAck fills f, reusing its Ranges, with an ACK frame for the
// packets tracked, and reports whether there was anything to acknowledge.
// The ranges are in descending order as wire.AckFrame requires, no more
// than the bound set with SetMaxRanges; a caller short of space may drop
// ranges from the end of f.Ranges ("older ranges (those with the smallest
// packet numbers) are omitted", RFC 9000, Section 13.2.3). The ACK Delay is the time since the
// largest packet arrived, encoded with this endpoint's ackDelayExponent
// (RFC 9000, Section 13.2.5). ECN counts are included (type ACK_ECN) once
// any packet arrived with an ECN codepoint.
//
// AppendAck does not change the scheduling state; call OnAckSent when the
// frame was sent.
func (r *ReceivedPackets) AppendAck(now time.Time, f *wire.AckFrame, ackDelayExponent uint8) bool {
	n := len(r.ranges)
	if n == 0 {
		return false
	}
	f.Ranges = f.Ranges[:0]
	for i := n - 1; i >= 0; i-- {
		f.Ranges = append(f.Ranges, r.ranges[i])
	}
	f.Delay = wire.AckDelayFromDuration(now.Sub(r.largestTime), ackDelayExponent)
	f.HasECN = r.ecnSeen
	f.ECN = r.ecn
	r.largestInAck = r.ranges[n-1].Largest
	return true
}

// OnAckSent records that the ACK frame of the last AppendAck was sent: the
// ack-eliciting packet count, the delayed-ACK timer and an immediate ACK
// request are reset ("Sending such an additional ACK resets the
// max_ack_delay timer and the Ack-Eliciting Threshold counter, as any ACK
// would", draft-ietf-quic-ack-frequency, Section 6.2).
func (r *ReceivedPackets) OnAckSent() {
	r.largestAckSent = r.largestInAck
	r.pending = false
	r.unackedEliciting = 0
	r.firstUnacked = time.Time{}
	r.immediate = false
	r.immediateTime = time.Time{}
}

// ECNCounts returns the ECN counts of the space.
func (r *ReceivedPackets) ECNCounts() wire.ECNCounts { return r.ecn }
