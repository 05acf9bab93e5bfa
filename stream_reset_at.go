package quic

import (
	"errors"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// Reliable stream resets: RESET_STREAM_AT frames
// (draft-ietf-quic-reliable-stream-reset). Both ends advertise the
// reset_stream_at transport parameter (Section 3): this endpoint always
// can receive the frame, and sends it when the peer can.
//
// "In terms of transport machinery, the RESET_STREAM_AT frame is more
// akin to the FIN bit than to the RESET_STREAM frame" (Section 6): the
// sender goes on delivering the bytes below the Reliable Size, and the
// receiver's application reads them, then gets the reset's error.

// resetAtState is a stream's RESET_STREAM_AT state, guarded by the
// stream's mu.
type resetAtState struct {
	// Sending: reliable is the smallest Reliable Size the application
	// asked for (CancelWriteAt); the frame is due once every byte below it
	// was sent (pending), and is sent again if lost until one carrying the
	// current reliable size is acknowledged (acked).
	active   bool
	pending  bool
	sent     bool
	acked    bool
	size     uint64 // the final size the frame carries, fixed when first sent
	reliable uint64

	// Receiving: the peer's smallest Reliable Size and its code. Reads
	// deliver data up to recvReliable, then the reset's error.
	recvd        bool
	recvReliable uint64
	recvCode     uint64
}

// errResetStreamAtUnsupported is CancelWriteAt's error when the peer did
// not advertise reset_stream_at.
var errResetStreamAtUnsupported = errors.New("quic: the peer does not support RESET_STREAM_AT (reset_stream_at transport parameter)")

// CancelWriteAt abandons the sending direction like CancelWrite, except
// that the first reliableSize bytes of the stream are still delivered
// reliably: the peer gets a RESET_STREAM_AT frame with code
// (draft-ietf-quic-reliable-stream-reset) and its application reads those
// bytes before the reset's error. reliableSize is capped at the bytes
// written; calling it again may only lower it; data written beyond it
// and not yet sent is discarded, and Writes fail as after CancelWrite.
// The frame goes once every byte below reliableSize was sent.
//
// It returns an error, and changes nothing, if the peer did not advertise
// support in its transport parameters (reset_stream_at), or if the
// stream was already reset (CancelWrite, the peer's STOP_SENDING) or
// finished. It does not block.
func (s *Stream) CancelWriteAt(code StreamErrorCode, reliableSize uint64) error {
	return s.s.cancelWriteAt(code, reliableSize)
}

// CancelWriteAt resets the stream keeping its first reliableSize bytes;
// see Stream.CancelWriteAt.
func (s *SendStream) CancelWriteAt(code StreamErrorCode, reliableSize uint64) error {
	return s.s.cancelWriteAt(code, reliableSize)
}

func (s *stream) cancelWriteAt(code StreamErrorCode, reliable uint64) error {
	if !s.m.peerSupportsResetAt.Load() {
		return errResetStreamAtUnsupported
	}
	s.mu.Lock()
	switch {
	case !s.hasSend:
		s.mu.Unlock()
		return errors.New("quic: CancelWriteAt on a receive stream")
	case s.resetPending || s.resetSent || s.finAcked:
		s.mu.Unlock()
		return errors.New("quic: CancelWriteAt on a stream already reset or finished")
	case s.resetAt.active && uint64(code) != s.resetCode:
		// "When sending another RESET_STREAM_AT ... the initiator MUST
		// NOT change the Application Error Code" (Section 5.2).
		s.mu.Unlock()
		return errors.New("quic: CancelWriteAt with a different error code")
	}
	r := s.send.truncateAt(reliable)
	if !s.resetAt.active || r < s.resetAt.reliable {
		s.resetAt.active, s.resetAt.reliable = true, r
		s.resetAt.pending, s.resetAt.acked = true, false
	}
	s.resetCode = uint64(code)
	if s.writeErr == nil {
		s.writeErr = &StreamError{StreamID: s.id, Code: code}
	}
	s.mu.Unlock()
	notify(s.writeCh)
	s.m.markAttention(s)
	return nil
}

// resetAtDue reports whether a RESET_STREAM_AT frame is to be sent now:
// asked for, not superseded by RESET_STREAM, and every byte below the
// Reliable Size sent, so that the final size is known and costs no more
// credit. s.mu held.
func (s *stream) resetAtDue() bool {
	return s.resetAt.pending && !s.resetPending && !s.resetSent && s.send.sentOffset() >= s.resetAt.reliable
}

// appendResetAt appends the RESET_STREAM_AT frame if due. s.mu held.
func (s *stream) appendResetAt(b []byte, end int) []byte {
	if !s.resetAtDue() {
		return b
	}
	if !s.m.peerSupportsResetAt.Load() {
		// The server's real transport parameters, after it rejected
		// 0-RTT, may lack reset_stream_at: then the stream is reset
		// whole, with RESET_STREAM, in the next packet.
		s.resetAt.pending, s.resetPending = false, true
		s.send.reset()
		return b
	}
	if !s.resetAt.sent {
		// The final size: everything sent; nothing more is (truncateAt).
		// After a FIN it is the FIN's ("the initiator MUST NOT change
		// ... the Final Size", Section 5.2).
		s.resetAt.size = s.sentEnd
	}
	f := wire.ResetStreamAtFrame{StreamID: s.id, ErrorCode: s.resetCode, FinalSize: s.resetAt.size, ReliableSize: s.resetAt.reliable}
	if f.EncodedLen() > end-len(b) {
		return b
	}
	b = f.Append(b)
	s.resetAt.pending, s.resetAt.sent = false, true
	s.m.c.sent.AddFrame(ackhandler.SpaceApplication, ackhandler.FrameRecord{
		Type: wire.FrameTypeResetStreamAt, StreamID: int64(s.id), Offset: s.resetAt.reliable,
	})
	return b
}

// rewindResetAt forgets that RESET_STREAM_AT was sent, when the 0-RTT
// packets that may have carried it were rejected (resetForRejected0RTT):
// it goes again, with the final size of what is sent again. s.mu held.
func (s *stream) rewindResetAt() {
	if s.resetAt.active && !s.resetAt.acked {
		s.resetAt.sent, s.resetAt.pending = false, true
	}
}

// onResetAtAcked records the acknowledgment of a RESET_STREAM_AT frame
// that carried reliable: only one with the current (smallest) Reliable
// Size counts (Section 5.2). s.mu held.
func (s *stream) onResetAtAcked(reliable uint64) {
	if reliable == s.resetAt.reliable {
		s.resetAt.acked = true
	}
}

// onResetAtLost sends the frame again unless one with the current
// Reliable Size was acknowledged; "When lost, they MUST be retransmitted,
// unless the stream state has transitioned to "Data Recvd" or "Reset
// Recvd"" (Section 4). s.mu held.
func (s *stream) onResetAtLost() {
	if s.resetAt.active && !s.resetAt.acked && !s.resetSent && !s.resetPending {
		s.resetAt.pending = true
	}
}

// resetAtDone reports whether the sending part reached "Data Recvd" by
// RESET_STREAM_AT: "Once the RESET_STREAM_AT frame carrying the smallest
// Reliable Size and all stream data up to that byte offset have been
// acknowledged" (Section 5.3). s.mu held.
func (s *stream) resetAtDone() bool {
	return s.resetAt.acked && s.send.reliableDone()
}

// handleResetStreamAt applies a RESET_STREAM_AT frame: the final size is
// checked as for RESET_STREAM, and the application reads the data up to
// the Reliable Size before it gets the error.
func (s *stream) handleResetStreamAt(now time.Time, f wire.ResetStreamAtFrame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.recvFC.OnReset(f.FinalSize); err != nil {
		if te, ok := err.(*wire.TransportError); ok {
			te.FrameType = wire.FrameTypeResetStreamAt
		}
		return err
	}
	if s.resetAt.recvd && f.ErrorCode != s.resetAt.recvCode || s.resetRecvd && f.ErrorCode != s.resetRecvCode {
		// "If the receiver detects a change in those fields, it MUST close
		// the connection with a connection error of type
		// STREAM_STATE_ERROR or FINAL_SIZE_ERROR, respectively."
		// (Section 5.2; the final size is OnReset's.)
		return &wire.TransportError{Code: wire.StreamStateError, FrameType: wire.FrameTypeResetStreamAt,
			Reason: "RESET_STREAM_AT changes the application error code"}
	}
	if s.eofRead || s.resetRecvd || s.readCanceled {
		return nil
	}
	if s.resetAt.recvd && f.ReliableSize >= s.resetAt.recvReliable {
		// "The receiver MUST ignore any RESET_STREAM_AT frame that
		// increases the Reliable Size."
		return nil
	}
	s.resetAt.recvd, s.resetAt.recvReliable, s.resetAt.recvCode = true, f.ReliableSize, f.ErrorCode
	s.resetRecvCode = f.ErrorCode
	if s.recv.readOffset() >= f.ReliableSize {
		s.finishResetAt(now)
	}
	notify(s.readCh)
	return nil
}

// finishResetAt ends the receiving part once the application read up to
// the Reliable Size: the rest is discarded as after RESET_STREAM. s.mu
// held; now is the zero time when an application goroutine calls it,
// which leaves the credit to the connection goroutine (abandonDue).
func (s *stream) finishResetAt(now time.Time) {
	s.resetRecvd = true
	s.recv.reset()
	if now.IsZero() {
		s.abandonDue = true
		return
	}
	s.recvFC.Abandon(now)
}

// resetAtReadLimit caps a read of len n so that it stops at the
// Reliable Size, and ends the stream when the reader got there. s.mu
// held, by the reading goroutine.
func (s *stream) resetAtReadLimit(n int) int {
	if !s.resetAt.recvd || s.resetRecvd {
		return n
	}
	off := s.recv.readOffset()
	if off >= s.resetAt.recvReliable {
		s.finishResetAt(time.Time{})
		return 0
	}
	return int(min(uint64(n), s.resetAt.recvReliable-off))
}

// noteResetAtSupport records whether the peer's transport parameters
// advertise reset_stream_at, which CancelWriteAt needs.
func (m *streamsMap) noteResetAtSupport(p *wire.TransportParameters) {
	m.peerSupportsResetAt.Store(p != nil && p.ResetStreamAt)
}

// handleResetStreamAt routes a RESET_STREAM_AT frame to its stream.
func (m *streamsMap) handleResetStreamAt(now time.Time, f wire.ResetStreamAtFrame) error {
	s, err := m.getOrOpenPeerStream(f.StreamID, wire.FrameTypeResetStreamAt, false)
	if s == nil || err != nil {
		return err
	}
	if err := s.handleResetStreamAt(now, f); err != nil {
		return err
	}
	m.maybeRetire(s)
	return nil
}
