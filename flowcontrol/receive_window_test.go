package flowcontrol

import (
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

func TestReceiveConfigDefaults(t *testing.T) {
	s, c := DefaultStreamReceiveConfig(), DefaultConnReceiveConfig()
	if s.InitialWindow != 512<<10 || s.MaxWindow != 16<<20 {
		t.Errorf("stream config = %+v", s)
	}
	if c.InitialWindow != s.InitialWindow*3/2 || c.MaxWindow != s.MaxWindow*3/2 {
		t.Errorf("connection config %+v is not 1.5 times the stream config %+v", c, s)
	}
}

func TestReceiveWindowInitClamps(t *testing.T) {
	tests := []struct {
		name               string
		cfg                ReceiveConfig
		limit, win, maxWin uint64
	}{
		{"zero grants nothing", ReceiveConfig{}, 0, 0, 0},
		{"max below initial disables tuning", ReceiveConfig{InitialWindow: 1000, MaxWindow: 10}, 1000, 1000, 1000},
		{"normal", ReceiveConfig{InitialWindow: 1000, MaxWindow: 4000}, 1000, 1000, 4000},
		{"above 2^62-1", ReceiveConfig{InitialWindow: 1 << 63, MaxWindow: ^uint64(0)}, wire.MaxVarint, wire.MaxVarint, wire.MaxVarint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewReceiveWindow(tt.cfg)
			if w.Limit() != tt.limit || w.Window() != tt.win || w.MaxWindow() != tt.maxWin {
				t.Errorf("limit, window, max = %d, %d, %d; want %d, %d, %d",
					w.Limit(), w.Window(), w.MaxWindow(), tt.limit, tt.win, tt.maxWin)
			}
			if w.ShouldSendUpdate() {
				t.Error("the initial limit is in the transport parameters; ShouldSendUpdate = true")
			}
		})
	}
}

func TestReceiveWindowLimitBoundary(t *testing.T) {
	// RFC 9000, Section 19.9: "An endpoint MUST terminate a connection
	// with an error of type FLOW_CONTROL_ERROR if it receives more data
	// than the maximum data value that it has sent."
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000})
	wantCode(t, w.OnReceived(999), wire.NoError)
	wantCode(t, w.OnReceived(1), wire.NoError) // exactly the limit
	wantCode(t, w.OnReceived(1), wire.FlowControlError)
	wantCode(t, w.OnReceived(^uint64(0)), wire.FlowControlError)
	if w.Received() != 1000 {
		t.Errorf("Received = %d after rejected data, want 1000", w.Received())
	}
}

func TestReceiveWindowUpdateAtHalfWindow(t *testing.T) {
	// RFC 9000, Section 4.2: "frequently sending MAX_STREAM_DATA and
	// MAX_DATA frames with small changes is undesirable." An update is due
	// once consumed > limit - window/2.
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000, MaxWindow: 1000})
	wantCode(t, w.OnReceived(1000), wire.NoError)
	w.OnConsumed(at(0), 500)
	if w.ShouldSendUpdate() {
		t.Fatal("update due after consuming exactly half the window")
	}
	if got := w.NextLimit(at(0), 0); got != 1000 {
		t.Fatalf("NextLimit with no update due = %d, want 1000", got)
	}
	w.OnConsumed(at(0), 1)
	if !w.ShouldSendUpdate() {
		t.Fatal("no update due after consuming half the window plus one byte")
	}
	if got := w.NextLimit(at(0), 0); got != 501+1000 {
		t.Fatalf("NextLimit = %d, want consumed + window = 1501", got)
	}
	w.OnUpdateSent(1501)
	if w.ShouldSendUpdate() || w.Limit() != 1501 {
		t.Fatalf("after the update: ShouldSendUpdate = %v, Limit = %d", w.ShouldSendUpdate(), w.Limit())
	}
	// The next one is due when fewer than 500 bytes of credit remain.
	wantCode(t, w.OnReceived(501), wire.NoError)
	w.OnConsumed(at(0), 500)
	if w.ShouldSendUpdate() {
		t.Fatal("update due with exactly half the window left")
	}
	w.OnConsumed(at(0), 1)
	if !w.ShouldSendUpdate() {
		t.Fatal("no update due with less than half the window left")
	}
}

