package quic

import "math"

// Defaults of sendBuffer.
const (
	// sendBufDefaultLimit is the default bound on the bytes a sendBuffer
	// holds (written and not yet acknowledged), used when the constructor
	// is passed 0.
	sendBufDefaultLimit = 1 << 20
)

// sendBuffer holds the data an application wrote to one send stream until
// the peer has acknowledged it, and decides what the next STREAM frame
// carries.
//
// Storage is in chunks (stream_buffer_chunks.go) holding the offsets
// [acked, written), the unacknowledged data: a chunk is taken when a write
// reaches it and given back once all its bytes are acknowledged (the last
// one as soon as everything written is), so the memory follows the data
// held. Once the chunk table has grown to the limit in use, write,
// nextFrame, appendData, onAcked and onLost do not allocate (chunks come
// from a pool).
//
// Every written byte below the send offset is in one of three states:
// acknowledged (below acked, or in ackedRanges), lost and waiting for
// retransmission (in lost), or in flight. Why the two range sets stay small:
//   - The peer does not choose their shape: it can only acknowledge frames we
//     sent, and the loss detector declares losses. onAcked and onLost take
//     whole frames, and nextFrame takes retransmissions from the front of the
//     lowest lost interval, so every interval endpoint is a boundary of a
//     frame returned by nextFrame. The intervals are disjoint, non-adjacent
//     and lie within [acked, sent), so there are fewer of them than frames
//     covering the unacknowledged data: with frames of near-packet size, at
//     most limit/1200 or so (about 900 for 1 MiB).
//   - In practice there are far fewer, about as many as frames in flight:
//     intervals of lost come from frames declared lost while in flight, and
//     nextFrame sends all retransmissions before any new data, so lost does
//     not accumulate; two intervals of ackedRanges are separated by
//     unacknowledged bytes, which are lost or in flight. The frames in flight
//     are bounded by the loss detector's sent-packet records, which the
//     congestion window bounds.
//
// A sendBuffer is not safe for concurrent use; the Stream that owns it
// serializes access.
type sendBuffer struct {
	chunks      chunkTable  // chunks holding [acked, written)
	limit       int         // bound on written-acked
	acked       uint64      // all bytes below are acknowledged (freed)
	sent        uint64      // all bytes below were sent at least once
	written     uint64      // end of the written data; the final size once closed
	ackedRanges bufRangeSet // acknowledged intervals above acked, below sent
	lost        bufRangeSet // intervals to retransmit, disjoint from ackedRanges

	closed   bool // close was called: FIN follows the last written byte
	finSent  bool // a frame with FIN was returned
	finLost  bool // every frame with FIN that was sent was lost
	finAcked bool // a frame with FIN was acknowledged
	isReset  bool // reset was called
}

// newSendBuffer returns an empty send buffer that holds at most limit bytes
// of unacknowledged data (0 means sendBufDefaultLimit: 1 MiB). It allocates
// nothing until data is written.
func newSendBuffer(limit int) sendBuffer {
	if limit <= 0 {
		limit = sendBufDefaultLimit
	}
	return sendBuffer{limit: limit}
}

// write appends as much of p as fits under the byte limit and returns the
// number of bytes accepted; the Stream blocks the writer for the rest until
// acknowledgments free space. After close or reset it accepts nothing.
func (b *sendBuffer) write(p []byte) int {
	if b.closed || b.isReset {
		return 0
	}
	used := b.written - b.acked
	n := min(uint64(len(p)), uint64(b.limit)-used)
	if n == 0 {
		return 0
	}
	end := b.written + n
	b.chunks.fit(b.acked/bufChunkSize, (end-1)/bufChunkSize, maxChunkSlots(b.limit))
	for x := b.written; x < end; {
		j := x / bufChunkSize
		pos := x - j*bufChunkSize
		c := b.chunks.take(j, false)
		x += uint64(copy(c.data[pos:], p[x-b.written:n]))
	}
	b.written = end
	return int(n)
}

