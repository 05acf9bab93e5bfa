package quic

import (
	"math/bits"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic/wire"
)

// Closed connections. A connection that closes stays in the closing or
// draining state for three PTOs (RFC 9000, Section 10.2), where all it
// does is answer packets with its CONNECTION_CLOSE datagram, or drop
// them. Once its datagram is built, what it needs for that is small, and
// the connection ends at once: its connection IDs route to a closedConn
// that holds the datagram, where to send it, and when it goes; the rest
// of the connection's state is garbage as soon as the application lets
// go of the Conn. A server ending connections at a high rate otherwise
// kept each one whole (9-13 KB after releaseClosed) for three PTOs: in
// the handshake benchmark (client and server in one process) the live
// heap was 13 MB, 10 MB of it connections in these states, and is 4 MB
// with closedConn.

// closedConn is what is left of a connection in the closing or draining
// state. It answers packets from the read loops of the Transports that
// route its IDs, and the Transport that made it removes it at its
// deadline.
type closedConn struct {
	// datagram is the CONNECTION_CLOSE datagram a closing connection
	// repeats, nil for a draining one: "An endpoint that is in the
	// draining state MUST NOT send any packets" (RFC 9000,
	// Section 10.2.2).
	datagram []byte
	// Where the datagram goes: the connection's active path.
	t    *Transport
	addr net.Addr
	ap   netip.AddrPort
	src  netip.Addr
	// received counts the datagrams that reached the connection in the
	// closing state, rxBytes and txBytes the bytes received and answered
	// with since it entered it.
	received         atomic.Uint64
	rxBytes, txBytes atomic.Uint64
	// only, if valid, is the address the datagram goes to when the
	// connection had not validated it: only datagrams from there count,
	// and rxBytes and txBytes then are all the path received and was sent
	// (connState.closingCounts).
	only netip.AddrPort

	deadline    time.Time
	nextPending *closedConn // in closedConns.pending
	cids        []wire.ConnectionID
	transports  []*Transport // that route cids: the connection's own first
	// traceDone is the connection's Tracer.Done, called when it is gone
	// (what the application does with the connection meanwhile, such as
	// HTTP/3 frames it still parses, is traced).
	traceDone func()
}

// handle answers n datagrams (a GRO run) of size bytes in all, routed to
// the closed connection: "An endpoint in the closing state sends a packet
// containing a CONNECTION_CLOSE frame in response to any incoming packet
// that it attributes to the connection", and "SHOULD limit the rate at
// which it generates packets in the closing state ... an endpoint could
// wait for a progressively increasing number of received packets" (RFC
// 9000, Section 10.2.1): the 1st, 2nd, 4th, 8th ... datagram is answered,
// counting those the connection itself received in the closing state.
// Its keys are gone, so any datagram counts, and "such endpoints MUST
// limit the cumulative size of packets it sends to three times the
// cumulative size of the packets that are received" (the same section).
//
// from is the sender, unmapped: when the connection's active path was not
// validated, the datagram answers only datagrams from there, within three
// times what that address sent (RFC 9000, Section 9.3.1).
func (cc *closedConn) handle(n, size int, from netip.AddrPort) {
	if cc.datagram == nil || cc.only.IsValid() && from != cc.only {
		return
	}
	rx := cc.rxBytes.Add(uint64(size))
	before := cc.received.Add(uint64(n)) - uint64(n)
	// Answer once if a power of two is among the counts reached.
	if uint64(1)<<bits.Len64(before) > before+uint64(n) {
		return
	}
	if !closeAllowance(rx, cc.txBytes.Load(), len(cc.datagram)) {
		return
	}
	cc.txBytes.Add(uint64(len(cc.datagram)))
	cc.t.writeFrom(cc.datagram, cc.addr, cc.ap, cc.src)
}

// closeAllowance reports whether a closing connection that received rx
// bytes and answered with tx may answer with size more (RFC 9000,
// Section 10.2.1: at most three times what it received).
func closeAllowance(rx, tx uint64, size int) bool {
	return tx+uint64(size) <= 3*rx
}

// closedConns are a Transport's closed connections, in a heap ordered by
// deadline, with one timer for the earliest.
//
// A closing connection never waits for mu: it pushes its record on
// pending (lock-free) and moves the pending records into the heap only if
// mu is free (TryLock). Every holder of mu does the same after unlocking
// (drainPendingClosed), so a record pushed while mu was held is moved by
// the holder. Blocking in mu.Lock, the connections' goroutines formed a
// convoy under load (the mutex's starvation mode hands it over in FIFO
// order, each waiter waiting to be scheduled): in the handshake benchmark
// 40 of 115 goroutines waited there, and the Transport's idle runners ran
// out, so new connections started new goroutines.
type closedConns struct {
	mu    sync.Mutex
	heap  []*closedConn
	timer *time.Timer
	ended bool // the Transport closed
	// reaping counts closed connections taken off the heap and not yet
	// removed, which endClosed waits for.
	reaping sync.WaitGroup
	// pending is a stack, linked through closedConn.nextPending, of the
	// records not yet in the heap.
	pending atomic.Pointer[closedConn]
}

// addClosed routes cc's IDs to it instead of c, in every Transport of
// cc.transports, until cc.deadline. It does not wait for t.closed.mu.
func (t *Transport) addClosed(c *Conn, cc *closedConn) {
	for _, tr := range cc.transports {
		for _, cid := range cc.cids {
			tr.ep.routes.hand(cid, c, cc)
		}
	}
	s := &t.closed
	for {
		top := s.pending.Load()
		cc.nextPending = top
		if s.pending.CompareAndSwap(top, cc) {
			break
		}
	}
	t.drainPendingClosed()
}

