package flowcontrol

import (
	"fmt"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// op is one frame fed to a StreamReceiver in table tests.
type op struct {
	reset       bool // RESET_STREAM with final size off; else STREAM
	off, length uint64
	fin         bool
	want        wire.TransportErrorCode
}

func (o op) String() string {
	if o.reset {
		return fmt.Sprintf("RESET_STREAM(final %d)", o.off)
	}
	return fmt.Sprintf("STREAM(off %d, len %d, fin %v)", o.off, o.length, o.fin)
}

func (o op) apply(s *StreamReceiver) error {
	if o.reset {
		return s.OnReset(o.off)
	}
	return s.OnData(o.off, o.length, o.fin)
}

func data(off, length uint64, fin bool, want wire.TransportErrorCode) op {
	return op{off: off, length: length, fin: fin, want: want}
}

func reset(final uint64, want wire.TransportErrorCode) op {
	return op{reset: true, off: final, want: want}
}

const (
	ok       = wire.NoError
	finalErr = wire.FinalSizeError
	flowErr  = wire.FlowControlError
)

// runOps applies ops in order to a fresh stream with a 1000-byte window
// and a 10000-byte connection window, checking each result and that a
// failing frame leaves all state unchanged.
func runOps(t *testing.T, ops []op) (*StreamReceiver, *ReceiveWindow) {
	t.Helper()
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 10000})
	s := NewStreamReceiver(ReceiveConfig{InitialWindow: 1000}, conn)
	for i, o := range ops {
		before, connBefore := *s, *conn
		err := o.apply(s)
		if err != nil && (*s != before || *conn != connBefore) {
			t.Errorf("op %d %v failed (%v) but changed state", i, o, err)
		}
		if (err == nil) != (o.want == ok) {
			t.Fatalf("op %d %v: error = %v, want %v", i, o, err, o.want)
		}
		if err != nil {
			wantCode(t, err, o.want)
		}
		if conn.Received() != s.Highest() {
			t.Fatalf("op %d %v: connection counts %d, stream highest offset %d", i, o, conn.Received(), s.Highest())
		}
	}
	return s, conn
}

func TestStreamReceiverLimitBoundary(t *testing.T) {
	// RFC 9000, Section 19.10: "An endpoint MUST terminate a connection
	// with an error of type FLOW_CONTROL_ERROR if it receives more data
	// than the largest maximum stream data that it has sent for the
	// affected stream."
	runOps(t, []op{
		data(0, 999, false, ok),
		data(999, 1, false, ok), // up to the limit exactly
		data(1000, 1, false, flowErr),
		data(1000, 0, false, ok), // no data, at the limit
		data(1001, 0, false, flowErr),
		data(500, 501, false, flowErr),
		data(0, 1000, true, ok), // a FIN exactly at the limit
	})
	runOps(t, []op{data(1000, 1, true, flowErr), data(0, 1001, true, flowErr)})
	// Hostile offsets and lengths near and beyond 2^62 and 2^64 never
	// wrap around.
	runOps(t, []op{
		data(wire.MaxVarint, 1, false, flowErr),
		data(1<<63, 1<<63, false, flowErr),
		data(1, ^uint64(0), false, flowErr),
		data(^uint64(0), 1, true, flowErr),
		reset(^uint64(0), flowErr),
		data(0, 10, true, ok),
		data(^uint64(0), 1, false, finalErr),
		data(5, ^uint64(0)-4, false, finalErr),
	})
}

func TestStreamReceiverConnectionLimit(t *testing.T) {
	// RFC 9000, Section 4.1: "A receiver MUST close the connection with
	// an error of type FLOW_CONTROL_ERROR if the sender violates the
	// advertised connection or stream data limits".
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000})
	s1 := NewStreamReceiver(ReceiveConfig{InitialWindow: 1000}, conn)
	s2 := NewStreamReceiver(ReceiveConfig{InitialWindow: 1000}, conn)
	wantCode(t, s1.OnData(0, 600, false), ok)
	wantCode(t, s2.OnData(0, 400, false), ok) // the connection limit exactly
	err := s2.OnData(400, 1, false)
	wantCode(t, err, flowErr)
	if want := "FLOW_CONTROL_ERROR (frame STREAM): connection data total 1001 exceeds limit 1000"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	wantCode(t, s2.OnReset(401), flowErr)
	wantCode(t, s1.OnData(0, 600, true), ok) // within what was counted
	if conn.Received() != 1000 || s2.Highest() != 400 {
		t.Fatalf("connection received %d, stream 2 highest %d; want 1000, 400", conn.Received(), s2.Highest())
	}
}

