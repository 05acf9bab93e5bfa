package quic

import "errors"

// Defaults and limits of recvBuffer.
const (
	// recvBufDefaultMaxGaps is the default bound on the number of
	// out-of-order intervals a recvBuffer holds.
	recvBufDefaultMaxGaps = 256
	// recvBufDefaultMaxCapacity is the default hard cap on the memory of a
	// recvBuffer, used when the constructor is passed 0. Streams pass their
	// maximum receive window instead.
	recvBufDefaultMaxCapacity = 16 << 20
	// recvBufMinCapacity is the size of the first allocation (unless the
	// hard cap is smaller).
	// Small: a request/response stream (HTTP/3) carries a few hundred
	// bytes, and 4 KiB here cost 16 KB of garbage per request.
	recvBufMinCapacity = 512
)

var (
	// errTooManyGaps is returned by recvBuffer.push when storing the data
	// would create more out-of-order intervals than the buffer's bound.
	// Nothing was stored; the connection drops the frame (still
	// acknowledging its packet) and the peer retransmits it later.
	//
	// "QUIC deployments SHOULD provide mitigations for stream fragmentation
	// attacks. Mitigations could consist of avoiding overcommitting memory,
	// limiting the size of tracking data structures, ..."
	// RFC 9000, Section 21.7
	errTooManyGaps = errors.New("quic: too many gaps in received stream data")

	// errRecvBufferOverflow is returned by recvBuffer.push for data that
	// ends more than the buffer's hard cap beyond the read offset. It is
	// never returned if the caller enforces flow control with a window no
	// larger than the cap. Nothing was stored. For a CRYPTO stream, which
	// has no flow control, it means CRYPTO_BUFFER_EXCEEDED (RFC 9000,
	// Section 7.5).
	errRecvBufferOverflow = errors.New("quic: received stream data exceeds the receive buffer")
)

// recvBuffer reassembles the data of one receive stream (STREAM frames) or
// of one CRYPTO stream into an ordered byte stream.
//
// "Endpoints MUST be able to deliver stream data to an application as an
// ordered byte stream. Delivering an ordered byte stream requires that an
// endpoint buffer any data that is received out of order, up to the
// advertised flow control limit." RFC 9000, Section 2.2
//
// Bytes are copied once into the buffer by push and once out of it by read;
// peek and consume let a parser work on the buffered bytes in place.
//
// Storage is a ring of bytes: the byte at stream offset x lives at
// buf[x % len(buf)]. Every stored byte lies in [readOffset, readOffset +
// len(buf)), so positions never collide. The ring grows by doubling when a
// push reaches beyond it, up to a hard cap; memory of consumed bytes is
// reused. Received intervals above the read offset are kept in a sorted set
// whose number of out-of-order intervals is bounded (errTooManyGaps), so a
// peer cannot make the tracking structure large. After growth stops, push,
// read, peek and consume do not allocate.
//
// A recvBuffer is not safe for concurrent use; the Stream that owns it
// serializes access.
type recvBuffer struct {
	buf     []byte      // ring; nil until the first push that stores bytes
	ranges  bufRangeSet // received, unread intervals; every start >= off
	off     uint64      // read offset: all bytes below have been consumed
	high    uint64      // highest offset+len(data) of any accepted push
	maxCap  int         // hard cap on len(buf)
	maxGaps int         // bound on intervals that start above off
}

// newRecvBuffer returns an empty receive buffer whose memory never exceeds
// maxCapacity bytes (0 means recvBufDefaultMaxCapacity: 16 MiB) and which
// holds at most maxGaps out-of-order intervals (0 means
// recvBufDefaultMaxGaps: 256). It allocates nothing until data arrives.
func newRecvBuffer(maxCapacity, maxGaps int) recvBuffer {
	if maxCapacity <= 0 {
		maxCapacity = recvBufDefaultMaxCapacity
	}
	if maxGaps <= 0 {
		maxGaps = recvBufDefaultMaxGaps
	}
	return recvBuffer{maxCap: maxCapacity, maxGaps: maxGaps}
}