// ConsumedBeforeUpdate tells exactly how much more consumption makes an
// update due.
func TestReceiveWindowConsumedBeforeUpdate(t *testing.T) {
	for _, consumed := range []uint64{0, 1, 499, 500, 501, 900, 1000} {
		w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000, MaxWindow: 1000})
		wantCode(t, w.OnReceived(1000), wire.NoError)
		w.OnConsumed(at(0), consumed)
		n := w.ConsumedBeforeUpdate()
		if n == 0 {
			if !w.ShouldSendUpdate() {
				t.Fatalf("consumed %d: ConsumedBeforeUpdate 0, no update due", consumed)
			}
			continue
		}
		w.OnConsumed(at(0), n-1)
		if w.ShouldSendUpdate() {
			t.Fatalf("consumed %d: update due before ConsumedBeforeUpdate (%d) more", consumed, n)
		}
		w.OnConsumed(at(0), 1)
		if !w.ShouldSendUpdate() {
			t.Fatalf("consumed %d: no update due after ConsumedBeforeUpdate (%d) more", consumed, n)
		}
	}
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000, MaxWindow: 1000})
	wantCode(t, w.OnReceived(1000), wire.NoError)
	w.OnConsumed(at(0), 600)
	w.NextLimit(at(0), 0)
	if n := w.ConsumedBeforeUpdate(); n != 1600-500-600+1 {
		t.Fatalf("after an update: ConsumedBeforeUpdate %d, want 501", n)
	}
}

func TestReceiveWindowConsumedNeverExceedsReceived(t *testing.T) {
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000})
	wantCode(t, w.OnReceived(100), wire.NoError)
	w.OnConsumed(at(0), 500)
	if w.Consumed() != 100 {
		t.Errorf("Consumed = %d, want 100 (clamped to Received)", w.Consumed())
	}
}

// tuneOnce receives and consumes bytes on w from start to end of an epoch
// and returns the window after the update.
func tuneOnce(t *testing.T, w *ReceiveWindow, start, end time.Time, n uint64, rtt time.Duration) uint64 {
	t.Helper()
	wantCode(t, w.OnReceived(n), wire.NoError)
	w.OnConsumed(start, 1) // starts the first epoch, if none is running
	w.OnConsumed(end, n-1)
	if !w.ShouldSendUpdate() {
		t.Fatalf("no update due after consuming %d of window %d", n, w.Window())
	}
	w.OnUpdateSent(w.NextLimit(end, rtt))
	return w.Window()
}

