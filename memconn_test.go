package quic

import (
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// memPacket is one datagram in flight between two memConns.
type memPacket struct {
	data []byte
	from net.Addr
}

// memConn is an in-memory net.PacketConn, one end of a pair made by
// newMemConnPair. It uses only channels and timers, so inside a
// testing/synctest bubble a blocked ReadFrom is durably blocked and fake
// time advances past it.
type memConn struct {
	addr *net.UDPAddr
	in   chan memPacket // datagrams for this end
	peer *memConn
	// latency delays each datagram this end writes (0: delivered at once).
	latency time.Duration
	// flight holds the datagrams written with a latency, oldest first.
	flightMu sync.Mutex
	flight   []memPacket
	// blackhole, when set, makes this end's writes vanish, as if the
	// network between the two ends went away.
	blackhole atomic.Bool

	closeOnce sync.Once
	closed    chan struct{}

	mu           sync.Mutex
	readDeadline time.Time
	deadlineCh   chan struct{} // closed and replaced when the read deadline changes
}

const memConnQueueLen = 1024

// newMemConnPair returns two connected memConns: what one writes (to any
// address) the other reads, from the writer's address.
func newMemConnPair() (a, b *memConn) {
	a = newMemConn(&net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 4433})
	b = newMemConn(&net.UDPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 5544})
	a.peer, b.peer = b, a
	return a, b
}

func newMemConn(addr *net.UDPAddr) *memConn {
	return &memConn{
		addr:       addr,
		in:         make(chan memPacket, memConnQueueLen),
		closed:     make(chan struct{}),
		deadlineCh: make(chan struct{}),
	}
}

type memConnTimeoutError struct{}

func (memConnTimeoutError) Error() string   { return os.ErrDeadlineExceeded.Error() }
func (memConnTimeoutError) Timeout() bool   { return true }
func (memConnTimeoutError) Temporary() bool { return true }
func (memConnTimeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }

func (c *memConn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		c.mu.Lock()
		deadline, changed := c.readDeadline, c.deadlineCh
		c.mu.Unlock()
		select {
		case <-c.closed:
			return 0, nil, net.ErrClosed
		default:
		}
		var timer *time.Timer
		var timeout <-chan time.Time
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return 0, nil, memConnTimeoutError{}
			}
			timer = time.NewTimer(d)
			timeout = timer.C
		}
		var (
			pkt memPacket
			got bool
			err error
		)
		select {
		case pkt = <-c.in:
			got = true
		case <-c.closed:
			err = net.ErrClosed
		case <-timeout:
			err = memConnTimeoutError{}
		case <-changed:
			// The deadline changed: look at it again.
		}
		if timer != nil {
			timer.Stop()
		}
		if got {
			return copy(p, pkt.data), pkt.from, nil
		}
		if err != nil {
			return 0, nil, err
		}
	}
}

func (c *memConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	if c.blackhole.Load() {
		return len(p), nil
	}
	pkt := memPacket{data: append([]byte(nil), p...), from: c.addr}
	if c.latency <= 0 {
		c.deliver(pkt)
		return len(p), nil
	}
	// The datagrams of a burst are due at the same instant, and timers due
	// together fire in no particular order (under synctest, at random):
	// each timer delivers the oldest datagram in flight, so that the link
	// keeps their order, as a real path mostly does. A link that reordered
	// a burst at random made loss detection (RFC 9002, Section 6.1.1)
	// declare a good part of it lost.
	c.flightMu.Lock()
	c.flight = append(c.flight, pkt)
	c.flightMu.Unlock()
	time.AfterFunc(c.latency, func() {
		c.flightMu.Lock()
		defer c.flightMu.Unlock()
		next := c.flight[0]
		c.flight[0] = memPacket{}
		c.flight = c.flight[1:]
		c.deliver(next)
	})
	return len(p), nil
}

// deliver queues pkt at the peer.
func (c *memConn) deliver(pkt memPacket) {
	select {
	case c.peer.in <- pkt:
	default: // queue full: the datagram is lost, as on a real network
	}
}

func (c *memConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *memConn) LocalAddr() net.Addr { return c.addr }

func (c *memConn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline = t
	close(c.deadlineCh)
	c.deadlineCh = make(chan struct{})
	c.mu.Unlock()
	return nil
}

func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