// close marks the end of the stream after the data written so far: the frame
// carrying the last byte (or an empty frame, if it was sent already) has the
// FIN bit. Calling close again has no effect.
//
// "The FIN bit (0x01) indicates that the frame marks the end of the stream.
// The final size of the stream is the sum of the offset and the length of
// this frame." RFC 9000, Section 19.8
func (b *sendBuffer) close() {
	b.closed = true
}

// needFin reports whether a frame with the FIN bit still has to be sent.
func (b *sendBuffer) needFin() bool {
	return b.closed && !b.finAcked && (!b.finSent || b.finLost)
}

// nextFrame returns what the next STREAM frame carries when at most maxData
// bytes of data fit: retransmissions first, lowest offset first, then new
// data; fin is set on the frame that ends at the final size, or on an empty
// frame when everything was sent before close. The frame's data are the n
// bytes at offset, which appendData copies into the packet (they stay
// valid until the next write, onAcked, onLost or reset). What is returned
// counts as in flight. ok is false if there is nothing to send. It
// applies no flow-control limit; see nextFrameLimit.
func (b *sendBuffer) nextFrame(maxData int) (offset uint64, n int, fin bool, ok bool) {
	return b.nextFrameLimit(maxData, math.MaxUint64)
}

// nextFrameLimit is nextFrame for a peer that allows stream data only below
// maxOffset (the smaller of the stream's and what the connection's flow
// control permits): new data stops there; retransmissions, which lie below
// sentOffset, are not limited.
//
// "An endpoint MUST NOT send data on any stream without ensuring that it
// is within the flow control limits set by its peer." RFC 9000, Section 2.2
func (b *sendBuffer) nextFrameLimit(maxData int, maxOffset uint64) (offset uint64, n int, fin bool, ok bool) {
	if b.isReset {
		return 0, 0, false, false
	}
	if maxData > 0 && len(b.lost) > 0 {
		r := &b.lost[0]
		m := min(uint64(maxData), r.end-r.start)
		offset = r.start
		r.start += m
		if r.start == r.end {
			b.lost.popFront()
		}
		return offset, int(m), b.finFrame(offset + m), true
	}
	if maxData > 0 && b.sent < b.written && b.sent < maxOffset {
		m := min(uint64(maxData), b.written-b.sent, maxOffset-b.sent)
		offset = b.sent
		b.sent += m
		return offset, int(m), b.finFrame(b.sent), true
	}
	if b.sent == b.written && b.needFin() {
		b.finSent, b.finLost = true, false
		return b.written, 0, true, true
	}
	return 0, 0, false, false
}

// appendData appends the n bytes at stream offset offset, which a frame
// from nextFrame carries, to dst.
func (b *sendBuffer) appendData(dst []byte, offset uint64, n int) []byte {
	for end := offset + uint64(n); offset < end; {
		j := offset / bufChunkSize
		pos := offset - j*bufChunkSize
		m := min(end-offset, bufChunkSize-pos)
		dst = append(dst, b.chunks.get(j).data[pos:pos+m]...)
		offset += m
	}
	return dst
}

// finFrame reports whether a frame ending at end carries FIN, and records
// that it was sent.
func (b *sendBuffer) finFrame(end uint64) bool {
	if !b.closed || end != b.written {
		return false
	}
	b.finSent, b.finLost = true, false
	return true
}

// onAcked records that the frame carrying [offset, offset+length) (and FIN,
// if fin) was acknowledged. Acknowledgments may arrive in any order and more
// than once. Acknowledged data is no longer retransmitted, and the space of
// the acknowledged data at the front of the buffer is reused.
func (b *sendBuffer) onAcked(offset uint64, length int, fin bool) {
	if b.isReset {
		return
	}
	end := offset + uint64(max(length, 0))
	if fin && b.closed && end == b.written {
		b.finAcked, b.finLost = true, false
	}
	start := max(offset, b.acked)
	end = min(end, b.sent)
	if start >= end {
		return
	}
	b.lost.remove(start, end)
	b.ackedRanges.add(start, end)
	if r := b.ackedRanges[0]; r.start == b.acked {
		b.releaseAcked(r.end)
		b.ackedRanges.popFront()
	}
}

