package wire

import (
	"math"
	"time"
)

// DefaultMaxAckRanges is the number of ACK ranges that ParseAckFrame keeps
// when its maxRanges argument is <= 0.
//
// RFC 9000 puts no limit on the ACK Range Count (Section 19.3), so a frame
// with more ranges is legal and is not an error: the parser validates all
// of them, keeps the highest DefaultMaxAckRanges (the most recent packets,
// those loss detection acts on) in Ranges and counts the others in
// IgnoredRanges. Memory stays bounded and parsing takes time linear in the
// size of the frame. Senders, including this library's, rarely send more.
const DefaultMaxAckRanges = 256

// An AckRange is a run of consecutive acknowledged packet numbers,
// Smallest to Largest inclusive (RFC 9000, Section 19.3.1).
type AckRange struct {
	Smallest, Largest PacketNumber
}

// ECNCounts are the ECN counts of an ACK frame of type 0x03: the total
// number of packets received with the ECT(0), ECT(1) and ECN-CE codepoints
// in the packet number space of the ACK frame (RFC 9000, Section 19.3.2).
type ECNCounts struct {
	ECT0, ECT1, CE uint64
}

// AckFrame is an ACK frame (types 0x02 and 0x03, RFC 9000, Section 19.3).
//
// An AckFrame is meant to be reused: ParseAckFrame overwrites it and keeps
// the capacity of Ranges, so parsing into the same AckFrame again does not
// allocate. Append, EncodedLen, LargestAcked and AcksPacket take a pointer
// for the same reason.
type AckFrame struct {
	// Ranges are the acknowledged packet numbers in descending order:
	// Ranges[0].Largest is the Largest Acknowledged field, and each range
	// lies below the previous one with at least one unacknowledged packet
	// in between (non-overlapping and non-adjacent). A valid frame has at
	// least one range.
	Ranges []AckRange
	// Delay is the ACK Delay field as encoded: the delay in microseconds
	// shifted right by the ack_delay_exponent of the frame's sender
	// (RFC 9000, Sections 13.2.5 and 19.3). See AckDelayToDuration and
	// AckDelayFromDuration.
	Delay uint64
	// HasECN reports whether the frame is of type 0x03 (ACK_ECN), which
	// carries ECN.
	HasECN bool
	// ECN holds the ECN counts when HasECN is true; Append ignores it
	// otherwise, and ParseAckFrame zeroes it.
	ECN ECNCounts
	// IgnoredRanges is the number of ranges, below those in Ranges, that
	// ParseAckFrame validated and skipped because the frame had more than
	// its bound (see DefaultMaxAckRanges). The frame acknowledges those
	// packets too; a receiver that acts on Ranges alone treats them as not
	// acknowledged by this frame, as if the peer had omitted them ("older
	// ranges (those with the smallest packet numbers) are omitted", RFC
	// 9000, Section 13.2.3). Append ignores it.
	IgnoredRanges int
}

