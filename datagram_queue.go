package quic

import (
	"sync"
	"sync/atomic"
)

// datagramQueue holds DATAGRAM payloads (RFC 9221) between the
// application and the connection goroutine, in both directions. Both
// queues are bounded by datagramQueueLen; when full, the oldest entry is
// dropped, since datagrams are unreliable by contract.
type datagramQueue struct {
	mu       sync.Mutex
	send     [][]byte
	nSend    atomic.Int32 // len(send), for the connection goroutine to look without the lock
	received [][]byte
	recvWait chan struct{} // made for a waiter, closed and cleared when a datagram arrives
	dropped  uint64
}

// pushSend queues a copy of p for sending.
func (q *datagramQueue) pushSend(p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.send) >= datagramQueueLen {
		q.send = q.send[1:]
		q.dropped++
	}
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

// popSend removes the oldest datagram waiting to be sent.
func (q *datagramQueue) popSend() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.send) > 0 {
		q.send[0] = nil
		q.send = q.send[1:]
	}
	q.nSend.Store(int32(len(q.send)))
}

// hasSend reports whether datagrams wait to be sent.
func (q *datagramQueue) hasSend() bool {
	return q.nSend.Load() > 0
}

// pushReceived queues a copy of a received datagram for the application.
func (q *datagramQueue) pushReceived(p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.received) >= datagramQueueLen {
		q.received = q.received[1:]
		q.dropped++
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