// releaseAcked advances acked to a and gives back the chunks that hold no
// unacknowledged byte any more: those wholly below a, and the one a is in
// once everything written is acknowledged.
func (b *sendBuffer) releaseAcked(a uint64) {
	for j := b.acked / bufChunkSize; j < a/bufChunkSize; j++ {
		b.chunks.release(j)
	}
	b.acked = a
	if a == b.written {
		b.chunks.release(a / bufChunkSize)
	}
}

// onLost records that the frame carrying [offset, offset+length) (and FIN,
// if fin) was declared lost, so that its data is retransmitted, except the
// bytes that were acknowledged meanwhile (in another frame). Losses may be
// reported in any order and more than once.
//
// "Application data sent in STREAM frames is retransmitted in new STREAM
// frames unless the endpoint has sent a RESET_STREAM for that stream."
// RFC 9000, Section 13.3
func (b *sendBuffer) onLost(offset uint64, length int, fin bool) {
	if b.isReset {
		return
	}
	end := offset + uint64(max(length, 0))
	if fin && b.finSent && !b.finAcked {
		b.finLost = true
	}
	start := max(offset, b.acked)
	end = min(end, b.sent)
	if start >= end {
		return
	}
	// Add [start, end) minus the acknowledged intervals.
	cur := start
	for k := b.ackedRanges.search(start + 1); k < len(b.ackedRanges); k++ {
		r := b.ackedRanges[k]
		if r.start >= end {
			break
		}
		if r.start > cur {
			b.lost.add(cur, r.start)
		}
		cur = r.end
	}
	if cur < end {
		b.lost.add(cur, end)
	}
}

// allAcked reports whether close was called and all data and the FIN were
// acknowledged: the send side of the stream is complete ("Data Recvd" in
// RFC 9000, Section 3.1). It is false after reset.
func (b *sendBuffer) allAcked() bool {
	return b.closed && b.finAcked && b.acked == b.written && !b.isReset
}

// hasData reports whether nextFrame has something to return, ignoring flow
// control: lost data, unsent data or a FIN.
func (b *sendBuffer) hasData() bool {
	if b.isReset {
		return false
	}
	return len(b.lost) > 0 || b.sent < b.written || b.needFin()
}

// buffered returns the number of bytes written and not yet acknowledged
// (including acknowledged bytes behind an unacknowledged one, whose space is
// not free yet). write accepts at most limit-buffered() bytes.
func (b *sendBuffer) buffered() int { return int(b.written - b.acked) }

// sentOffset returns the end of the highest byte sent so far. New data a
// frame carries is what it adds to sentOffset; the caller charges that to the
// connection's flow control.
func (b *sendBuffer) sentOffset() uint64 { return b.sent }

// writeOffset returns the end of the written data; once closed it is the
// final size of the stream.
func (b *sendBuffer) writeOffset() uint64 { return b.written }

// shrink drops the chunk table if all written data was acknowledged (its
// chunks went back to the pool then), so that an idle stream costs no
// buffer memory; the next write makes a table again. It is meant for a
// stream or connection that went quiet, not for the data path, where
// keeping the table avoids allocations. It reports whether memory was
// released.
func (b *sendBuffer) shrink() bool {
	if b.acked != b.written || b.chunks.slots == nil {
		return false
	}
	b.chunks.drop()
	return true
}

// memory returns the bytes of memory the buffer holds: its chunks and
// chunk table.
func (b *sendBuffer) memory() int { return b.chunks.memory() }

// release gives all storage back, as when the stream is dropped; the
// buffer must not be used afterwards except through reset semantics.
func (b *sendBuffer) release() { b.chunks.releaseAll() }

// reset discards all data and releases the memory after the stream is reset
// (RESET_STREAM was sent): nothing more is sent, acknowledgments and losses
// are ignored, write accepts nothing and buffered is 0. writeOffset and
// sentOffset keep their values; the final size carried by RESET_STREAM is sentOffset, the
// amount of data sent.
//
// "Once an endpoint sends a RESET_STREAM frame, no further STREAM frames
// are needed." RFC 9000, Section 13.3
func (b *sendBuffer) reset() {
	b.isReset = true
	b.acked = b.written // buffered() is 0
	b.chunks.releaseAll()
	b.ackedRanges = nil
	b.lost = nil
}
