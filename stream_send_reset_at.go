package quic

// truncateAt is the send buffer's part of RESET_STREAM_AT
// (draft-ietf-quic-reliable-stream-reset): the bytes below reliable are
// still delivered, sent and retransmitted as before; the written bytes
// not sent yet beyond it are discarded, lost ones beyond it are not sent
// again, and no FIN follows. write accepts nothing more. reliable is
// capped at the data written; a later call may only lower it ("the
// initiator MUST NOT increase the Reliable Size", Section 5.2). It
// returns the reliable size in force.
func (b *sendBuffer) truncateAt(reliable uint64) uint64 {
	reliable = min(reliable, b.written)
	if b.resetAt {
		reliable = min(reliable, b.reliable)
	}
	b.resetAt, b.reliable = true, reliable
	if end := max(b.sent, reliable); end < b.written {
		// Give back the chunks that only held discarded bytes.
		first := (end + bufChunkSize - 1) / bufChunkSize
		if end == b.acked {
			first = end / bufChunkSize
		}
		for j := first; j <= (b.written-1)/bufChunkSize; j++ {
			b.chunks.release(j)
		}
		b.written = end
	}
	b.lost.remove(reliable, ^uint64(0))
	return reliable
}

// reliableDone reports whether, after truncateAt, every byte below the
// reliable size was acknowledged.
func (b *sendBuffer) reliableDone() bool {
	return b.resetAt && !b.isReset && b.acked >= b.reliable
}
