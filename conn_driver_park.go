package quic

import (
	"sync/atomic"
	"time"
)

// Parking: a connection whose state released its idle memory
// (conn_idle_release.go), or that is closing or draining and let go of what those
// states do not use (conn_close_draining.go), lets its goroutine exit, which frees the goroutine's
// stack (4 KB, grown while the handshake ran) and its timer, and gives
// its queue's storage back. Whatever needs the connection again starts a
// goroutine through wake: a datagram the Transport routes to it, its next
// deadline (a timer made with time.AfterFunc while it is parked), an
// application call (stream data, a datagram, CloseWithError, Migrate,
// WaitAcked) or the Transport closing.
//
// The state stays owned by one goroutine at a time: a goroutine parks by
// setting parked, and only the wake that clears it starts the next one;
// what the goroutine did before setting parked happens before what the
// next one does. A wake always leaves a token in wakeCh first, so a wake
// that comes while the goroutine is about to park, and finds parked
// still clear, is seen by the goroutine's last look at wakeCh.

// wake tells the connection's goroutine that there is work, starting one
// if the connection is parked. Any goroutine may call it.
func (c *Conn) wake() {
	select {
	case c.wakeCh <- struct{}{}:
	default:
	}
	if c.parked.Load() && c.parked.CompareAndSwap(true, false) {
		c.t.runConn(c)
	}
}

// park ends the calling goroutine's turn: it frees the inbound queue's
// storage, arms a timer for deadline (unless it is zero) and marks the
// connection parked. It reports false when work arrived before the
// goroutine could leave: the goroutine then goes on. When it reports
// true the goroutine must return at once, touching nothing more.
func (c *Conn) park(deadline time.Time) bool {
	if !c.inbound.release() {
		return false // datagrams arrived
	}
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if c.parkTimer == nil {
			c.parkAlarm = new(parkAlarm)
			c.parkAlarm.c.Store(c)
			c.parkTimer = time.AfterFunc(d, c.parkAlarm.ring)
		} else {
			c.parkTimer.Reset(d)
		}
	}
	c.parked.Store(true)
	select {
	case <-c.wakeCh:
		// A wake came before parked was set, or after: in the first
		// case nobody started a goroutine and this one goes on.
		if c.parked.CompareAndSwap(true, false) {
			c.stopParkTimer()
			return false
		}
	default:
	}
	return true
}

// stopParkTimer stops the timer of the last park, if any: the running
// goroutine has its own. A timer that fired anyway only wakes it.
func (c *Conn) stopParkTimer() {
	if c.parkTimer != nil {
		c.parkTimer.Stop()
	}
}

// dropParkTimer stops the park timer for good, when the connection is
// finished.
func (c *Conn) dropParkTimer() {
	if c.parkTimer != nil {
		c.parkTimer.Stop()
		c.parkAlarm.c.Store(nil)
	}
}

// parkAlarm is what a parked connection's timer calls: it wakes the
// connection, until the connection is finished. A stopped timer can stay
// in the runtime's timer heap for a while, and with it what its function
// refers to; through parkAlarm that is not a finished connection's state.
type parkAlarm struct{ c atomic.Pointer[Conn] }

func (a *parkAlarm) ring() {
	if c := a.c.Load(); c != nil {
		c.wake()
	}
}

// release frees the queue's storage if it is empty, and reports whether
// it was.
func (q *inboundQueue) release() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.q) > 0 {
		return false
	}
	q.q, q.spare = nil, nil
	return true
}