func TestStreamReceiverReordering(t *testing.T) {
	// RFC 9000, Section 19.10: "Loss or reordering can mean that the
	// largest received offset on a stream can be greater than the total
	// size of data received on that stream. Receiving STREAM frames might
	// not increase the largest received offset."
	s, conn := runOps(t, []op{
		data(500, 100, false, ok),
		data(0, 500, false, ok),
		data(0, 600, false, ok), // retransmission
		data(100, 0, false, ok),
	})
	if s.Highest() != 600 || conn.Received() != 600 {
		t.Fatalf("highest %d, connection %d; want 600, 600", s.Highest(), conn.Received())
	}
}

func TestStreamReceiverFinalSize(t *testing.T) {
	// RFC 9000, Section 4.5.
	tests := []struct {
		name string
		ops  []op
	}{
		// "The final size is the sum of the Offset and Length fields of a
		// STREAM frame with a FIN flag, noting that these fields might be
		// implicit."
		{"FIN fixes the final size", []op{data(0, 100, true, ok), data(50, 50, true, ok), data(100, 0, true, ok), data(0, 10, false, ok)}},
		{"FIN before earlier data", []op{data(100, 100, true, ok), data(0, 100, false, ok), data(150, 50, false, ok)}},
		{"FIN equal to received data", []op{data(100, 100, false, ok), data(200, 0, true, ok)}},
		{"empty stream", []op{data(0, 0, true, ok), data(0, 0, false, ok), data(0, 1, false, finalErr)}},
		// "A receiver SHOULD treat receipt of data at or beyond the final
		// size as an error of type FINAL_SIZE_ERROR, even after a stream
		// is closed."
		{"data at the final size", []op{data(0, 100, true, ok), data(100, 1, false, finalErr)}},
		{"data across the final size", []op{data(0, 100, true, ok), data(90, 20, false, finalErr)}},
		{"empty frame beyond the final size", []op{data(0, 100, true, ok), data(101, 0, false, finalErr)}},
		{"data beyond the final size after reset", []op{reset(100, ok), data(50, 50, false, ok), data(60, 41, false, finalErr)}},
		// "Once a final size for a stream is known, it cannot change. If a
		// RESET_STREAM or STREAM frame is received indicating a change in
		// the final size for the stream, an endpoint SHOULD respond with
		// an error of type FINAL_SIZE_ERROR".
		{"FIN with a smaller final size", []op{data(0, 100, true, ok), data(0, 50, true, finalErr)}},
		{"FIN with a larger final size", []op{data(0, 100, true, ok), data(100, 10, true, finalErr)}},
		{"empty FIN with a smaller final size", []op{data(0, 100, true, ok), data(99, 0, true, finalErr)}},
		{"reset with a larger final size", []op{data(0, 100, true, ok), reset(120, finalErr)}},
		{"reset with a smaller final size", []op{data(0, 100, true, ok), reset(80, finalErr)}},
		{"reset with the same final size", []op{data(0, 100, true, ok), reset(100, ok)}},
		{"FIN after reset with another size", []op{reset(100, ok), data(0, 90, true, finalErr), data(100, 0, true, ok)}},
		{"second reset with another size", []op{reset(100, ok), reset(100, ok), reset(101, finalErr), reset(0, finalErr)}},
		// The final size "is one higher than the offset of the byte with
		// the largest offset sent on the stream": a final size below data
		// already received is a change of it.
		{"FIN below received data", []op{data(0, 200, false, ok), data(0, 100, true, finalErr)}},
		{"empty FIN below received data", []op{data(0, 200, false, ok), data(150, 0, true, finalErr)}},
		{"reset below received data", []op{data(0, 200, false, ok), reset(150, finalErr), reset(200, ok)}},
		// "As with RESET_STREAM (Section 19.4 of [RFC9000]), Final Size is
		// subject to stream and connection-level flow control."
		{"reset beyond the stream limit", []op{reset(1001, flowErr), reset(1000, ok)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := runOps(t, tt.ops)
			var last uint64
			var wantKnown bool
			for _, o := range tt.ops {
				if o.want == ok && (o.fin || o.reset) {
					last, wantKnown = o.off+o.length, true
				}
			}
			if size, known := s.FinalSize(); known != wantKnown || size != last {
				t.Errorf("FinalSize = %d, %v; want %d, %v", size, known, last, wantKnown)
			}
		})
	}
}