func TestReceiveWindowAutoTune(t *testing.T) {
	// RFC 9000, Section 4.2: "A receiver can use an autotuning mechanism
	// to tune the frequency and amount of advertised additional credit
	// based on a round-trip time estimate and the rate at which the
	// receiving application consumes data, similar to common TCP
	// implementations."
	const rtt = 100 * time.Millisecond
	cfg := ReceiveConfig{InitialWindow: 1000, MaxWindow: 8000}

	t.Run("fast doubles", func(t *testing.T) {
		w := NewReceiveWindow(cfg)
		wantCode(t, w.OnReceived(600), wire.NoError)
		w.OnConsumed(at(0), 100) // starts the first epoch at 0
		w.OnConsumed(at(50*time.Millisecond), 500)
		// 600 bytes in 50 ms: a window in 83 ms < 2 RTT.
		if got := w.NextLimit(at(50*time.Millisecond), rtt); got != 600+2000 {
			t.Fatalf("NextLimit = %d, want 600 + doubled window 2000", got)
		}
		if w.Window() != 2000 {
			t.Fatalf("Window = %d, want 2000", w.Window())
		}
	})
	t.Run("slow does not", func(t *testing.T) {
		w := NewReceiveWindow(cfg)
		wantCode(t, w.OnReceived(600), wire.NoError)
		w.OnConsumed(at(0), 100)
		w.OnConsumed(at(500*time.Millisecond), 500)
		if got := w.NextLimit(at(500*time.Millisecond), rtt); got != 1600 || w.Window() != 1000 {
			t.Fatalf("NextLimit, Window = %d, %d; want 1600, 1000", got, w.Window())
		}
	})
	t.Run("boundary at two round trips", func(t *testing.T) {
		// 600 bytes of a 1000-byte window scale to a whole window in
		// elapsed·1000/600; that is 2 RTT = 200 ms at elapsed = 120 ms.
		for _, tc := range []struct {
			elapsed time.Duration
			want    uint64
		}{{119 * time.Millisecond, 2000}, {120 * time.Millisecond, 1000}} {
			w := NewReceiveWindow(cfg)
			if got := tuneOnce(t, w, at(0), at(tc.elapsed), 600, rtt); got != tc.want {
				t.Errorf("600 bytes in %v: window = %d, want %d", tc.elapsed, got, tc.want)
			}
		}
	})
	t.Run("epochs run from update to update", func(t *testing.T) {
		w := NewReceiveWindow(cfg)
		tuneOnce(t, w, at(0), at(time.Second), 600, rtt) // slow: 1000
		// The next epoch starts at the update (1 s), not at t0.
		wantCode(t, w.OnReceived(600), wire.NoError)
		w.OnConsumed(at(1010*time.Millisecond), 600)
		w.NextLimit(at(1010*time.Millisecond), rtt)
		if w.Window() != 2000 {
			t.Errorf("window = %d after a fast epoch, want 2000", w.Window())
		}
	})
	t.Run("capped at max", func(t *testing.T) {
		w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000, MaxWindow: 5000})
		var got []uint64
		now := at(0)
		for range 5 {
			next := now.Add(time.Millisecond)
			got = append(got, tuneOnce(t, w, now, next, w.Window()/2+1, rtt))
			now = next
		}
		want := []uint64{2000, 4000, 5000, 5000, 5000}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("windows = %v, want %v", got, want)
			}
		}
	})
	t.Run("no RTT no tuning", func(t *testing.T) {
		w := NewReceiveWindow(cfg)
		if got := tuneOnce(t, w, at(0), at(0), 600, 0); got != 1000 {
			t.Errorf("window = %d with rtt 0, want 1000", got)
		}
	})
	t.Run("first update without consumption epoch", func(t *testing.T) {
		// An update made due by EnsureMinWindow before any read: no epoch
		// to measure, so no tuning, but the epoch starts.
		w := NewReceiveWindow(cfg)
		w.EnsureMinWindow(4000)
		if !w.ShouldSendUpdate() {
			t.Fatal("no update due after the window grew past twice the credit")
		}
		if got := w.NextLimit(at(0), rtt); got != 4000 || w.Window() != 4000 {
			t.Errorf("NextLimit, Window = %d, %d; want 4000, 4000", got, w.Window())
		}
	})
}

func TestReceiveWindowNeverShrinks(t *testing.T) {
	// RFC 9000, Section 4.1: "Once a receiver advertises a limit for the
	// connection or a stream, it is not an error to advertise a smaller
	// limit, but the smaller limit has no effect." We never advertise one.
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000, MaxWindow: 100000})
	w.EnsureMinWindow(50000)
	w.EnsureMinWindow(10) // smaller: no effect
	if w.Window() != 50000 {
		t.Fatalf("Window = %d, want 50000", w.Window())
	}
	prev := w.Limit()
	now := at(0)
	for i := range 200 {
		now = now.Add(time.Duration(i%7) * time.Millisecond)
		n := uint64(i*37%1000) + 1
		if n > w.Limit()-w.Received() {
			n = w.Limit() - w.Received()
		}
		wantCode(t, w.OnReceived(n), wire.NoError)
		w.OnConsumed(now, n/2+uint64(i%3))
		l := w.NextLimit(now, time.Duration(i%4)*time.Millisecond)
		if l < prev || w.Limit() < prev {
			t.Fatalf("step %d: limit went from %d to %d", i, prev, l)
		}
		prev = l
	}
}