// drainPendingClosed moves the pending closed connections into the heap
// and arms the timer for the earliest, unless another goroutine holds
// t.closed.mu: that one calls drainPendingClosed after unlocking, and
// sees the records pushed before (the push precedes the failed TryLock,
// which precedes the holder's Unlock and its load of pending). After
// endClosed the records are removed at once.
func (t *Transport) drainPendingClosed() {
	s := &t.closed
	for s.pending.Load() != nil {
		if !s.mu.TryLock() {
			return
		}
		var gone *closedConn
		var first *closedConn
		if len(s.heap) > 0 {
			first = s.heap[0]
		}
		for cc := s.pending.Swap(nil); cc != nil; {
			next := cc.nextPending
			if s.ended {
				cc.nextPending = gone
				gone = cc
			} else {
				cc.nextPending = nil
				s.heap = append(s.heap, cc)
				closedUp(s.heap, len(s.heap)-1)
			}
			cc = next
		}
		if len(s.heap) > 0 && s.heap[0] != first {
			d := time.Until(s.heap[0].deadline)
			if s.timer == nil {
				s.timer = time.AfterFunc(d, t.reapClosed)
			} else {
				s.timer.Reset(d)
			}
		}
		s.mu.Unlock()
		for gone != nil {
			next := gone.nextPending
			gone.nextPending = nil
			t.removeClosed(gone)
			gone = next
		}
	}
}

// reapClosed removes the closed connections whose deadline passed, and
// arms the timer for the next one.
func (t *Transport) reapClosed() {
	s := &t.closed
	var gone []*closedConn
	s.mu.Lock()
	now := time.Now()
	for len(s.heap) > 0 && !s.heap[0].deadline.After(now) {
		gone = append(gone, closedPop(&s.heap))
	}
	s.reaping.Add(len(gone))
	if len(s.heap) > 0 && !s.ended {
		s.timer.Reset(s.heap[0].deadline.Sub(now))
	}
	s.mu.Unlock()
	t.drainPendingClosed()
	for _, cc := range gone {
		t.removeClosed(cc)
		s.reaping.Done()
	}
}

// removeClosed stops routing cc's IDs; the connection is gone.
func (t *Transport) removeClosed(cc *closedConn) {
	for _, tr := range cc.transports {
		for _, cid := range cc.cids {
			tr.ep.routes.removeClosed(cid, cc)
		}
	}
	if cc.traceDone != nil {
		cc.traceDone()
	}
	t.connGone()
}

// endClosed, when the Transport closes, lets the closed connections
// answer until the last deadline (at most limit from now), as it lets the
// connections it closes, then drops them. When it returns, each is gone
// (ConnectionsOpen does not count it, its Tracer's Done was called).
func (t *Transport) endClosed(limit time.Duration) {
	s := &t.closed
	t.drainPendingClosed()
	s.mu.Lock()
	var last time.Time
	for _, cc := range s.heap {
		// A draining connection sends nothing: no reason to wait.
		if cc.datagram != nil && cc.deadline.After(last) {
			last = cc.deadline
		}
	}
	s.mu.Unlock()
	if d := time.Until(last); d > 0 {
		time.Sleep(min(d, limit))
	}
	s.mu.Lock()
	s.ended = true
	if s.timer != nil {
		s.timer.Stop()
	}
	gone := s.heap
	s.heap = nil
	s.mu.Unlock()
	t.drainPendingClosed() // removes the records pushed meanwhile
	for _, cc := range gone {
		t.removeClosed(cc)
	}
	s.reaping.Wait()
}

// closedUp and closedPop keep h a heap ordered by deadline (the one
// container/heap keeps, without an interface).
func closedUp(h []*closedConn, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].deadline.Before(h[p].deadline) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func closedPop(h *[]*closedConn) *closedConn {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = nil
	q = q[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(q) && q[l].deadline.Before(q[m].deadline) {
			m = l
		}
		if r := l + 1; r < len(q) && q[r].deadline.Before(q[m].deadline) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// closeToRoutes ends a connection in the closing or draining state whose
// CONNECTION_CLOSE datagram is built (or that sends none): its IDs route
// to the closedConn it returns until the state's deadline. When the
// Transport is closing too, the record answers until Transport.Close
// stops all of them (endClosed), so that Close waits for the closing
// periods together, and for 5 seconds at most, rather than for each
// connection's whole closing period in turn.
func (c *Conn) closeToRoutes() *closedConn {
	st := c.state
	// Routing changes still queued (an ID the peer just retired) are
	// applied first, so that what the record takes over is what routes.
	c.routeConnIDs(time.Now())
	cc := &closedConn{deadline: st.closing.deadline, transports: append([]*Transport{c.t}, c.extra...)}
	if tr := st.obs.t; tr != nil {
		cc.traceDone = tr.Done
	}
	if st.closeState == stateClosing && len(st.closing.datagram) > 0 {
		cc.datagram = st.closing.datagram
		cc.t, cc.addr, cc.ap, cc.src = c.sendTarget(st.paths.list[st.paths.active].addrs)
		cc.received.Store(st.closing.datagrams)
		cc.rxBytes.Store(st.closing.rxBytes)
		cc.txBytes.Store(st.closing.txBytes)
		if p := st.activePath(); st.pathAllowance(p) >= 0 {
			cc.only = p.addrs.remote
			cc.rxBytes.Store(p.recv)
			cc.txBytes.Store(p.sent)
		}
	}
	st.localIDs.each(func(cid ConnectionID) { cc.cids = append(cc.cids, cid) })
	for _, cid := range []wire.ConnectionID{st.origDstConnID, c.firstDstConnID} {
		if cid.Len() > 0 && !slices.Contains(cc.cids, cid) {
			cc.cids = append(cc.cids, cid)
		}
	}
	c.t.addClosed(c, cc)
	return cc
}
