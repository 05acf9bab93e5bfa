package quic

import (
	"context"
	"sync"
	"sync/atomic"
)

// drainState lets application goroutines wait, through Conn.Drain, until
// the peer acknowledged everything written on the connection's streams.
type drainState struct {
	waiting atomic.Int32 // waiters, so that the run loop checks only then
	mu      sync.Mutex
	waiters []chan struct{}
}

// Drain waits until every byte and FIN written on the connection's
// streams has been acknowledged by the peer (streams that were reset do
// not count), or until ctx ends or the connection does. CloseWithError
// sends CONNECTION_CLOSE at once, and "an endpoint that sends a
// CONNECTION_CLOSE frame ... [discards] stream data not yet delivered"
// (RFC 9000, Section 10.2): a server ending a connection gracefully, such
// as an HTTP/3 server after GOAWAY, calls Drain first so that responses
// still in flight arrive.
func (c *Conn) Drain(ctx context.Context) error {
	ch := make(chan struct{})
	c.drain.mu.Lock()
	c.drain.waiters = append(c.drain.waiters, ch)
	c.drain.mu.Unlock()
	c.drain.waiting.Add(1)
	defer c.drain.waiting.Add(-1)
	c.wake()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return context.Cause(c.ctx)
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