// ParseAckFrame parses the ACK frame at the start of b (RFC 9000,
// Section 19.3) into f and returns the number of bytes it takes.
//
// It sets every field of f and reuses the capacity of f.Ranges
// (f.Ranges = f.Ranges[:0], then append), so parsing into a reused AckFrame
// whose Ranges has room for the frame's ranges does not allocate. The
// ranges are not copied from b; b may be reused once ParseAckFrame returns.
//
// maxRanges bounds the number of ranges stored in f.Ranges; maxRanges <= 0
// means DefaultMaxAckRanges. The ranges of a frame with more are all
// parsed and validated, the highest maxRanges are stored and the others
// counted in f.IgnoredRanges, so that f.Ranges never grows beyond
// maxRanges. A range that would reach below packet number 0 is a
// FRAME_ENCODING_ERROR (RFC 9000, Section 19.3.1), ignored or not, as is a
// truncated frame. On error, f.Ranges is left empty and the other fields
// of f are unspecified.
//
// Parsing takes time linear in the size of the frame.
func ParseAckFrame(b []byte, f *AckFrame, maxRanges int) (int, error) {
	if len(b) == 0 || (b[0] != byte(FrameTypeAck) && b[0] != byte(FrameTypeAckECN)) {
		f.Ranges = f.Ranges[:0]
		return 0, simpleTypeError(b, FrameTypeAck)
	}
	t := FrameType(b[0])
	r := newReader(b)
	r.off = 1
	largest := r.varint()
	delay := r.varint()
	count := r.varint()
	first := r.varint()
	ranges := f.Ranges[:0]
	f.Ranges = ranges
	if !r.ok {
		return 0, encodingError(t, "truncated ACK frame")
	}
	if maxRanges <= 0 {
		maxRanges = DefaultMaxAckRanges
	}
	// The number of ranges after the first that are stored: the others
	// are parsed and validated but not stored. count may claim up to
	// 2^62-1; the loop below stops at the end of b.
	keep := uint64(maxRanges - 1)
	// RFC 9000, Section 19.3.1: "If any computed packet number is negative,
	// an endpoint MUST generate a connection error of type
	// FRAME_ENCODING_ERROR." All values are below 2^62, so none of the
	// sums and differences below overflows.
	if first > largest {
		return 0, encodingError(t, "ACK range below packet number 0")
	}
	smallest := largest - first
	ranges = append(ranges, AckRange{Smallest: PacketNumber(smallest), Largest: PacketNumber(largest)})
	for i := uint64(0); i < count; i++ {
		gap := r.varint()
		length := r.varint()
		if !r.ok {
			return 0, encodingError(t, "truncated ACK frame")
		}
		// "largest = previous_smallest - gap - 2" (Section 19.3.1)
		if gap+2 > smallest {
			return 0, encodingError(t, "ACK range below packet number 0")
		}
		largest = smallest - gap - 2
		// "smallest = largest - ack_range" (Section 19.3.1)
		if length > largest {
			return 0, encodingError(t, "ACK range below packet number 0")
		}
		smallest = largest - length
		if i < keep {
			ranges = append(ranges, AckRange{Smallest: PacketNumber(smallest), Largest: PacketNumber(largest)})
		}
	}
	var ecn ECNCounts
	if t == FrameTypeAckECN {
		ecn.ECT0 = r.varint()
		ecn.ECT1 = r.varint()
		ecn.CE = r.varint()
		if !r.ok {
			return 0, encodingError(t, "truncated ACK frame")
		}
	}
	f.Ranges = ranges
	f.IgnoredRanges = int(count - min(count, keep))
	f.Delay = delay
	f.HasECN = t == FrameTypeAckECN
	f.ECN = ecn
	return r.off, nil
}

// Append appends the ACK frame (RFC 9000, Section 19.3): type 0x03 when
// f.HasECN, else 0x02. It panics if f.Ranges is empty or is not a valid
// list of ranges as documented on AckFrame, or if Delay or an ECN count is
// 2^62 or more.
func (f *AckFrame) Append(b []byte) []byte {
	if len(f.Ranges) == 0 {
		panic("wire: ACK frame without ranges")
	}
	t := FrameTypeAck
	if f.HasECN {
		t = FrameTypeAckECN
	}
	r0 := f.Ranges[0]
	ackCheckFirstRange(r0)
	b = append(b, byte(t))
	b = AppendVarint(b, uint64(r0.Largest))
	b = AppendVarint(b, f.Delay)
	b = AppendVarint(b, uint64(len(f.Ranges)-1))
	b = AppendVarint(b, uint64(r0.Largest-r0.Smallest))
	prev := r0.Smallest
	for _, r := range f.Ranges[1:] {
		ackCheckRange(prev, r)
		b = AppendVarint(b, uint64(prev-r.Largest-2))
		b = AppendVarint(b, uint64(r.Largest-r.Smallest))
		prev = r.Smallest
	}
	if f.HasECN {
		b = AppendVarint(b, f.ECN.ECT0)
		b = AppendVarint(b, f.ECN.ECT1)
		b = AppendVarint(b, f.ECN.CE)
	}
	return b
}

