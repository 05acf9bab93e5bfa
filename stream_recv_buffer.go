package quic

import "errors"

// Defaults and limits of recvBuffer.
const (
	// recvBufDefaultMaxCapacity is the default bound on how far beyond
	// the read offset a recvBuffer stores data, used when the
	// constructor is passed 0. Streams pass their maximum receive window
	// instead.
	recvBufDefaultMaxCapacity = 16 << 20
	// recvBufGroupedAbove is how many bytes a recvBuffer holds before it
	// takes new chunks in groups (stream_buffer_chunks.go): a reader
	// that far behind is a bulk transfer's.
	recvBufGroupedAbove = 64 << 10
)

var (
	// errRecvFragmented is returned by recvBuffer.push when storing the
	// data would split the received bytes of one chunk (3,968 bytes of
	// the stream) into more than 31 intervals. Nothing was stored; the
	// connection closes (stream.handleStreamFrame: PROTOCOL_VIOLATION;
	// CRYPTO: CRYPTO_BUFFER_EXCEEDED), since dropping the frame would
	// drop data its packet acknowledges.
	//
	// "QUIC deployments SHOULD provide mitigations for stream
	// fragmentation attacks. Mitigations could consist of avoiding
	// overcommitting memory, limiting the size of tracking data
	// structures, ..." RFC 9000, Section 21.7
	//
	// The bound scales with the window (31 intervals per 3,968 bytes,
	// about 130,000 for 16 MiB) and only hostile patterns reach it:
	// frames of 128 bytes or more, each received or lost whole in any
	// pattern, leave at most 17 intervals in a chunk (each interval but
	// the two at the chunk's edges holds a whole frame and is followed by
	// a whole lost one), and a sender of packets of 1,200 bytes or more
	// puts far more than 128 bytes in a frame.
	errRecvFragmented = errors.New("quic: received data fragmented into more than 31 intervals within 3968 bytes")

	// errRecvBufferOverflow is returned by recvBuffer.push for data that
	// ends more than the buffer's capacity beyond the read offset. It is
	// never returned if the caller enforces flow control with a window no
	// larger than the capacity. Nothing was stored. For a CRYPTO stream,
	// which has no flow control, it means CRYPTO_BUFFER_EXCEEDED (RFC
	// 9000, Section 7.5).
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
// Data it accepted is kept until it is read: push either stores all of
// its data or fails and stores nothing, and a failure closes the
// connection (the packet that carried the data is acknowledged).
//
// Bytes are copied once into the buffer by push and once out of it by read;
// peek and consume let a parser work on the buffered bytes in place.
//
// Storage is in chunks (stream_buffer_chunks.go): a chunk is taken when
// its first byte arrives and given back when its last byte is read, so the
// memory follows the data held, not the offsets it lies at. Each chunk
// tracks its received intervals itself, at most 31 (errRecvFragmented), so
// the bookkeeping is bounded by the window and every operation takes time
// in proportion to the bytes it moves plus a constant. Once the chunk
// table has grown to the window in use, push, read, peek and consume do
// not allocate (chunks come from a pool).
//
// A recvBuffer is not safe for concurrent use; the Stream that owns it
// serializes access.
type recvBuffer struct {
	chunks chunkTable
	off    uint64 // read offset: all bytes below have been consumed
	contig uint64 // end of the bytes received contiguously from off
	end    uint64 // end of the furthest byte stored; off <= contig <= end
	held   int    // bytes stored and not consumed
	high   uint64 // highest offset+len(data) of any accepted push
	maxCap int    // bound on how far beyond off data is stored
	// groupAbove is how many bytes the buffer holds before it takes
	// chunks in groups: recvBufGroupedAbove (tests change it).
	groupAbove int
}

// newRecvBuffer returns an empty receive buffer that stores data up to
// maxCapacity bytes beyond its read offset (0 means
// recvBufDefaultMaxCapacity: 16 MiB). It allocates nothing until data
// arrives.
func newRecvBuffer(maxCapacity int) recvBuffer {
	if maxCapacity <= 0 {
		maxCapacity = recvBufDefaultMaxCapacity
	}
	return recvBuffer{maxCap: maxCapacity, groupAbove: recvBufGroupedAbove}
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
// advertised); push fails only with errRecvFragmented or, if the data ends
// more than the capacity beyond the read offset, errRecvBufferOverflow; in
// both cases nothing changes.
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
	if len(data) == 0 || end <= b.contig {
		// Empty, or a duplicate of bytes waiting to be read.
		b.high = max(b.high, end)
		return 0, nil
	}
	first, last := offset/bufChunkSize, (end-1)/bufChunkSize
	if offset == b.contig && b.end == b.contig {
		// In order with nothing stored beyond: the data continues the
		// readable bytes, as in nearly every frame of a transfer.
		if n, ok := b.appendInOrder(data, first, last); ok {
			return n, nil
		}
	}
	// Check the bound on fragmentation before changing anything. Chunks
	// between the first and the last are filled whole, and in the first,
	// data that overlaps or continues the readable bytes merges with them.
	merges := offset < b.contig || (offset == b.contig && offset > b.off && offset%bufChunkSize != 0)
	if (!merges && !b.fits(first, offset, end)) || (last != first && !b.fits(last, offset, end)) {
		return 0, errRecvFragmented
	}
	hi := last
	if b.end > b.off {
		hi = max(hi, (b.end-1)/bufChunkSize)
	}
	b.chunks.fit(b.off/bufChunkSize, hi, maxChunkSlots(b.maxCap))
	grouped := b.held >= b.groupAbove
	for j := first; j <= last; j++ {
		base := j * bufChunkSize
		lo, up := max(offset, base), min(end, base+bufChunkSize)
		c := b.chunks.take(j, grouped)
		stored += c.add(uint16(lo-base), uint16(up-base), data[lo-offset:up-offset])
	}
	b.held += stored
	b.end = max(b.end, end)
	b.high = max(b.high, end)
	b.advance()
	return stored, nil
}

// appendInOrder is push for data that starts at contig when end ==
// contig, as nearly every frame of a transfer does: every byte stored is
// in [off, contig), so the chunk of the data's first byte holds at most
// one range, which ends where the data starts, and the chunks after it
// hold none. The data extends that range or starts a chunk's only one:
// it cannot fragment anything, and contig moves to its end without a
// search (advance). first and last are the numbers of the chunks of the
// data's first and last byte; the caller checked the capacity. ok is
// false, with nothing changed, if the first chunk is not as described,
// which the invariants rule out; the caller then takes the general path.
func (b *recvBuffer) appendInOrder(data []byte, first, last uint64) (stored int, ok bool) {
	offset := b.contig
	if c := b.chunks.get(first); c != nil && c.n > 0 &&
		(c.n != 1 || uint64(c.ranges[0].end) != offset-first*bufChunkSize) {
		return 0, false
	}
	b.chunks.fit(b.off/bufChunkSize, last, maxChunkSlots(b.maxCap))
	grouped := b.held >= b.groupAbove
	for j := first; j <= last; j++ {
		base := j * bufChunkSize
		lo := max(offset, base)
		b.chunks.take(j, grouped).extend(uint16(lo-base), data[lo-offset:])
	}
	end := offset + uint64(len(data))
	b.held += len(data)
	b.contig, b.end = end, end
	b.high = max(b.high, end)
	return len(data), true
}

// fits reports whether the part of [offset, end) in chunk j can be added
// without exceeding bufChunkMaxRanges.
func (b *recvBuffer) fits(j, offset, end uint64) bool {
	if b.end <= b.off || j > (b.end-1)/bufChunkSize {
		return true // beyond the chunks held (or none is): a new chunk
	}
	c := b.chunks.get(j)
	if c == nil {
		return true
	}
	base := j * bufChunkSize
	lo, up := max(offset, base), min(end, base+bufChunkSize)
	return c.rangesAfterAdd(uint16(lo-base), uint16(up-base)) <= bufChunkMaxRanges
}

// advance moves contig to the end of the bytes received contiguously.
func (b *recvBuffer) advance() {
	for b.contig < b.end {
		j := b.contig / bufChunkSize
		c := b.chunks.get(j)
		if c == nil {
			return
		}
		r, ok := c.find(uint16(b.contig - j*bufChunkSize))
		if !ok {
			return
		}
		b.contig = j*bufChunkSize + uint64(r.end)
		if r.end < bufChunkSize {
			return
		}
	}
}

// inOrder returns the part of data, received at stream offset offset, that
// continues the stream at the read offset, when nothing is buffered and
// data reaches the read offset: the caller can then use it in place
// instead of pushing it, and skip it. ok is false when data must be
// pushed.
func (b *recvBuffer) inOrder(offset uint64, data []byte) (next []byte, ok bool) {
	if b.held != 0 || offset > b.off {
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
	if b.held != 0 {
		panic("quic: recvBuffer.skip with buffered data")
	}
	b.off += uint64(n)
	b.contig, b.end = b.off, b.off
	b.high = max(b.high, b.off)
}

// readable returns the number of contiguous bytes available at the read
// offset.
func (b *recvBuffer) readable() int { return int(b.contig - b.off) }

// buffered returns the number of bytes stored and not read, contiguous or
// not.
func (b *recvBuffer) buffered() int { return b.held }

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
	for k := 0; k < n; {
		s := b.peek()
		m := copy(p[k:n], s)
		b.consume(m)
		k += m
	}
	return n
}

// peek returns readable bytes without consuming them: those up to the end
// of the chunk the read offset is in (all of them, if fewer), so that
// reading everything takes peek and consume in turn until readable is 0.
// The slice aliases the buffer and is valid until the next push, consume,
// read or reset.
func (b *recvBuffer) peek() []byte {
	n := b.readable()
	if n == 0 {
		return nil
	}
	j := b.off / bufChunkSize
	pos := int(b.off - j*bufChunkSize)
	return b.chunks.get(j).data[pos:min(bufChunkSize, pos+n)]
}

// consume discards the first n readable bytes, as read does without
// copying, and gives back the chunks that held only those. It panics if n
// is negative or larger than readable().
func (b *recvBuffer) consume(n int) {
	if n < 0 || n > b.readable() {
		panic("quic: recvBuffer.consume beyond readable data")
	}
	for n > 0 {
		j := b.off / bufChunkSize
		pos := int(b.off - j*bufChunkSize)
		m := min(n, bufChunkSize-pos)
		c := b.chunks.get(j)
		c.trimFront(uint16(pos + m))
		if c.n == 0 {
			b.chunks.release(j)
		}
		b.off += uint64(m)
		b.held -= m
		n -= m
	}
}

// shrink drops the chunk table when the buffer holds no data, so that an
// idle stream costs no buffer memory (the chunks went back to the pool as
// they were read); the next push makes a table again. It is meant for a
// stream or connection that went quiet, not for the data path, where
// keeping the table avoids allocations. It reports whether memory was
// released.
func (b *recvBuffer) shrink() bool {
	if b.held != 0 || b.chunks.slots == nil {
		return false
	}
	b.chunks.drop()
	return true
}

// memory returns the bytes of memory the buffer holds: its chunks and
// chunk table.
func (b *recvBuffer) memory() int { return b.chunks.memory() }

// reset discards all buffered data and releases the memory, as after
// RESET_STREAM, STOP_SENDING or the end of a CRYPTO stream. readOffset and
// highest keep their values. A later push allocates again.
func (b *recvBuffer) reset() {
	b.chunks.releaseAll()
	b.held = 0
	b.contig, b.end = b.off, b.off
}
