package quic

// FinalSize returns the number of bytes the peer sent on the stream in
// all, its final size (RFC 9000, Section 4.5), once it is known: after
// the stream's FIN or a RESET_STREAM or RESET_STREAM_AT frame arrived,
// whether or not the application read the data. Protocols that share a
// flow control budget over many streams use it to count the data of a
// stream that ends unread, as WebTransport's WT_MAX_DATA requires
// (draft-ietf-webtrans-http3, Section 5.6.3). ok is false until then.
func (s *Stream) FinalSize() (size uint64, ok bool) { return s.s.finalSize() }

// FinalSize is as for Stream.FinalSize.
func (s *ReceiveStream) FinalSize() (size uint64, ok bool) { return s.s.finalSize() }

func (s *stream) finalSize() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hasRecv {
		return 0, false
	}
	return s.recvFC.FinalSize()
}

// SentFinalSize returns the final size of the stream's sending direction
// once it was reset and the reset sent (CancelWrite, CancelWriteAt, or
// the answer to the peer's STOP_SENDING): the bytes sent before the
// reset, which can be fewer than were written, since a reset discards the
// rest (RFC 9000, Section 4.5), and at least the Reliable Size of
// CancelWriteAt. A protocol that shares a flow control budget over many
// streams uses it to take back the budget of the discarded data, as
// WebTransport's WT_MAX_DATA requires (draft-ietf-webtrans-http3,
// Section 5.6.3). ok is false for a stream not reset, or whose reset was
// not sent yet; it is true once the stream's Context is done after a
// reset.
func (s *Stream) SentFinalSize() (size uint64, ok bool) { return s.s.sentFinalSize() }

// SentFinalSize is as for Stream.SentFinalSize.
func (s *SendStream) SentFinalSize() (size uint64, ok bool) { return s.s.sentFinalSize() }

// sentFinalSize: once the RESET_STREAM or RESET_STREAM_AT frame was sent,
// sentEnd no longer grows (a RESET_STREAM_AT waits until the data below
// its Reliable Size was sent, resetAtWaits) and is the Final Size the
// frame carried.
func (s *stream) sentFinalSize() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hasSend || !s.resetSent {
		return 0, false
	}
	return s.sentEnd, true
}
