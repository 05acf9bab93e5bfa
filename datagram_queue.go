package quic

import (
	"sync"
	"sync/atomic"
)

// datagramQueue holds DATAGRAM payloads (RFC 9221) between the
// application and the connection goroutine, in both directions. Both
// queues are bounded by limit (Config.DatagramQueueLen); when one is full,
// its oldest entry is dropped, since datagrams are unreliable by contract
// ("DATAGRAM frames ... are not retransmitted", RFC 9221, Section 5),
// except that pushSendWait waits for room instead. Nothing leaves a queue
// unseen: every payload dropped is counted by direction and reason, for
// the connection's statistics and its Tracer.
//
// Discipline: mu guards everything but nSend and dropsPending, atomics
// the connection goroutine reads without the lock to see whether there is
// anything to do. Any goroutine may push and pop.
type datagramQueue struct {
	mu       sync.Mutex
	limit    int // bound of each queue: Config.DatagramQueueLen
	send     [][]byte
	nSend    atomic.Int32  // len(send), for the connection goroutine to look without the lock
	sendWait chan struct{} // made for a waiter for room, closed when room is made
	closed   bool          // the connection closed: nothing more is queued to send
	received [][]byte
	recvWait chan struct{} // made for a waiter, closed and cleared when a datagram arrives

	// Drops, by direction and reason: all of them (the statistics), and
	// those not yet reported to the Tracer (dropsPending says there are).
	drops        [2][numDatagramDropReasons]datagramDropCount
	unreported   [2][numDatagramDropReasons]datagramDropCount
	dropsPending atomic.Bool
}

// Directions of datagramQueue.drops.
const (
	dgSend = iota
	dgRecv
)

// datagramDropCount counts dropped datagrams and their bytes.
type datagramDropCount struct{ n, bytes uint64 }

// dropLocked counts a dropped payload of size bytes; q.mu is held.
func (q *datagramQueue) dropLocked(dir int, r datagramDropIndex, size int) {
	q.drops[dir][r].n++
	q.drops[dir][r].bytes += uint64(size)
	q.unreported[dir][r].n++
	q.unreported[dir][r].bytes += uint64(size)
	q.dropsPending.Store(true)
}

// pushSend queues a copy of p for sending, dropping the oldest datagram
// waiting if the queue is full. It returns false, queuing nothing, once
// the connection closed.
func (q *datagramQueue) pushSend(p []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	if len(q.send) >= q.limit {
		q.dropLocked(dgSend, datagramDropQueueFull, len(q.send[0]))
		q.send[0] = nil
		q.send = q.send[1:]
	}
	q.pushSendLocked(p)
	return true
}

// tryPushSend queues a copy of p for sending if the queue has room. It
// returns whether it did, and if not a channel closed when there may be
// room, or nil once the connection closed.
func (q *datagramQueue) tryPushSend(p []byte) (bool, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false, nil
	}
	if len(q.send) >= q.limit {
		return false, waitChannel(&q.sendWait)
	}
	q.pushSendLocked(p)
	return true, nil
}

func (q *datagramQueue) pushSendLocked(p []byte) {
	q.send = append(q.send, append([]byte(nil), p...))
	q.nSend.Store(int32(len(q.send)))
}

// peekSend returns the oldest datagram waiting to be sent.
func (q *datagramQueue) peekSend() ([]byte, bool) {
	if q.nSend.Load() == 0 {
		return nil, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.send) == 0 {
		return nil, false
	}
	return q.send[0], true
}

// popSend removes the oldest datagram waiting to be sent: it was sent, or
// it is dropped for reason r (datagramDropNone: not dropped).
func (q *datagramQueue) popSend(r datagramDropIndex) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.send) > 0 {
		if r != datagramDropNone {
			q.dropLocked(dgSend, r, len(q.send[0]))
		}
		q.send[0] = nil
		q.send = q.send[1:]
	}
	q.nSend.Store(int32(len(q.send)))
	notifyWaiters(&q.sendWait)
}

// hasSend reports whether datagrams wait to be sent.
func (q *datagramQueue) hasSend() bool {
	return q.nSend.Load() > 0
}

// closeSend drops the datagrams still waiting to be sent when the
// connection closes, and refuses more.
func (q *datagramQueue) closeSend() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for i, p := range q.send {
		q.dropLocked(dgSend, datagramDropClosed, len(p))
		q.send[i] = nil
	}
	q.send = nil
	q.nSend.Store(0)
	notifyWaiters(&q.sendWait)
}

// pushReceived queues a copy of a received datagram for the application,
// dropping the oldest unread one if the queue is full.
func (q *datagramQueue) pushReceived(p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.received) >= q.limit {
		q.dropLocked(dgRecv, datagramDropQueueFull, len(q.received[0]))
		q.received[0] = nil
		q.received = q.received[1:]
	}
	q.received = append(q.received, append([]byte(nil), p...))
	notifyWaiters(&q.recvWait)
}

// popReceived returns the oldest received datagram, or a channel closed
// when one arrives.
func (q *datagramQueue) popReceived() ([]byte, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.received) == 0 {
		return nil, waitChannel(&q.recvWait)
	}
	p := q.received[0]
	q.received[0] = nil
	q.received = q.received[1:]
	return p, nil
}

// dropped returns how many datagrams were dropped in each direction.
func (q *datagramQueue) dropped() (send, recv uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for r := range q.drops[dgSend] {
		send += q.drops[dgSend][r].n
		recv += q.drops[dgRecv][r].n
	}
	return send, recv
}

// reportDrops hands the drops not reported yet to report, one call per
// direction and reason with any, outside the lock. The connection
// goroutine calls it; it does nothing, without locking, when there are
// none.
func (q *datagramQueue) reportDrops(report func(DatagramDrop)) {
	if !q.dropsPending.Load() {
		return
	}
	q.mu.Lock()
	q.dropsPending.Store(false)
	u := q.unreported
	q.unreported = [2][numDatagramDropReasons]datagramDropCount{}
	q.mu.Unlock()
	if report == nil {
		return
	}
	for dir := range u {
		for r, d := range u[dir] {
			if d.n > 0 {
				report(DatagramDrop{Sent: dir == dgSend, Reason: datagramDropReasons[r], Count: int(d.n), Bytes: int(d.bytes)})
			}
		}
	}
}