// EncodedLen returns the number of bytes Append writes. It panics where
// Append does.
func (f *AckFrame) EncodedLen() int {
	if len(f.Ranges) == 0 {
		panic("wire: ACK frame without ranges")
	}
	r0 := f.Ranges[0]
	ackCheckFirstRange(r0)
	n := 1 + VarintLen(uint64(r0.Largest)) + VarintLen(f.Delay) +
		VarintLen(uint64(len(f.Ranges)-1)) + VarintLen(uint64(r0.Largest-r0.Smallest))
	prev := r0.Smallest
	for _, r := range f.Ranges[1:] {
		ackCheckRange(prev, r)
		n += VarintLen(uint64(prev-r.Largest-2)) + VarintLen(uint64(r.Largest-r.Smallest))
		prev = r.Smallest
	}
	if f.HasECN {
		n += VarintLen(f.ECN.ECT0) + VarintLen(f.ECN.ECT1) + VarintLen(f.ECN.CE)
	}
	return n
}

// ackCheckFirstRange panics unless r is a valid first range.
func ackCheckFirstRange(r AckRange) {
	if r.Smallest < 0 || r.Smallest > r.Largest || r.Largest > MaxPacketNumber {
		panic("wire: invalid ACK range")
	}
}

// ackCheckRange panics unless r is a valid range following the range whose
// smallest packet number is prev: non-empty, non-negative and at least one
// packet number below prev-1, so that the Gap field is not negative.
func ackCheckRange(prev PacketNumber, r AckRange) {
	if r.Smallest < 0 || r.Smallest > r.Largest || r.Largest > prev-2 {
		panic("wire: ACK ranges not descending, non-adjacent and non-negative")
	}
}

// LargestAcked returns the Largest Acknowledged field, Ranges[0].Largest
// (RFC 9000, Section 19.3), or InvalidPacketNumber if f has no ranges.
func (f *AckFrame) LargestAcked() PacketNumber {
	if len(f.Ranges) == 0 {
		return InvalidPacketNumber
	}
	return f.Ranges[0].Largest
}

// AcksPacket reports whether pn lies in one of f's ranges. It does a binary
// search, in time logarithmic in the number of ranges, and relies on the
// ranges being in descending order as documented on AckFrame.
func (f *AckFrame) AcksPacket(pn PacketNumber) bool {
	// Find the first range (the one with the largest numbers) whose
	// Smallest is <= pn; pn is acknowledged if it is also <= its Largest.
	lo, hi := 0, len(f.Ranges)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if f.Ranges[mid].Smallest <= pn {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo < len(f.Ranges) && pn <= f.Ranges[lo].Largest
}

// ackMaxMicros is the largest number of microseconds a time.Duration holds.
const ackMaxMicros = uint64(math.MaxInt64 / int64(time.Microsecond))

// AckDelayToDuration decodes the ACK Delay field of an ACK frame: "It is
// decoded by multiplying the value in the field by 2 to the power of the
// ack_delay_exponent transport parameter sent by the sender of the ACK
// frame" (RFC 9000, Section 19.3), the result being in microseconds
// (Section 13.2.5). exponent is the peer's ack_delay_exponent (default 3,
// at most 20; Section 18.2). A result too large for a time.Duration
// saturates at math.MaxInt64 nanoseconds instead of overflowing.
func AckDelayToDuration(delay uint64, exponent uint8) time.Duration {
	if delay == 0 {
		return 0
	}
	if exponent >= 64 || delay > ackMaxMicros>>exponent {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(delay<<exponent) * time.Microsecond
}

// AckDelayFromDuration encodes d for the ACK Delay field of an ACK frame:
// the delay in microseconds divided by 2 to the power of exponent, this
// endpoint's ack_delay_exponent (RFC 9000, Sections 13.2.5, 18.2 and 19.3).
// It rounds down; a negative d gives 0, and the result saturates at 2^62-1,
// the largest value the field can carry.
func AckDelayFromDuration(d time.Duration, exponent uint8) uint64 {
	if d <= 0 || exponent >= 64 {
		return 0
	}
	v := uint64(d/time.Microsecond) >> exponent
	return min(v, MaxVarint)
}