func TestStreamReceiverResetAccounting(t *testing.T) {
	// RFC 9000, Section 4.5: "The receiver MUST use the final size of the
	// stream to account for all bytes sent on the stream in its
	// connection-level flow controller."
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000})
	s := NewStreamReceiver(ReceiveConfig{InitialWindow: 1000}, conn)
	wantCode(t, s.OnData(0, 100, false), ok)
	s.OnConsumed(at(0), 50)
	wantCode(t, s.OnReset(700), ok)
	if !s.IsReset() || conn.Received() != 700 || s.Highest() != 700 {
		t.Fatalf("after reset: IsReset %v, connection received %d, highest %d; want true, 700, 700",
			s.IsReset(), conn.Received(), s.Highest())
	}
	// Without releasing the reset stream's credit, the connection would
	// stall: 300 bytes of credit left and nothing more to consume.
	if conn.ShouldSendUpdate() {
		t.Fatal("connection update due before the stream's data was discarded")
	}
	// RFC 9000, Section 4.4: "Endpoints need to eventually agree on the
	// amount of flow control credit that has been consumed on every
	// stream, to be able to account for all bytes for connection-level
	// flow control."
	s.Abandon(at(time.Millisecond))
	if conn.Consumed() != 700 {
		t.Fatalf("connection consumed %d after Abandon, want 700", conn.Consumed())
	}
	if !conn.ShouldSendUpdate() || conn.NextLimit(at(time.Millisecond), 0) != 1700 {
		t.Fatalf("connection limit after releasing the reset stream = %d, want 1700", conn.Limit())
	}
	if s.ShouldSendUpdate() {
		t.Fatal("MAX_STREAM_DATA due for a reset stream")
	}
	s.OnConsumed(at(time.Millisecond), 10)
	s.Abandon(at(time.Millisecond))
	if conn.Consumed() != 700 {
		t.Fatalf("connection consumed %d after reads of an abandoned stream, want 700", conn.Consumed())
	}
}

func TestStreamReceiverAbandonBeforeData(t *testing.T) {
	// After STOP_SENDING the reading side is gone, but data still arrives
	// and counts: it is consumed at once at the connection level.
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000})
	s := NewStreamReceiver(ReceiveConfig{InitialWindow: 1000}, conn)
	wantCode(t, s.OnData(0, 100, false), ok)
	s.Abandon(at(0))
	wantCode(t, s.OnData(100, 200, false), ok)
	if conn.Received() != 300 || conn.Consumed() != 300 {
		t.Fatalf("connection received, consumed = %d, %d; want 300, 300", conn.Received(), conn.Consumed())
	}
	wantCode(t, s.OnReset(500), ok)
	if conn.Received() != 500 || conn.Consumed() != 500 || s.Consumed() != 500 {
		t.Fatalf("connection received, consumed, stream consumed = %d, %d, %d; want 500 each",
			conn.Received(), conn.Consumed(), s.Consumed())
	}
	if !s.IsAbandoned() {
		t.Fatal("IsAbandoned = false")
	}
}

