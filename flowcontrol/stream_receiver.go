package flowcontrol

import (
	"time"

	"github.com/quicstack/quic/wire"
)

// StreamReceiver is the flow-control state of the receiving part of one
// stream: its MAX_STREAM_DATA window, its final size (RFC 9000, Section
// 4.5), and a pointer to the connection's MAX_DATA window, which it charges
// with every increase of the stream's highest received offset and credits
// with every byte the application consumes or discards.
//
// The zero value is not ready for use; call Init or NewStreamReceiver. A
// StreamReceiver is not safe for concurrent use, and neither is the shared
// connection window: both belong to the connection goroutine.
type StreamReceiver struct {
	win        ReceiveWindow
	conn       *ReceiveWindow
	finalSize  uint64
	finalKnown bool
	reset      bool
	abandoned  bool
}

// NewStreamReceiver returns the receiver of a new stream whose window is
// configured by cfg and whose data also counts against conn, the
// connection window. conn may be nil for a stream outside connection-level
// flow control (in tests, say).
func NewStreamReceiver(cfg ReceiveConfig, conn *ReceiveWindow) *StreamReceiver {
	s := new(StreamReceiver)
	s.Init(cfg, conn)
	return s
}

// Init resets s to the state NewStreamReceiver returns, without
// allocating, for receivers embedded in stream structures.
func (s *StreamReceiver) Init(cfg ReceiveConfig, conn *ReceiveWindow) {
	*s = StreamReceiver{conn: conn}
	s.win.Init(cfg)
}

// Limit returns the largest MAX_STREAM_DATA limit granted (initially the
// configured initial window).
func (s *StreamReceiver) Limit() uint64 { return s.win.limit }

// Highest returns the highest received offset: one past the last byte of
// the data with the largest offset, or the final size once known.
func (s *StreamReceiver) Highest() uint64 { return s.win.received }

// Consumed returns the bytes the application consumed, or Highest after
// Abandon.
func (s *StreamReceiver) Consumed() uint64 { return s.win.consumed }

// Window returns the stream's current window size.
func (s *StreamReceiver) Window() uint64 { return s.win.window }

// FinalSize returns the stream's final size and whether it is known: from
// a STREAM frame with the FIN bit or from RESET_STREAM (RESET_STREAM_AT).
func (s *StreamReceiver) FinalSize() (size uint64, known bool) {
	return s.finalSize, s.finalKnown
}

// IsReset reports whether OnReset has accepted a reset of the stream.
func (s *StreamReceiver) IsReset() bool { return s.reset }

// OnData checks a STREAM frame carrying length bytes at offset, with the
// FIN bit fin, against the stream and connection limits and the final
// size, then records it. It returns a FLOW_CONTROL_ERROR or
// FINAL_SIZE_ERROR (a *wire.TransportError for frame type STREAM) to close
// the connection with, and then changes nothing.
//
// Data arriving after a reset is checked the same way: up to the
// Reliable Size of a RESET_STREAM_AT it is still delivered, and
// "A receiver SHOULD treat receipt of data at or beyond the final size as
// an error of type FINAL_SIZE_ERROR, even after a stream is closed"
// (RFC 9000, Section 4.5). A frame without data and without FIN is checked
// but does not move the highest received offset, since it carries no
// byte.
func (s *StreamReceiver) OnData(offset, length uint64, fin bool) error {
	const ft = wire.FrameTypeStream
	if s.finalKnown {
		// "A receiver SHOULD treat receipt of data at or beyond the final
		// size as an error of type FINAL_SIZE_ERROR" (RFC 9000, Section 4.5).
		if offset > s.finalSize || length > s.finalSize-offset {
			return fcError(wire.FinalSizeError, ft, "stream data end", sat(offset, length), " beyond final size ", s.finalSize)
		}
		// "Once a final size for a stream is known, it cannot change."
		if fin && offset+length != s.finalSize {
			return fcError(wire.FinalSizeError, ft, "final size", offset+length, " differs from known final size ", s.finalSize)
		}
	}
	// "An endpoint MUST terminate a connection with an error of type
	// FLOW_CONTROL_ERROR if it receives more data than the largest maximum
	// stream data that it has sent for the affected stream" (RFC 9000,
	// Section 19.10). The limit is at most 2^62-1, which also enforces
	// "The largest offset delivered on a stream -- the sum of the offset
	// and data length -- cannot exceed 2^62-1" (Section 19.8).
	if offset > s.win.limit || length > s.win.limit-offset {
		return fcError(wire.FlowControlError, ft, "stream data end", sat(offset, length), " exceeds stream limit ", s.win.limit)
	}
	end := offset + length
	if fin && !s.finalKnown && end < s.win.received {
		// RFC 9000, Section 4.5: the final size "is one higher than the
		// offset of the byte with the largest offset sent on the stream";
		// a FIN below data already received changes it.
		return fcError(wire.FinalSizeError, ft, "final size", end, " below received data end ", s.win.received)
	}
	if length == 0 && !fin {
		return nil
	}
	if err := s.grow(end, ft); err != nil {
		return err
	}
	if fin {
		s.finalSize, s.finalKnown = end, true
	}
	return nil
}

// grow raises the highest received offset to end, charging the connection
// window with the increase, or returns a FLOW_CONTROL_ERROR if the
// connection limit does not allow it. end ≤ the stream limit.
func (s *StreamReceiver) grow(end uint64, frame wire.FrameType) error {
	if end <= s.win.received {
		return nil
	}
	delta := end - s.win.received
	if s.conn != nil {
		// "Connection flow control, which prevents senders from exceeding
		// a receiver's buffer capacity for the connection by limiting the
		// total bytes of stream data sent in STREAM frames on all
		// streams." (RFC 9000, Section 4.1)
		if err := s.conn.checkReceive(delta, frame, "connection data total"); err != nil {
			return err
		}
		s.conn.received += delta
		if s.abandoned {
			s.conn.consumeNow(delta)
		}
	}
	s.win.received = end
	if s.abandoned {
		s.win.consumed = end
	}
	return nil
}

