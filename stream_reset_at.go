package quic

import (
	"math"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// Resets that still deliver the first bytes of a stream: RESET_STREAM_AT
// (draft-ietf-quic-reliable-stream-reset), negotiated with the
// reset_stream_at transport parameter (Config.EnableResetStreamAt).
// "In terms of transport machinery, the RESET_STREAM_AT frame is more akin
// to the FIN bit than to the RESET_STREAM frame" (Section 6): the sender
// keeps retransmitting the data below the Reliable Size, and the receiver
// delivers it before it reports the reset.

// errResetCodeChanged: "When sending another RESET_STREAM_AT,
// RESET_STREAM or STREAM frame carrying a FIN bit for the same stream, the
// initiator MUST NOT change the Application Error Code or the Final Size.
// If the receiver detects a change in those fields, it MUST close the
// connection with a connection error of type STREAM_STATE_ERROR or
// FINAL_SIZE_ERROR, respectively." (Section 5.2)
var errResetCodeChanged = &wire.TransportError{Code: wire.StreamStateError, FrameType: wire.FrameTypeResetStreamAt, Reason: "reset error code changed"}

// resetStreamAtNegotiated reports whether both sides advertised
// reset_stream_at, so that this endpoint may send RESET_STREAM_AT.
func (c *connState) resetStreamAtNegotiated() bool {
	return c.config.EnableResetStreamAt && c.peerParams != nil && c.peerParams.ResetStreamAt
}

func (m *streamsMap) handleResetStreamAt(now time.Time, f wire.ResetStreamAtFrame) error {
	s, err := m.getOrOpenPeerStream(f.StreamID, wire.FrameTypeResetStreamAt, false)
	if err != nil {
		return err
	}
	if s == nil {
		return m.checkRetired(f.StreamID, f.FinalSize, true, wire.FrameTypeResetStreamAt)
	}
	if err := s.handleResetStreamAt(now, f.ErrorCode, f.FinalSize, f.ReliableSize); err != nil {
		return err
	}
	m.maybeRetire(s)
	return nil
}

// handleResetStreamAt: "On the receiving side, when a RESET_STREAM_AT
// frame is received, the receiving part of the stream enters the "Size
// Known" state. Once all data up to the smallest Reliable Size have been
// received, it enters the "Data Recvd" state." (Section 5.3) The data
// below the Reliable Size is read as usual, then the reset is reported
// (readBeforeResetAt).
func (s *stream) handleResetStreamAt(now time.Time, code, finalSize, reliable uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.recvFC.OnReset(finalSize); err != nil {
		if te, ok := err.(*wire.TransportError); ok {
			te.FrameType = wire.FrameTypeResetStreamAt
		}
		return err
	}
	if s.eofRead || s.resetRecvd {
		return nil
	}
	if s.resetAtRecvd {
		if code != s.resetRecvCode {
			return errResetCodeChanged
		}
		// "The receiver MUST ignore any RESET_STREAM_AT frame that
		// increases the Reliable Size." (Section 5.2)
		if reliable >= s.resetAtRecvSize {
			return nil
		}
	}
	if reliable <= s.recv.readOffset() {
		// Everything to deliver was read: as RESET_STREAM.
		s.resetRecvd, s.resetRecvCode = true, code
		s.recvFC.Abandon(now)
		s.recv.reset()
		notify(s.readCh)
		return nil
	}
	s.resetAtRecvd, s.resetAtRecvSize, s.resetRecvCode = true, reliable, code
	notify(s.readCh)
	return nil
}

// readBeforeResetAt reads the data below the Reliable Size of a
// RESET_STREAM_AT, then reports the reset ("Reset Read"), and the rest is
// abandoned. s.mu held.
func (s *stream) readBeforeResetAt(p []byte) (int, error) {
	left := s.resetAtRecvSize - s.recv.readOffset()
	if left == 0 {
		s.resetRecvd = true
		s.abandonDue = true // the connection goroutine returns the credit
		s.recv.reset()
		return 0, &StreamError{StreamID: s.id, Code: StreamErrorCode(s.resetRecvCode), Remote: true}
	}
	if uint64(len(p)) > left {
		p = p[:left]
	}
	n := s.recv.read(p)
	s.readConsumed += uint64(n)
	if n == 0 && s.connErr != nil {
		return 0, s.connErr
	}
	return n, nil
}

// cancelWriteAt resets the sending part with code while the first
// reliable bytes written are still delivered: "When using a
// RESET_STREAM_AT frame, the initiator MUST guarantee reliable delivery of
// stream data of at least Reliable Size bytes ... Data sent beyond that
// byte offset SHOULD NOT be retransmitted." (Section 5) A peer that did
// not advertise reset_stream_at gets a RESET_STREAM instead
// (appendResetStreamAt).
func (s *stream) cancelWriteAt(code StreamErrorCode, reliable uint64) {
	if reliable == 0 {
		s.cancelWrite(code)
		return
	}
	s.mu.Lock()
	if s.resetPending || s.resetSent || s.finAcked {
		s.mu.Unlock()
		return
	}
	s.resetPending, s.resetCode = true, uint64(code)
	s.resetAt, s.resetAtSize = true, min(reliable, s.send.writeOffset())
	s.writeErr = &StreamError{StreamID: s.id, Code: code}
	s.send.truncate(s.resetAtSize)
	s.mu.Unlock()
	notify(s.writeCh)
	s.m.markAttention(s)
}

// resetAtWaits reports whether a RESET_STREAM_AT waits for the data below
// its Reliable Size to be sent once: then the Final Size is the amount
// sent, which flow control allowed. s.mu held, by the connection
// goroutine.
func (s *stream) resetAtWaits() bool {
	return s.resetAt && s.resetPending && s.sentEnd < s.resetAtSize && s.m.c.resetStreamAtNegotiated()
}

// appendResetStreamAt appends the RESET_STREAM_AT frame once the data
// below the Reliable Size was sent. If the peer did not advertise
// reset_stream_at, the reset becomes a plain RESET_STREAM, which the
// caller sends. s.mu held.
func (s *stream) appendResetStreamAt(b []byte, end int) []byte {
	if !s.m.c.resetStreamAtNegotiated() {
		s.resetAt = false
		s.send.reset()
		return b
	}
	if s.resetAtWaits() {
		return b
	}
	f := wire.ResetStreamAtFrame{StreamID: s.id, ErrorCode: s.resetCode, FinalSize: max(s.sentEnd, s.resetAtSize), ReliableSize: s.resetAtSize}
	if f.EncodedLen() <= end-len(b) {
		b = f.Append(b)
		s.resetPending, s.resetSent = false, true
		s.m.c.sent.AddFrame(ackhandler.SpaceApplication, ackhandler.FrameRecord{Type: wire.FrameTypeResetStreamAt, StreamID: int64(s.id)})
	}
	return b
}

// truncate keeps the first n bytes written (never fewer than were
// acknowledged) for a RESET_STREAM_AT: they are still sent and
// retransmitted; what lies beyond is dropped, and no FIN is sent.
func (b *sendBuffer) truncate(n uint64) {
	if b.isReset {
		return
	}
	n = max(min(n, b.written), b.acked)
	b.written = n
	b.sent = min(b.sent, n)
	b.closed, b.finSent, b.finLost = false, false, false
	b.lost.remove(n, math.MaxUint64)
	b.ackedRanges.remove(n, math.MaxUint64)
}

// reliableAcked reports whether all data kept by truncate was
// acknowledged.
func (b *sendBuffer) reliableAcked() bool { return b.isReset || b.acked >= b.written }
