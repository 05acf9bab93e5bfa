package quic

import (
	"sync"
	"time"
)

// The automatic Retry decision of a Listener (when
// Transport.RequireAddressValidation is nil). "A server can also use a
// Retry packet to defer the state and processing costs of connection
// establishment" (RFC 9000, Section 8.1.2): it costs a client one round
// trip and the server almost nothing, so it is turned on while handshakes
// cost the server more than it wants to spend on unvalidated addresses.
//
// What handshakes cost is measured as the handshake load: the handshakes
// in progress plus those that failed within about the last second
// (retryFailureWindow). A handshake that fails at once, such as one whose
// ClientHello carries transport parameters that do not match the
// packet's Source Connection ID, costs the server a ClientHello parse and
// a connection start, yet is never in progress when the next Initial
// arrives; counting it for a second makes a flood of them turn Retry on
// as a flood of handshakes that never finish does. Retry is sent while
// the load is at least half of Transport.MaxHandshakes: with the default
// 1024, a flood gets at most 512 handshakes per second started before
// Retry answers it, and legitimate clients then pay one round trip more.

// retryFailureWindow is how long a failed handshake counts toward the
// handshake load.
const retryFailureWindow = time.Second

// failureWindow counts events (failed handshakes) over a sliding window
// of retryFailureWindow, approximated by two fixed windows: the count of
// the current window plus that of the previous one, weighted by how much
// of it the sliding window still covers. It takes the time from its
// callers and never reads the clock. Its methods may be called from any
// goroutine.
type failureWindow struct {
	mu    sync.Mutex
	start time.Time // start of the current window
	cur   int64     // events in the current window
	prev  int64     // events in the previous window
}

// add counts an event at now.
func (w *failureWindow) add(now time.Time) {
	w.mu.Lock()
	w.advance(now)
	w.cur++
	w.mu.Unlock()
}

// count returns the estimated number of events in the window that ends
// at now.
func (w *failureWindow) count(now time.Time) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(now)
	if w.prev == 0 {
		return w.cur
	}
	left := retryFailureWindow - now.Sub(w.start) // of the previous window, still covered
	return w.cur + int64(float64(w.prev)*float64(left)/float64(retryFailureWindow))
}

// advance moves the windows forward to now; w.mu is held. A time before
// the current window's start (clocks of different goroutines) counts in
// the current window.
func (w *failureWindow) advance(now time.Time) {
	e := now.Sub(w.start)
	switch {
	case e < retryFailureWindow:
	case e < 2*retryFailureWindow:
		w.prev, w.cur = w.cur, 0
		w.start = w.start.Add(retryFailureWindow)
	default:
		w.prev, w.cur = 0, 0
		w.start = now
	}
}

// retryDue reports whether a handshake load of inProgress handshakes and
// recentFailures failed ones calls for Retry, given the Transport's
// MaxHandshakes.
func retryDue(inProgress, recentFailures int64, maxHandshakes int) bool {
	return inProgress+recentFailures >= int64(maxHandshakes)/2
}