func TestStreamReceiverNoUpdateOnceSizeKnown(t *testing.T) {
	// RFC 9000, Section 3.2: in the "Size Known" state "the receiver does
	// not need to send MAX_STREAM_DATA frames"; the connection still
	// credits the bytes read.
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000})
	s := NewStreamReceiver(ReceiveConfig{InitialWindow: 1000}, conn)
	wantCode(t, s.OnData(0, 1000, true), ok)
	s.OnConsumed(at(0), 1000)
	if s.ShouldSendUpdate() {
		t.Fatal("MAX_STREAM_DATA due with the final size known")
	}
	if got := s.NextLimit(at(0), time.Millisecond); got != 1000 {
		t.Fatalf("NextLimit = %d, want unchanged 1000", got)
	}
	if !conn.ShouldSendUpdate() {
		t.Fatal("no MAX_DATA due after the whole connection window was read")
	}
}

func TestStreamReceiverUpdates(t *testing.T) {
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 10000})
	s := NewStreamReceiver(ReceiveConfig{InitialWindow: 1000}, conn)
	wantCode(t, s.OnData(0, 1000, false), ok)
	s.OnConsumed(at(0), 501)
	if !s.ShouldSendUpdate() {
		t.Fatal("no MAX_STREAM_DATA due past half the window")
	}
	l := s.NextLimit(at(0), 0)
	s.OnUpdateSent(l)
	if l != 1501 || s.Limit() != 1501 || s.ShouldSendUpdate() {
		t.Fatalf("limit %d, Limit %d, ShouldSendUpdate %v; want 1501, 1501, false", l, s.Limit(), s.ShouldSendUpdate())
	}
	s.OnUpdateLost(l)
	if !s.ShouldSendUpdate() {
		t.Fatal("lost MAX_STREAM_DATA not sent again")
	}
	s.OnUpdateSent(l)
	s.OnBlockedReceived(1000)
	if !s.ShouldSendUpdate() {
		t.Fatal("STREAM_DATA_BLOCKED at an old limit does not resend the current one")
	}
	if s.Consumed() != 501 || conn.Consumed() != 501 {
		t.Fatalf("consumed stream %d, connection %d; want 501, 501", s.Consumed(), conn.Consumed())
	}
	s.OnConsumed(at(0), 1000) // clamped to what was received
	if s.Consumed() != 1000 || conn.Consumed() != 1000 {
		t.Fatalf("consumed stream %d, connection %d; want 1000, 1000", s.Consumed(), conn.Consumed())
	}
}

func TestStreamReceiverConnectionWindowFollows(t *testing.T) {
	// A stream window that auto-tunes raises the connection window to at
	// least 1.5 times its size, capped at the connection's maximum.
	const rtt = 10 * time.Millisecond
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 1500, MaxWindow: 10000})
	s := NewStreamReceiver(ReceiveConfig{InitialWindow: 1000, MaxWindow: 16000}, conn)
	now := at(0)
	var streamWins, connWins []uint64
	for range 4 {
		n := s.Limit() - s.Highest()
		wantCode(t, s.OnData(s.Highest(), n, false), ok)
		s.OnConsumed(now, n)
		now = now.Add(time.Millisecond)
		s.OnUpdateSent(s.NextLimit(now, rtt))
		conn.OnUpdateSent(conn.NextLimit(now, 0)) // no tuning of its own
		streamWins = append(streamWins, s.Window())
		connWins = append(connWins, conn.Window())
	}
	wantStream := []uint64{2000, 4000, 8000, 16000}
	wantConn := []uint64{3000, 6000, 10000, 10000} // capped at its maximum
	if fmt.Sprint(streamWins) != fmt.Sprint(wantStream) || fmt.Sprint(connWins) != fmt.Sprint(wantConn) {
		t.Fatalf("stream windows %v, connection windows %v; want %v, %v", streamWins, connWins, wantStream, wantConn)
	}
}

func TestStreamReceiverWithoutConnection(t *testing.T) {
	s := NewStreamReceiver(ReceiveConfig{InitialWindow: 100, MaxWindow: 1000}, nil)
	wantCode(t, s.OnData(0, 100, false), ok)
	s.OnConsumed(at(0), 60)
	s.NextLimit(at(time.Millisecond), time.Second)
	s.Abandon(at(0))
	wantCode(t, s.OnReset(120), ok)
	if s.Window() != 200 || s.Consumed() != 120 {
		t.Fatalf("window %d, consumed %d; want 200, 120", s.Window(), s.Consumed())
	}
}
