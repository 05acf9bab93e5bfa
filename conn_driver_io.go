package quic

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/quicstack/quic/wire"
)

// The connection's side of the socket layer: the queue the Transport's
// read loop fills, and the batches the connection's goroutine sends.
//
// Profiles of bulk transfer shaped this file: a channel operation and a
// clock reading per datagram cost more than parsing it, so datagrams
// queue under a mutex and the goroutine takes all of them at once, with
// one clock reading; and the packets of one wakeup leave in one call to
// the socket layer (one sendmmsg, with GSO one segment run per message).

// maxInboundQueued bounds the buffer memory that datagrams waiting for a
// connection's goroutine hold (2048 lone datagrams, or 64 GRO runs or
// datagrams of up to 64 KiB); beyond it they are dropped (and counted) so
// that a slow connection never blocks the Transport's read loop and a peer
// cannot make it hold more. At 10 Gbit/s it fills in about 3 ms: 1 MiB
// overflowed whenever the goroutine waited a millisecond for a CPU, and
// the losses held a loopback transfer to half its rate.
const maxInboundQueued = 4 << 20

// maxSendBurst and maxSendBurstBytes bound the datagrams sent per wakeup
// before the goroutine looks at its input again.
const (
	maxSendBurst      = txBatchLen
	maxSendBurstBytes = 256 << 10
)

// inboundQueue holds the datagrams routed to a connection. Its slices
// grow on demand, so an idle connection holds none.
type inboundQueue struct {
	mu     sync.Mutex
	q      []inboundDatagram
	queued int // bytes of buffers held by q
	closed bool
	spare  []inboundDatagram // the slice the goroutine last drained (its goroutine only)
}

// enqueue hands a datagram to the connection without blocking; it reports
// false if the queue was full and the datagram dropped. The first
// datagram of an empty queue wakes the goroutine. A connection that
// ended meanwhile passes it on (handOver).
func (c *Conn) enqueue(d inboundDatagram) bool {
	size := len(d.data)
	if d.buf != nil {
		size = cap(*d.buf)
	}
	q := &c.inbound
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		c.handOver(d)
		return true
	}
	if q.queued+size > maxInboundQueued {
		q.mu.Unlock()
		c.mu.Lock()
		c.dropped += uint64(datagramCount(len(d.data), int(d.segSize)))
		c.mu.Unlock()
		return false
	}
	wasEmpty := len(q.q) == 0
	q.q = append(q.q, d)
	q.queued += size
	q.mu.Unlock()
	if wasEmpty {
		c.wake()
	}
	return true
}

// handOver deals with a datagram for a connection whose goroutine ended
// since the caller looked it up: what is left of it in the closing or
// draining state answers (closed_conn.go), as the next lookup would find;
// without that, the connection is gone.
func (c *Conn) handOver(d inboundDatagram) {
	if cc := c.closedRec.Load(); cc != nil {
		cc.handle(datagramCount(len(d.data), int(d.segSize)), len(d.data), d.addrs.remote)
	} else {
		c.t.stats.countDrop(DropUnknownConnection)
	}
	if d.buf != nil {
		putPacketBuffer(d.buf)
	}
}

// drainInbound processes the datagrams queued so far, with one clock
// reading. Datagrams queued meanwhile wake the goroutine again.
func (c *Conn) drainInbound() {
	q := &c.inbound
	q.mu.Lock()
	batch := q.q
	if len(batch) == 0 {
		q.mu.Unlock()
		return
	}
	q.q, q.queued = q.spare[:0], 0
	q.mu.Unlock()
	now := time.Now()
	for i := range batch {
		c.handle(now, &batch[i])
		batch[i] = inboundDatagram{}
	}
	q.spare = batch[:0]
}

// datagramCount returns how many datagrams n bytes received as one run of
// segSize-byte datagrams (GRO; 0: one datagram) are.
func datagramCount(n, segSize int) int {
	if segSize <= 0 {
		return 1
	}
	return (n + segSize - 1) / segSize
}

// close makes enqueue refuse from now on, and drops what is queued after
// passing each datagram to left, if not nil.
func (q *inboundQueue) close(left func(*inboundDatagram)) {
	q.mu.Lock()
	q.closed = true
	batch := q.q
	q.q, q.spare = nil, nil
	q.mu.Unlock()
	for i := range batch {
		d := &batch[i]
		if left != nil {
			left(d)
		}
		if d.buf != nil {
			putPacketBuffer(d.buf)
		}
	}
}

