package quic

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// drainState lets application goroutines wait, through Conn.WaitAcked,
// until the peer acknowledged everything written on the connection's
// streams. (It is not the draining state of RFC 9000, Section 10.2.2,
// which is closeState's stateDraining, conn_close_draining.go.)
type drainState struct {
	waiting atomic.Int32 // waiters, so that the run loop checks only then
	mu      sync.Mutex
	waiters []chan struct{}
}

// WaitAcked waits until every byte and FIN written on the connection's
// streams has been acknowledged by the peer (streams that were reset do
// not count), or until ctx ends or the connection does. CloseWithError
// sends CONNECTION_CLOSE at once, and "an endpoint that sends a
// CONNECTION_CLOSE frame ... [discards] stream data not yet delivered"
// (RFC 9000, Section 10.2): a server ending a connection gracefully, such
// as an HTTP/3 server after GOAWAY, calls WaitAcked first so that
// responses still in flight arrive. It returns nil at once, without
// disturbing the connection, when nothing waits for an acknowledgement;
// ctx.Err() when ctx ends first and the connection's error when it closes
// first. A call that returns leaves nothing behind. Multiple goroutines
// may call it simultaneously.
func (c *Conn) WaitAcked(ctx context.Context) error {
	if err := context.Cause(c.ctx); err != nil {
		return err
	}
	if !c.state.streams.unacknowledged() {
		return nil
	}
	ch := make(chan struct{})
	c.drain.mu.Lock()
	c.drain.waiters = append(c.drain.waiters, ch)
	c.drain.mu.Unlock()
	// Counted before the second look: an acknowledgement processed after
	// it finds the count (checkDrained), one processed before is seen.
	c.drain.waiting.Add(1)
	defer c.drain.waiting.Add(-1)
	if !c.state.streams.unacknowledged() {
		c.drain.remove(ch)
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		c.drain.remove(ch)
		return ctx.Err()
	case <-c.ctx.Done():
		c.drain.remove(ch)
		return context.Cause(c.ctx)
	}
}

// Drain is WaitAcked.
//
// Deprecated: Drain has nothing to do with the draining state of RFC 9000,
// Section 10.2.2, which its name suggests; use WaitAcked. Drain will be
// removed in the next release.
func (c *Conn) Drain(ctx context.Context) error { return c.WaitAcked(ctx) }

// remove forgets the waiter ch, if checkDrained has not released it.
func (d *drainState) remove(ch chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, w := range d.waiters {
		if w == ch {
			d.waiters = slices.Delete(d.waiters, i, i+1)
			return
		}
	}
}

// checkDrained releases Drain's waiters once nothing written waits for
// an acknowledgement. It runs on the connection's goroutine after each
// batch of events and costs an atomic load when nobody waits.
func (c *Conn) checkDrained() {
	if c.drain.waiting.Load() == 0 || c.state.streams.unacknowledged() {
		return
	}
	c.drain.mu.Lock()
	for _, ch := range c.drain.waiters {
		close(ch)
	}
	c.drain.waiters = nil
	c.drain.mu.Unlock()
}

// unacknowledged reports whether a stream has data or a FIN the
// application wrote that the peer has not acknowledged yet (reset streams
// aside). Streams whose both sides finished are gone from the map.
func (m *streamsMap) unacknowledged() bool {
	m.mu.Lock()
	list := make([]*stream, 0, len(m.streams))
	for _, s := range m.streams {
		list = append(list, s)
	}
	m.mu.Unlock()
	for _, s := range list {
		s.mu.Lock()
		b := &s.send
		pending := s.hasSend && !b.isReset && (b.acked < b.written || (b.closed && !b.finAcked))
		s.mu.Unlock()
		if pending {
			return true
		}
	}
	return false
}
