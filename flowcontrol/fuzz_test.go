package flowcontrol

import (
	"errors"
	"math/bits"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// fcFuzzReader hands out the fuzz input a byte or a value at a time; past
// the end it returns zeros.
type fcFuzzReader struct{ b []byte }

func (r *fcFuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// value returns a small number most of the time and, when the first byte
// says so, one near 2^62 or 2^64 to probe overflow.
func (r *fcFuzzReader) value() uint64 {
	c := r.byte()
	v := uint64(r.byte())<<8 | uint64(r.byte())
	switch c & 0xc0 {
	case 0xc0:
		return wire.MaxVarint - v
	case 0x80:
		if c&1 != 0 {
			return ^uint64(0) - v
		}
		return 1<<62 + v
	}
	return v
}

// fcFuzzExpect computes the code OnData or OnReset must return, from the
// rules alone, in arithmetic that cannot overflow (an end that does not
// fit in 64 bits is infinite).
func fcFuzzExpect(s *StreamReceiver, conn *ReceiveWindow, off, n uint64, fin, reset bool) wire.TransportErrorCode {
	if reset {
		n = 0 // off is the final size
	}
	end, carry := bits.Add64(off, n, 0)
	inf := carry != 0
	fs, known := s.FinalSize()
	gt := func(limit uint64) bool { return inf || end > limit }
	if reset {
		switch {
		case known && end != fs, end < s.Highest():
			return wire.FinalSizeError
		case end > s.Limit():
			return wire.FlowControlError
		}
	} else {
		switch {
		case known && (gt(fs) || fin && end != fs):
			return wire.FinalSizeError
		case gt(s.Limit()):
			return wire.FlowControlError
		case fin && !known && end < s.Highest():
			return wire.FinalSizeError
		case n == 0 && !fin:
			return wire.NoError
		}
	}
	if end > s.Highest() && end-s.Highest() > conn.Limit()-conn.Received() {
		return wire.FlowControlError
	}
	return wire.NoError
}

// FuzzReceiveWindow feeds random sequences of STREAM and RESET_STREAM
// frames, reads, discards and updates on three streams sharing one
// connection window, and checks the invariants: a frame is accepted
// exactly when the rules of RFC 9000, Sections 4.1 and 4.5 allow it, a
// rejected frame changes nothing, limits only grow and stay at or below
// 2^62-1, no limit is ever exceeded, a known final size never changes,
// the connection counts exactly the streams' highest offsets and reads,
// and a peer that used all its connection credit while less than the
// window sits unread gets more, at once or for a waiting reader.
func FuzzReceiveWindow(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{8, 2, 0x00, 0, 0x00, 0x10, 0x00, 0x00, 0x08})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := &fcFuzzReader{b: in}
		sw := uint64(r.byte()) * 16
		cw := uint64(r.byte()) * 32
		conn := NewReceiveWindow(ReceiveConfig{InitialWindow: cw, MaxWindow: cw * uint64(1+r.byte()%16), Shared: true})
		var streams [3]StreamReceiver
		for i := range streams {
			streams[i].Init(ReceiveConfig{InitialWindow: sw, MaxWindow: sw * uint64(1+r.byte()%16)}, conn)
		}
		now := t0
		var prevLimits [3]uint64
		var prevFinal [3]uint64
		var finalKnown [3]bool
		prevConnLimit := conn.Limit()
		for len(r.b) > 0 {
			c := r.byte()
			s := &streams[int(c>>4)%3]
			switch c & 0x0f {
			case 0, 1, 2, 3, 4:
				off, n := r.value(), r.value()
				fin, reset := c&1 != 0, c&0x0f == 4
				want := fcFuzzExpect(s, conn, off, n, fin, reset)
				before, connBefore := *s, *conn
				var err error
				if reset {
					err = s.OnReset(off)
				} else {
					err = s.OnData(off, n, fin)
				}
				var te *wire.TransportError
				switch {
				case err == nil && want != wire.NoError:
					t.Fatalf("frame (%d, %d, fin %v, reset %v) accepted, want %v", off, n, fin, reset, want)
				case err != nil && (!errors.As(err, &te) || te.Code != want):
					t.Fatalf("frame (%d, %d, fin %v, reset %v): %v, want %v", off, n, fin, reset, err, want)
				case err != nil && (*s != before || *conn != connBefore):
					t.Fatalf("rejected frame changed state")
				}
			case 5:
				s.OnConsumed(now, r.value())
			case 6:
				now = now.Add(time.Duration(r.byte()) * time.Millisecond)
			case 7:
				if s.ShouldSendUpdate() {
					s.OnUpdateSent(s.NextLimit(now, time.Duration(r.byte())*time.Millisecond))
				}
			case 8:
				if conn.ShouldSendUpdate() {
					conn.OnUpdateSent(conn.NextLimit(now, time.Duration(r.byte())*time.Millisecond))
				}
			case 9:
				s.OnUpdateLost(s.Limit())
				conn.OnUpdateLost(conn.Limit())
			case 10:
				s.OnBlockedReceived(r.value())
				conn.OnBlockedReceived(r.value())
			case 11:
				s.Abandon(now)
			case 12:
				conn.EnsureMinWindow(r.value())
			case 13:
				conn.GrowForWaitingReader()
			default:
				// A limit computed and then never sent.
				s.NextLimit(now, time.Duration(r.byte())*time.Millisecond)
			}

			var sumHighest, sumConsumed uint64
			for i := range streams {
				s := &streams[i]
				if s.Limit() < prevLimits[i] || s.Limit() > wire.MaxVarint {
					t.Fatalf("stream %d limit %d after %d", i, s.Limit(), prevLimits[i])
				}
				prevLimits[i] = s.Limit()
				if s.Highest() > s.Limit() || s.Consumed() > s.Highest() {
					t.Fatalf("stream %d: consumed %d, highest %d, limit %d", i, s.Consumed(), s.Highest(), s.Limit())
				}
				if s.Window() > s.win.MaxWindow() {
					t.Fatalf("stream %d window %d above max %d", i, s.Window(), s.win.MaxWindow())
				}
				fs, known := s.FinalSize()
				if finalKnown[i] && (!known || fs != prevFinal[i]) {
					t.Fatalf("stream %d final size changed from %d to %d, %v", i, prevFinal[i], fs, known)
				}
				if known && s.Highest() != fs {
					t.Fatalf("stream %d highest %d, final size %d", i, s.Highest(), fs)
				}
				prevFinal[i], finalKnown[i] = fs, known
				sumHighest += s.Highest()
				sumConsumed += s.Consumed()
			}
			if conn.Limit() < prevConnLimit || conn.Limit() > wire.MaxVarint {
				t.Fatalf("connection limit %d after %d", conn.Limit(), prevConnLimit)
			}
			prevConnLimit = conn.Limit()
			if conn.Received() != sumHighest || conn.Consumed() != sumConsumed {
				t.Fatalf("connection received %d, consumed %d; streams %d, %d",
					conn.Received(), conn.Consumed(), sumHighest, sumConsumed)
			}
			if conn.Received() > conn.Limit() || conn.Window() > conn.MaxWindow() {
				t.Fatalf("connection received %d, limit %d, window %d, max %d",
					conn.Received(), conn.Limit(), conn.Window(), conn.MaxWindow())
			}
			// No stall below the window: a blocked peer gets credit
			// whenever less than the window is unread.
			if conn.Received() == conn.Limit() && conn.Limit() < wire.MaxVarint &&
				conn.Received()-conn.Consumed() < conn.Window() &&
				!conn.ShouldSendUpdate() && !conn.CanGrowForWaitingReader() {
				t.Fatalf("connection stalled: limit %d, %d unread, window %d",
					conn.Limit(), conn.Received()-conn.Consumed(), conn.Window())
			}
		}
	})
}
