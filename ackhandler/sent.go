package ackhandler

import (
	"sync"
	"time"

	"github.com/quicstack/quic/wire"
)

// A SentPacket is the record of one sent packet, holding what RFC 9002,
// Appendix A.1.1 asks for ("packet_number", "ack_eliciting", "in_flight",
// "sent_bytes", "time_sent") plus its ECN codepoint and the span of frame
// records it carried.
//
// The connection fills PacketNumber, Size, AckEliciting, InFlight and ECN
// and passes the value to SentPacketHandler.OnPacketSent, which sets
// SentTime and Frames.
type SentPacket struct {
	// PacketNumber is the full packet number.
	PacketNumber wire.PacketNumber
	// SentTime is the time the packet was sent.
	SentTime time.Time
	// Size is the number of bytes sent in the packet, "not including UDP
	// or IP overhead, but including QUIC framing overhead".
	Size int
	// AckEliciting reports that the packet contains a frame other than
	// ACK, PADDING and CONNECTION_CLOSE (RFC 9002, Section 2). An
	// ack-eliciting packet is always in flight.
	AckEliciting bool
	// InFlight reports that the packet counts toward bytes in flight:
	// it is ack-eliciting or contains PADDING (RFC 9002, Section 2).
	InFlight bool
	// ECN is the ECN codepoint the packet was sent with; see
	// SentPacketHandler.ECNMarking.
	ECN ECNMark
	// Frames is the span of frame records the packet carried, added with
	// SentPacketHandler.AddFrame before OnPacketSent.
	Frames FrameRange
}

// A FrameRecord describes one frame a sent packet carried, with enough
// information for the connection to act when the packet is acknowledged
// or lost: retire or resend a range of stream or CRYPTO data, or mark a
// control frame as needing to be sent again with current values
// (RFC 9000, Section 13.3). The handler stores records by value in a ring
// buffer and never interprets them; the meaning of the fields is the
// connection's convention. A suggested one:
//
//   - STREAM: StreamID, Offset and Length of the data, Extra = 1 for FIN.
//   - CRYPTO: Offset and Length.
//   - ACK: Extra = the Largest Acknowledged field of the ACK frame sent,
//     so that on its acknowledgment the receiver can call
//     ReceivedPackets.IgnoreBelow(Extra+1) (RFC 9000, Section 13.2.4).
//   - RESET_STREAM, STOP_SENDING, MAX_STREAM_DATA, STREAM_DATA_BLOCKED:
//     StreamID.
//   - NEW_CONNECTION_ID, RETIRE_CONNECTION_ID: Extra = sequence number.
//   - MAX_DATA, MAX_STREAMS, HANDSHAKE_DONE, PING and the like: Type only.
type FrameRecord struct {
	Type     wire.FrameType
	StreamID int64
	Offset   uint64
	Length   uint64
	Extra    uint64
}

// A FrameRange is the contiguous span of frame records of one sent packet
// inside the handler's per-space ring buffer.
type FrameRange struct {
	start uint64 // absolute position of the first record
	n     uint32 // number of records
}

// Len returns the number of frame records in the span.
func (r FrameRange) Len() int { return int(r.n) }

// A FrameHandler learns what happened to the frames of sent packets. The
// connection implements it.
//
// The *FrameRecord points into the handler's ring buffer and is valid only
// during the call; an implementation must copy what it keeps. The methods
// are called while the SentPacketHandler processes an ACK frame, a
// timeout or Requeue, so they must not call back into the
// SentPacketHandler. Each frame is reported once: frames of a packet
// declared lost are not reported again if the packet is acknowledged
// late, and frames of packets discarded with DropSpace are reported
// neither acknowledged nor lost (RFC 9002, Section 6.4).
type FrameHandler interface {
	// OnFrameAcked is called for each frame of a newly acknowledged
	// packet, in the order the frames were added.
	OnFrameAcked(space Space, f *FrameRecord)
	// OnFrameLost is called for each frame of a packet declared lost, or
	// requeued with Requeue, in the order the frames were added.
	OnFrameLost(space Space, f *FrameRecord)
}

// A PacketLossObserver learns of each packet declared lost (RFC 9002,
// Section 6.1), for statistics and tracing; a FrameHandler that also
// implements it is told, before the packet's frames are reported lost.
// Packets requeued or abandoned are not losses and are not reported.
type PacketLossObserver interface {
	OnPacketLost(space Space, pn wire.PacketNumber, size int)
}

// sentState is the state of a slot in the sent-packet ring.
type sentState uint8

