package quic

import (
	"testing"
	"time"
)

// failureWindow counts failed handshakes over the last second, with the
// previous fixed window weighted by the part the sliding window still
// covers.
func TestFailureWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var w failureWindow
	if n := w.count(t0); n != 0 {
		t.Fatalf("empty window: %d", n)
	}
	for i := range 100 {
		w.add(t0.Add(time.Duration(i) * time.Millisecond))
	}
	for _, c := range []struct {
		at   time.Duration
		want int64
	}{
		{500 * time.Millisecond, 100},  // all in the current window
		{999 * time.Millisecond, 100},  // still
		{1000 * time.Millisecond, 100}, // the previous window, wholly covered
		{1250 * time.Millisecond, 75},  // three quarters of it
		{1900 * time.Millisecond, 10},
		{2000 * time.Millisecond, 0}, // gone
		{5000 * time.Millisecond, 0},
	} {
		if n := w.count(t0.Add(c.at)); n != c.want {
			t.Errorf("at %v: %d, want %d", c.at, n, c.want)
		}
	}
	// After a quiet spell longer than two windows, old counts are gone
	// and new ones count from the start.
	t1 := t0.Add(time.Minute)
	w.add(t1)
	w.add(t1.Add(10 * time.Millisecond))
	if n := w.count(t1.Add(500 * time.Millisecond)); n != 2 {
		t.Errorf("after a quiet minute: %d, want 2", n)
	}
	// An event stamped before the window started (another goroutine's
	// clock reading) counts in the current window.
	w.add(t1.Add(-time.Millisecond))
	if n := w.count(t1.Add(500 * time.Millisecond)); n != 3 {
		t.Errorf("with a late-stamped event: %d, want 3", n)
	}
	// Failures spread over time: a steady rate of 10 per 100 ms keeps
	// the count at about 100 (one second's worth).
	var s failureWindow
	for i := range 50 {
		for range 10 {
			s.add(t0.Add(time.Duration(i) * 100 * time.Millisecond))
		}
	}
	if n := s.count(t0.Add(4950 * time.Millisecond)); n < 90 || n > 110 {
		t.Errorf("steady 100/s: %d in the window, want about 100", n)
	}
}

// Retry is due when handshakes in progress and recently failed ones
// together reach half of MaxHandshakes.
func TestRetryDue(t *testing.T) {
	for _, c := range []struct {
		inProgress, failed int64
		max                int
		want               bool
	}{
		{0, 0, 1024, false},
		{511, 0, 1024, false},
		{512, 0, 1024, true},
		{0, 511, 1024, false},
		{0, 512, 1024, true}, // failures alone: a flood that fails at once
		{300, 212, 1024, true},
		{300, 211, 1024, false},
		{0, 0, 1, true}, // MaxHandshakes 1: always
	} {
		if got := retryDue(c.inProgress, c.failed, c.max); got != c.want {
			t.Errorf("retryDue(%d in progress, %d failed, max %d) = %v, want %v", c.inProgress, c.failed, c.max, got, c.want)
		}
	}
}