func TestReceiveWindowUpdateLost(t *testing.T) {
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000})
	wantCode(t, w.OnReceived(1000), wire.NoError)
	w.OnConsumed(at(0), 600)
	l1 := w.NextLimit(at(0), 0)
	w.OnUpdateSent(l1)
	if w.ShouldSendUpdate() {
		t.Fatal("update still due after it was sent")
	}
	w.OnUpdateLost(l1)
	if !w.ShouldSendUpdate() {
		t.Fatal("a lost current limit is not sent again")
	}
	if got := w.NextLimit(at(0), 0); got != l1 {
		t.Fatalf("resent limit = %d, want %d", got, l1)
	}
	w.OnUpdateSent(l1)

	// A loss made stale by a newer limit needs no repair.
	w.OnConsumed(at(0), 400)
	wantCode(t, w.OnReceived(600), wire.NoError)
	w.OnConsumed(at(0), 600)
	l2 := w.NextLimit(at(0), 0)
	w.OnUpdateSent(l2)
	if l2 <= l1 {
		t.Fatalf("l2 = %d not above l1 = %d", l2, l1)
	}
	w.OnUpdateLost(l1)
	if w.ShouldSendUpdate() {
		t.Fatal("loss of a superseded limit asks for an update")
	}
}

func TestReceiveWindowBlockedReceived(t *testing.T) {
	// RFC 9000, Section 4.2: "a receiver MUST NOT wait for a
	// STREAM_DATA_BLOCKED or DATA_BLOCKED frame before sending a
	// MAX_STREAM_DATA or MAX_DATA frame". A BLOCKED frame at the current
	// limit therefore grants nothing; one at an older limit shows that our
	// update did not arrive, and it is sent again.
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000})
	w.OnBlockedReceived(1000)
	if w.ShouldSendUpdate() {
		t.Fatal("BLOCKED at the current limit asks for an update")
	}
	wantCode(t, w.OnReceived(1000), wire.NoError)
	w.OnConsumed(at(0), 600)
	l := w.NextLimit(at(0), 0)
	w.OnUpdateSent(l)
	w.OnBlockedReceived(l)
	if w.ShouldSendUpdate() {
		t.Fatal("BLOCKED at the current limit asks for an update")
	}
	w.OnBlockedReceived(1000)
	if !w.ShouldSendUpdate() || w.NextLimit(at(0), 0) != l {
		t.Fatal("BLOCKED at an old limit does not resend the current one")
	}
}

func TestReceiveWindowNearMaxVarint(t *testing.T) {
	// RFC 9000, Section 19.8: "The largest offset delivered on a stream --
	// the sum of the offset and data length -- cannot exceed 2^62-1, as it
	// is not possible to provide flow control credit for that data."
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1 << 61, MaxWindow: wire.MaxVarint})
	now := at(0)
	for range 4 {
		n := w.Limit() - w.Received()
		wantCode(t, w.OnReceived(n), wire.NoError)
		w.OnConsumed(now, n)
		now = now.Add(time.Millisecond)
		w.OnUpdateSent(w.NextLimit(now, time.Hour))
		if w.Limit() > wire.MaxVarint {
			t.Fatalf("limit %d above 2^62-1", w.Limit())
		}
	}
	if w.Limit() != wire.MaxVarint {
		t.Fatalf("limit = %d, want 2^62-1", w.Limit())
	}
	wantCode(t, w.OnReceived(w.Limit()-w.Received()), wire.NoError)
	w.OnConsumed(now, wire.MaxVarint)
	if w.ShouldSendUpdate() {
		t.Fatal("update due at the largest possible limit")
	}
	wantCode(t, w.OnReceived(1), wire.FlowControlError)
}