const (
	// sentUnsent is a packet number that was skipped or otherwise never
	// used: acknowledging it is a PROTOCOL_VIOLATION.
	sentUnsent sentState = iota
	// sentOutstanding is a packet neither acknowledged nor lost yet.
	sentOutstanding
	// sentAcked is an acknowledged packet, kept until it reaches the
	// front of the ring (persistent congestion needs to see it between
	// lost packets).
	sentAcked
	// sentLost is a packet declared lost, kept for a while in case it
	// is acknowledged late.
	sentLost
	// sentAbandoned is a packet whose frames were reported lost without
	// it being declared lost (Requeue, expired ACK-only packets).
	sentAbandoned
)

// sentEntry is a slot of the sent-packet ring.
type sentEntry struct {
	SentPacket
	state sentState
}

// sentRing is a double-ended queue of sent-packet records indexed by
// packet number: slot i holds packet number headPN+i, with sentUnsent
// slots for numbers that were skipped. Records are removed from the
// front only, once they are neither acknowledged nor lost, so its length
// is bounded by the span of packets in flight. Its capacity is a power of
// two and only grows.
type sentRing struct {
	buf    []sentEntry
	head   int // index of the slot of headPN
	n      int // number of slots in use
	headPN wire.PacketNumber
}

// at returns the slot of pn, which must lie in [headPN, headPN+n).
func (r *sentRing) at(pn wire.PacketNumber) *sentEntry {
	return &r.buf[(r.head+int(pn-r.headPN))&(len(r.buf)-1)]
}

// front returns the first slot; the ring must not be empty.
func (r *sentRing) front() *sentEntry { return &r.buf[r.head] }

// push appends a slot for packet number headPN+n and returns it.
func (r *sentRing) push() *sentEntry {
	if r.n == len(r.buf) {
		r.grow()
	}
	e := &r.buf[(r.head+r.n)&(len(r.buf)-1)]
	r.n++
	return e
}

// popFront removes the first slot.
func (r *sentRing) popFront() {
	r.buf[r.head] = sentEntry{}
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.headPN++
}

func (r *sentRing) grow() {
	if len(r.buf) == 0 {
		// Small first: idle connections keep it, and the Initial and
		// Handshake spaces rarely need more.
		r.buf, r.head = sentRingPool.Get().(*[minSentRing]sentEntry)[:], 0
		return
	}
	buf := make([]sentEntry, 2*len(r.buf))
	for i := 0; i < r.n; i++ {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.release()
	r.buf = buf
	r.head = 0
}

// release lets go of the ring's storage, giving it back to the pool if it
// came from there. Its records are gone.
func (r *sentRing) release() {
	if len(r.buf) == minSentRing {
		clear(r.buf)
		sentRingPool.Put((*[minSentRing]sentEntry)(r.buf))
	}
	r.buf, r.head = nil, 0
}

// frameRing stores frame records between absolute positions head
// (inclusive) and tail (exclusive). Its capacity is a power of two and
// only grows.
type frameRing struct {
	buf        []FrameRecord
	head, tail uint64
}

// at returns the record at absolute position pos.
func (r *frameRing) at(pos uint64) *FrameRecord {
	return &r.buf[pos&uint64(len(r.buf)-1)]
}

// push appends f.
func (r *frameRing) push(f FrameRecord) {
	if r.tail-r.head == uint64(len(r.buf)) {
		r.grow()
	}
	*r.at(r.tail) = f
	r.tail++
}

func (r *frameRing) grow() {
	if len(r.buf) == 0 {
		r.buf = frameRingPool.Get().(*[minFrameRing]FrameRecord)[:]
		return
	}
	size := 2 * len(r.buf)
	buf := make([]FrameRecord, size)
	mask := uint64(size - 1)
	for pos := r.head; pos != r.tail; pos++ {
		buf[pos&mask] = *r.at(pos)
	}
	r.release()
	r.buf = buf
}

// release lets go of the ring's storage, giving it back to the pool if it
// came from there. Positions are kept; the records are gone.
func (r *frameRing) release() {
	if len(r.buf) == minFrameRing {
		clear(r.buf)
		frameRingPool.Put((*[minFrameRing]FrameRecord)(r.buf))
	}
	r.buf = nil
}

// The first, smallest rings of a packet number space are pooled: every
// connection uses three spaces, two of them only for its handshake
// (DropSpace gives their rings back), and a closing connection lets go
// of its third.
const (
	minSentRing  = 8
	minFrameRing = 16
)

var (
	sentRingPool  = sync.Pool{New: func() any { return new([minSentRing]sentEntry) }}
	frameRingPool = sync.Pool{New: func() any { return new([minFrameRing]FrameRecord) }}
)