// push stores data received at stream offset offset and returns the number
// of bytes that were new.
//
// "An endpoint could receive data for a stream at the same stream offset
// multiple times. Data that has already been received can be discarded."
// RFC 9000, Section 2.2
//
// Bytes already received or already read are skipped, not compared with the
// new ones. Data after a gap is kept. data is copied; the caller may reuse
// it. The caller enforces flow control (offset+len(data) within the limit it
// advertised); push fails only with errTooManyGaps or, if the data ends more
// than the hard cap beyond the read offset, errRecvBufferOverflow; in both
// cases nothing changes.
func (b *recvBuffer) push(offset uint64, data []byte) (stored int, err error) {
	end := offset + uint64(len(data))
	if end <= b.off {
		return 0, nil // Everything was read already (or empty).
	}
	if offset < b.off {
		data = data[b.off-offset:]
		offset = b.off
	}
	if end-b.off > uint64(b.maxCap) {
		return 0, errRecvBufferOverflow
	}
	if len(data) == 0 {
		b.high = max(b.high, end)
		return 0, nil
	}
	i, j := b.ranges.span(offset, end)
	if j-i == 1 && b.ranges[i].start <= offset && b.ranges[i].end >= end {
		return 0, nil // A duplicate of one received interval.
	}
	// Check the bound on gaps before changing anything.
	n := len(b.ranges) - (j - i) + 1 // intervals after the merge
	first := offset                  // start of the first interval after the merge
	if i > 0 {
		first = b.ranges[0].start
	} else if j > 0 {
		first = min(offset, b.ranges[0].start)
	}
	if first == b.off {
		n-- // The interval at the read offset is readable data, not a gap.
	}
	if n > b.maxGaps {
		return 0, errTooManyGaps
	}
	if need := end - b.off; need > uint64(len(b.buf)) {
		b.grow(need)
	}
	// Copy only the bytes in the holes between the received intervals that
	// [offset, end) overlaps.
	cur := offset
	for k := i; k < j; k++ {
		r := b.ranges[k]
		if r.start > cur {
			bufRingWrite(b.buf, cur, data[cur-offset:r.start-offset])
			stored += int(r.start - cur)
		}
		cur = max(cur, r.end)
	}
	if cur < end {
		bufRingWrite(b.buf, cur, data[cur-offset:])
		stored += int(end - cur)
	}
	b.ranges.add(offset, end)
	b.high = max(b.high, end)
	return stored, nil
}

// grow reallocates the ring so that need bytes past the read offset fit,
// moving the stored intervals to their new positions.
func (b *recvBuffer) grow(need uint64) {
	nb := make([]byte, bufRingGrowCap(len(b.buf), recvBufMinCapacity, b.maxCap, need))
	for _, r := range b.ranges {
		bufRingMove(nb, b.buf, r.start, r.end)
	}
	b.buf = nb
}

// inOrder returns the part of data, received at stream offset offset, that
// continues the stream at the read offset, when nothing is buffered and
// data reaches the read offset: the caller can then use it in place
// instead of pushing it, and skip it. ok is false when data must be
// pushed.
func (b *recvBuffer) inOrder(offset uint64, data []byte) (next []byte, ok bool) {
	if len(b.ranges) != 0 || offset > b.off {
		return nil, false
	}
	if end := offset + uint64(len(data)); end <= b.off {
		return nil, true // all read already
	}
	return data[b.off-offset:], true
}

// skip advances the read offset by n bytes that the caller took in place
// from what inOrder returned, rather than through the buffer.
func (b *recvBuffer) skip(n int) {
	if len(b.ranges) != 0 {
		panic("quic: recvBuffer.skip with buffered data")
	}
	b.off += uint64(n)
	b.high = max(b.high, b.off)
}

// readable returns the number of contiguous bytes available at the read
// offset.
func (b *recvBuffer) readable() int {
	if len(b.ranges) == 0 || b.ranges[0].start != b.off {
		return 0
	}
	return int(b.ranges[0].end - b.off)
}

// readOffset returns the stream offset of the next byte read returns: the
// number of bytes consumed so far.
func (b *recvBuffer) readOffset() uint64 { return b.off }

// highest returns the end of the furthest byte received: the largest
// offset+len(data) of any push that did not fail (empty pushes included),
// or 0. It is used for the final-size checks of RFC 9000, Section 4.5.
func (b *recvBuffer) highest() uint64 { return b.high }

// read copies contiguous data from the read offset into p, consumes it and
// returns the number of bytes copied (0 if none is readable).
func (b *recvBuffer) read(p []byte) int {
	n := min(len(p), b.readable())
	if n == 0 {
		return 0
	}
	s1, s2 := bufRingSlices(b.buf, b.off, b.off+uint64(n))
	copy(p[copy(p, s1):], s2)
	b.consume(n)
	return n
}

// peek returns the readable bytes without consuming them: s1 followed by s2
// (s2 is non-empty only where the data wraps around the ring). The slices
// alias the buffer and are valid until the next push, consume, read or
// reset.
func (b *recvBuffer) peek() (s1, s2 []byte) {
	n := b.readable()
	if n == 0 {
		return nil, nil
	}
	return bufRingSlices(b.buf, b.off, b.off+uint64(n))
}

// consume discards the first n readable bytes, as read does without
// copying. It panics if n is negative or larger than readable().
func (b *recvBuffer) consume(n int) {
	if n < 0 || n > b.readable() {
		panic("quic: recvBuffer.consume beyond readable data")
	}
	if n == 0 {
		return
	}
	b.off += uint64(n)
	if b.ranges[0].end == b.off {
		b.ranges.popFront()
	} else {
		b.ranges[0].start = b.off
	}
}

// shrink releases the ring if it holds no data, so that an idle stream costs
// no buffer memory; the next push allocates again. It is meant for a stream
// that went idle, not for the data path, where keeping the ring avoids
// allocations. It reports whether memory was released.
func (b *recvBuffer) shrink() bool {
	if len(b.ranges) != 0 || b.buf == nil {
		return false
	}
	b.buf = nil
	return true
}

// reset discards all buffered data and releases the memory, as after
// RESET_STREAM, STOP_SENDING or the end of a CRYPTO stream. readOffset and
// highest keep their values. A later push allocates again.
func (b *recvBuffer) reset() {
	b.buf = nil
	b.ranges = nil
}