func TestConsumedFastExtremes(t *testing.T) {
	// 128-bit products: no overflow with the largest values.
	if fcConsumedFast(1<<62, wire.MaxVarint, 1<<61, wire.MaxVarint) {
		t.Error("equal huge products compare as fast")
	}
	if !fcConsumedFast(1<<62, wire.MaxVarint, 1<<61, wire.MaxVarint+1) {
		t.Error("huge products differing in the last unit compare as slow")
	}
	if !fcConsumedFast(0, wire.MaxVarint, 1, 1) {
		t.Error("zero elapsed is not fast")
	}
	if !fcConsumedFast(-time.Second, 1000, time.Millisecond, 1) {
		t.Error("a clock going backwards is not treated as zero elapsed")
	}
	if fcConsumedFast(-time.Second, 1, 1, 0) {
		t.Error("nothing consumed is fast")
	}
}

// A window whose peer used its credit while more than half of it sits
// unread is starved; GrowForWaitingReader doubles it, up to MaxWindow,
// and grants the new limit at once.
func TestReceiveWindowGrowForWaitingReader(t *testing.T) {
	now := time.Unix(0, 0)
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1000, MaxWindow: 2500})
	if w.Starved() || w.GrowForWaitingReader() {
		t.Fatal("a fresh window is not starved")
	}
	if err := w.OnReceived(950); err != nil {
		t.Fatal(err)
	}
	w.OnConsumed(now, 100) // 850 unread: no half-window update due
	if w.ShouldSendUpdate() || !w.Starved() {
		t.Fatalf("update due %v, starved %v; want false, true", w.ShouldSendUpdate(), w.Starved())
	}
	if !w.GrowForWaitingReader() || w.Window() != 2000 || w.Limit() != 2100 || !w.ShouldSendUpdate() {
		t.Fatalf("after growing: window %d, limit %d, update due %v; want 2000, 2100, true", w.Window(), w.Limit(), w.ShouldSendUpdate())
	}
	if got := w.NextLimit(now, 0); got != 2100 {
		t.Fatalf("NextLimit %d, want 2100", got)
	}
	w.OnUpdateSent(2100)
	if w.Starved() || w.GrowForWaitingReader() {
		t.Fatal("starved right after growing")
	}
	// Starved again: the window stops at MaxWindow, then grows no more.
	w.OnReceived(2100 - 950)
	if !w.GrowForWaitingReader() || w.Window() != 2500 || w.Limit() != 2600 {
		t.Fatalf("second growth: window %d, limit %d; want 2500, 2600", w.Window(), w.Limit())
	}
	w.OnReceived(2600 - 2100)
	if !w.Starved() || w.GrowForWaitingReader() || w.Limit() != 2600 {
		t.Fatalf("at MaxWindow: starved %v, limit %d; want true and no growth", w.Starved(), w.Limit())
	}
}

// A shared (connection) window with part of it left unread on other
// streams still grants the rest: the update is due once the credit it
// would grant reaches what the peer has left. With the half-window rule
// alone, half the window unread stopped every update (RFC 9000, Section
// 4.1: connection flow control "prevents senders from exceeding a
// receiver's buffer capacity for the connection", which is the window).
func TestReceiveWindowSharedWithUnreadData(t *testing.T) {
	for _, shared := range []bool{false, true} {
		w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1600, MaxWindow: 1600, Shared: shared})
		wantCode(t, w.OnReceived(1000), wire.NoError) // left unread: other streams
		// The stream being read gets the rest, 600 bytes, and reads them.
		wantCode(t, w.OnReceived(600), wire.NoError)
		w.OnConsumed(at(0), 600)
		// The peer has no credit left; granting brings 600 more.
		if got := w.ShouldSendUpdate(); got != shared {
			t.Fatalf("shared %v: update due %v with 1000 of 1600 unread", shared, got)
		}
		if !shared {
			continue
		}
		if got := w.NextLimit(at(0), 0); got != 2200 {
			t.Fatalf("NextLimit %d, want 600 + 1600", got)
		}
		w.OnUpdateSent(2200)
		// Half of the 600 in turn: the peer has 300 left, 300 would be
		// granted.
		wantCode(t, w.OnReceived(300), wire.NoError)
		w.OnConsumed(at(0), 299)
		if w.ShouldSendUpdate() || w.ConsumedBeforeUpdate() != 1 {
			t.Fatalf("update due %v, %d bytes before one; want false, 1", w.ShouldSendUpdate(), w.ConsumedBeforeUpdate())
		}
		w.OnConsumed(at(0), 1)
		if !w.ShouldSendUpdate() {
			t.Fatal("no update with half the unread-free window consumed")
		}
	}
}