// handle processes one queued datagram, or each of a GRO run.
func (c *Conn) handle(now time.Time, d *inboundDatagram) {
	if d.dst.IsValid() && c.state.role == wire.RoleServer {
		// A server answers from the address it was reached at; a client
		// lets the kernel choose, so that it follows route changes.
		c.srcAddr = d.dst
	}
	data := d.data
	seg := int(d.segSize)
	if seg == 0 {
		seg = len(data)
	}
	for len(data) > 0 {
		n := min(seg, len(data))
		c.state.handleDatagramOn(now, d.addrs, data[:n], d.ecn)
		data = data[n:]
	}
	if d.buf != nil {
		putPacketBuffer(d.buf)
	}
}

// flush sends what the state machine has to send now, in batches, and
// reports whether it stopped at the burst limit rather than for lack of
// something to send. A batch holds datagrams of one path: a datagram for
// another path (a probe, a PATH_RESPONSE) sends what the batch holds
// first.
func (c *Conn) flush(now time.Time) (more bool) {
	st := c.state
	c.routeConnIDs(now)
	// A large batch when the last flush sent more than a small one
	// holds; a small one fills up and goes, and a large one takes the
	// rest.
	b := getTxBatch(c.bulk, st.maxDatagramSize)
	var path pathAddrs
	burst, count := 0, 0
	defer func() { c.bulk = count > txSmallLen }()
	for i := 0; ; i++ {
		if i == maxSendBurst || burst >= maxSendBurstBytes {
			more = true
			break
		}
		if b.n > 0 && b.room() < st.maxDatagramSize {
			c.send(now, b, path)
			if !b.large {
				putTxBatch(b)
				b = getTxBatch(true, st.maxDatagramSize)
			}
		}
		d, a := st.pollTransmitOn(now, b.next())
		if d == nil && st.localIDs.eventsPending() {
			// Polling issued IDs (spare ones after the handshake): once
			// routed, their frames go in this burst.
			c.routeConnIDs(now)
			continue
		}
		if d == nil {
			// One clock reading serves a burst; when the pacer's
			// allowance ran out at that reading, a fresh one may show
			// it refilled meanwhile (at high rates it refills within
			// microseconds), which keeps GSO batches full.
			if !st.pacingLimited(now) {
				break
			}
			now = time.Now()
			if st.pacingLimited(now) {
				break
			}
			continue
		}
		if b.n > 0 && a != path {
			c.send(now, b, path) // commit below copies d to the batch's start
		}
		path = a
		// Only a path MTU probe is larger than the maximum datagram size.
		b.commit(d, st.sendECN, len(d) > st.maxDatagramSize)
		burst += len(d)
		count++
	}
	if b.n > 0 {
		c.send(now, b, path)
	}
	putTxBatch(b)
	return more
}

// send hands b's datagrams, all for path a, to the socket of a's local
// address and empties b. The peer's net.Addr is kept from one batch to
// the next: it changes only with the path.
func (c *Conn) send(now time.Time, b *txBatch, a pathAddrs) {
	t, addr, ap, src := c.sendTarget(a)
	// UDP send errors are transient; loss recovery copes. A connection
	// that follows the network looks at it again.
	if err := t.sock.writeBatch(b, addr, ap, src); err != nil && c.follow != nil {
		c.follow.writeFailed(err)
	}
	if b.tooBig > 0 {
		c.state.handleSendTooBig(now, b.tooBig)
	}
	b.reset()
}

// sendTarget returns where datagrams on the path a go: the Transport
// whose socket sends them, the peer's address (ap, if valid, is the same)
// and the local address to send from (if valid).
func (c *Conn) sendTarget(a pathAddrs) (t *Transport, addr net.Addr, ap netip.AddrPort, src netip.Addr) {
	t, addr, src = c.t, c.remote, c.srcAddr
	if a.remote.IsValid() {
		if a.remote != c.sendTo {
			c.sendTo, c.sendToAddr = a.remote, net.UDPAddrFromAddrPort(a.remote)
		}
		t, addr, ap = c.transportFor(a.local), c.sendToAddr, a.remote
	} else {
		ap, _ = udpAddrPort(addr)
	}
	if t != c.t {
		src = netip.Addr{} // the source pinned by packet info is the first socket's
	}
	return t, addr, ap, src
}

// udpAddrPort returns the address of a *net.UDPAddr without allocating.
func udpAddrPort(a net.Addr) (netip.AddrPort, bool) {
	if u, ok := a.(*net.UDPAddr); ok {
		return u.AddrPort(), true
	}
	return netip.AddrPort{}, false
}

// pacingLimited reports whether the pacer, and not the congestion window,
// holds packets back at now.
func (c *connState) pacingLimited(now time.Time) bool {
	return c.closeState == stateActive && c.sent.BytesInFlight() < c.cc.CongestionWindow() &&
		c.pacer.TimeUntilSend(now, c.cc.PacingRate()).After(now)
}