// OnReset checks the final size of a RESET_STREAM or RESET_STREAM_AT frame
// and records it; the connection window is charged up to the final size:
// "The receiver MUST use the final size of the stream to account for all
// bytes sent on the stream in its connection-level flow controller"
// (RFC 9000, Section 4.5). Repeated resets with the same final size are
// accepted. Errors (frame type RESET_STREAM; the caller may change
// FrameType for RESET_STREAM_AT) change nothing.
//
// OnReset does not release the unread data: call Abandon when it is
// discarded, at once for RESET_STREAM, after the Reliable Size was
// delivered for RESET_STREAM_AT.
func (s *StreamReceiver) OnReset(finalSize uint64) error {
	const ft = wire.FrameTypeResetStream
	// "If a RESET_STREAM or STREAM frame is received indicating a change
	// in the final size for the stream, an endpoint SHOULD respond with an
	// error of type FINAL_SIZE_ERROR" (RFC 9000, Section 4.5).
	if s.finalKnown && finalSize != s.finalSize {
		return fcError(wire.FinalSizeError, ft, "final size", finalSize, " differs from known final size ", s.finalSize)
	}
	if finalSize < s.win.received {
		return fcError(wire.FinalSizeError, ft, "final size", finalSize, " below received data end ", s.win.received)
	}
	// "As with RESET_STREAM (Section 19.4 of [RFC9000]), Final Size is
	// subject to stream and connection-level flow control."
	// (draft-ietf-quic-reliable-stream-reset, Section 4)
	if finalSize > s.win.limit {
		return fcError(wire.FlowControlError, ft, "final size", finalSize, " exceeds stream limit ", s.win.limit)
	}
	if err := s.grow(finalSize, ft); err != nil {
		return err
	}
	s.finalSize, s.finalKnown, s.reset = finalSize, true, true
	return nil
}

// OnConsumed records that the application read n more bytes of the stream
// (never more than received) and credits the connection window too.
func (s *StreamReceiver) OnConsumed(now time.Time, n uint64) {
	if s.abandoned {
		return
	}
	n = min(n, s.win.received-s.win.consumed)
	if n == 0 {
		return
	}
	s.win.OnConsumed(now, n)
	if s.conn != nil {
		s.conn.OnConsumed(now, n)
	}
}

// Abandon records that the application will read no more of the stream:
// the stream was reset, or its reading side closed (STOP_SENDING). Unread
// data up to the highest received offset, and any that still arrives, up
// to the final size, counts as consumed at the connection level, so the
// connection's credit does not leak: "Endpoints need to eventually agree
// on the amount of flow control credit that has been consumed on every
// stream, to be able to account for all bytes for connection-level flow
// control" (RFC 9000, Section 4.4). The stream then needs no more
// MAX_STREAM_DATA.
func (s *StreamReceiver) Abandon(now time.Time) {
	if s.abandoned {
		return
	}
	n := s.win.received - s.win.consumed
	s.abandoned = true
	s.win.consumed = s.win.received
	if s.conn != nil {
		s.conn.OnConsumed(now, n)
	}
}

// IsAbandoned reports whether Abandon was called.
func (s *StreamReceiver) IsAbandoned() bool { return s.abandoned }

// ConsumedBeforeUpdate returns how many more bytes the application must
// consume for a MAX_STREAM_DATA frame to be due (see
// ReceiveWindow.ConsumedBeforeUpdate); the largest uint64 once none will
// be.
func (s *StreamReceiver) ConsumedBeforeUpdate() uint64 {
	if s.finalKnown || s.abandoned {
		return ^uint64(0)
	}
	return s.win.ConsumedBeforeUpdate()
}

// ShouldSendUpdate reports whether a MAX_STREAM_DATA frame should be sent
// (see ReceiveWindow.ShouldSendUpdate). It is false once the final size is
// known or the stream was abandoned: the peer can send no more than the
// final size, so more credit would be useless.
func (s *StreamReceiver) ShouldSendUpdate() bool {
	return !s.finalKnown && !s.abandoned && s.win.ShouldSendUpdate()
}

// NextLimit returns the MAX_STREAM_DATA value to send now, auto-tuning and
// raising the limit if an update is due (see ReceiveWindow.NextLimit).
// When the stream window grows, the connection window is raised to at
// least 1.5 times it.
func (s *StreamReceiver) NextLimit(now time.Time, rtt time.Duration) uint64 {
	if s.finalKnown || s.abandoned {
		return s.win.limit
	}
	before := s.win.window
	limit := s.win.NextLimit(now, rtt)
	if s.conn != nil && s.win.window > before {
		s.conn.EnsureMinWindow(s.win.window + s.win.window/2)
	}
	return limit
}

// OnUpdateSent records that a MAX_STREAM_DATA frame carrying limit was
// sent.
func (s *StreamReceiver) OnUpdateSent(limit uint64) { s.win.OnUpdateSent(limit) }

// OnUpdateLost records that the MAX_STREAM_DATA frame carrying limit was
// lost; ShouldSendUpdate asks for it again if it is still current and the
// stream still needs credit.
func (s *StreamReceiver) OnUpdateLost(limit uint64) { s.win.OnUpdateLost(limit) }

// OnBlockedReceived handles a STREAM_DATA_BLOCKED frame for the stream
// (see ReceiveWindow.OnBlockedReceived).
func (s *StreamReceiver) OnBlockedReceived(limit uint64) { s.win.OnBlockedReceived(limit) }