// The rule for unread data grants no less than a sixteenth of the window
// at a time; below that a waiting reader gets what was consumed.
func TestReceiveWindowSharedNearlyAllUnread(t *testing.T) {
	w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1600, MaxWindow: 1600, Shared: true})
	wantCode(t, w.OnReceived(1550), wire.NoError) // unread
	wantCode(t, w.OnReceived(50), wire.NoError)
	w.OnConsumed(at(0), 50)
	if w.ShouldSendUpdate() {
		t.Fatal("an update of 50 bytes, below a sixteenth of the window")
	}
	if n := w.ConsumedBeforeUpdate(); n != 50 {
		t.Fatalf("ConsumedBeforeUpdate %d, want 50 (the unread data read up to 100)", n)
	}
	if !w.Starved() || !w.CanGrowForWaitingReader() || !w.GrowForWaitingReader() || w.Limit() != 1650 {
		t.Fatalf("waiting reader at MaxWindow: limit %d, want 1650", w.Limit())
	}
	w.OnUpdateSent(w.NextLimit(at(0), 0))
	// The whole window unread: nothing more, even for a waiting reader.
	wantCode(t, w.OnReceived(50), wire.NoError)
	if w.ShouldSendUpdate() || w.CanGrowForWaitingReader() || w.GrowForWaitingReader() {
		t.Fatalf("credit granted with the whole window (%d) unread", w.Received()-w.Consumed())
	}
}

// ConsumedBeforeUpdate of a shared window is exact for both rules, with
// the data received so far.
func TestReceiveWindowSharedConsumedBeforeUpdate(t *testing.T) {
	checked := 0
	for r0 := uint64(0); r0 <= 1600; r0 += 100 {
		for c0 := uint64(0); c0 <= r0; c0 += 100 {
			for r1 := uint64(0); r1 <= 1600; r1 += 150 {
				for c1 := uint64(0); c1 <= 1600; c1 += 130 {
					w := NewReceiveWindow(ReceiveConfig{InitialWindow: 1600, MaxWindow: 1600, Shared: true})
					wantCode(t, w.OnReceived(r0), wire.NoError)
					w.OnConsumed(at(0), c0)
					w.OnUpdateSent(w.NextLimit(at(0), 0))
					if w.OnReceived(r1) != nil {
						continue
					}
					w.OnConsumed(at(0), c1)
					n := w.ConsumedBeforeUpdate()
					if n == 0 {
						if !w.ShouldSendUpdate() {
							t.Fatalf("%d %d %d %d: ConsumedBeforeUpdate 0, no update due", r0, c0, r1, c1)
						}
						continue
					}
					if w.ShouldSendUpdate() {
						t.Fatalf("%d %d %d %d: due, ConsumedBeforeUpdate %d", r0, c0, r1, c1, n)
					}
					if n > w.Received()-w.Consumed() {
						continue // needs data not received yet
					}
					checked++
					w.OnConsumed(at(0), n-1)
					if w.ShouldSendUpdate() {
						t.Fatalf("%d %d %d %d: due one byte before ConsumedBeforeUpdate %d", r0, c0, r1, c1, n)
					}
					w.OnConsumed(at(0), 1)
					if !w.ShouldSendUpdate() {
						t.Fatalf("%d %d %d %d: not due after ConsumedBeforeUpdate %d", r0, c0, r1, c1, n)
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d cases checked", checked)
	}
}
