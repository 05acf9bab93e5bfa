package netsim

import (
	"encoding/binary"
	"time"
)

// Test endpoints. Data payloads start with a 24-byte header: sequence
// number, send time (nanoseconds since Epoch) and a check word
// ^(seq ^ sendTime); the rest is zero, so any corruption is detected.

const tsHdr = 24

func tsPut(b []byte, seq uint64, sent time.Time) {
	ns := uint64(sent.Sub(simEpoch))
	binary.BigEndian.PutUint64(b[0:], seq)
	binary.BigEndian.PutUint64(b[8:], ns)
	binary.BigEndian.PutUint64(b[16:], ^(seq ^ ns))
}

// tsGet parses a header; ok is false if the payload was corrupted.
func tsGet(b []byte) (seq uint64, sent time.Time, ok bool) {
	if len(b) < tsHdr {
		return 0, time.Time{}, false
	}
	seq = binary.BigEndian.Uint64(b[0:])
	ns := binary.BigEndian.Uint64(b[8:])
	ok = binary.BigEndian.Uint64(b[16:]) == ^(seq ^ ns)
	for _, c := range b[tsHdr:] {
		if c != 0 {
			ok = false
			break
		}
	}
	return seq, simEpoch.Add(time.Duration(ns)), ok
}

// tsCBR sends size-byte datagrams to to every interval from start (zero:
// from when it is attached) until stop (zero: forever).
type tsCBR struct {
	to          Addr
	size        int
	interval    time.Duration
	ecn         ECN
	start, stop time.Time

	started bool
	next    time.Time
	seq     uint64
	buf     []byte
}

func newCBR(to Addr, size int, bitsPerSecond int64) *tsCBR {
	return &tsCBR{to: to, size: size, interval: time.Duration(int64(size) * 8 * int64(time.Second) / bitsPerSecond)}
}

func (c *tsCBR) HandleDatagram(time.Time, *Datagram) {}
func (c *tsCBR) HandleTimeout(time.Time)             {}

func (c *tsCBR) PollTransmit(now time.Time, out *Outbox) {
	if !c.started {
		c.started = true
		c.next = now
		if c.start.After(now) {
			c.next = c.start
		}
		c.buf = make([]byte, c.size)
	}
	for !c.next.After(now) && (c.stop.IsZero() || c.next.Before(c.stop)) {
		tsPut(c.buf, c.seq, c.next)
		out.Send(c.to, c.buf, c.ecn)
		c.seq++
		c.next = c.next.Add(c.interval)
	}
}

func (c *tsCBR) NextDeadline() time.Time {
	if !c.stop.IsZero() && !c.next.Before(c.stop) {
		return time.Time{}
	}
	return c.next
}

// tsSink counts what it receives.
type tsSink struct {
	trackDups bool // needs memory proportional to the sequence numbers
	record    bool // keep every arrival

	packets, bytes int64
	corrupted      int64
	ecn            [4]int64
	reordered      int64 // arrivals with a sequence number below the highest seen
	dups           int64
	maxSeq         uint64
	delayMax       time.Duration
	seen           []uint64
	arrivals       []tsArrival
}

type tsArrival struct {
	seq     uint64
	sent    time.Time
	arrived time.Time
	ecn     ECN
	src     Addr
	dst     Addr
}

func (s *tsSink) HandleDatagram(now time.Time, d *Datagram) {
	seq, sent, ok := tsGet(d.Payload)
	s.packets++
	s.bytes += int64(len(d.Payload))
	s.ecn[d.ECN&3]++
	if !ok {
		s.corrupted++
		return
	}
	if seq < s.maxSeq {
		s.reordered++
	}
	s.maxSeq = max(s.maxSeq, seq)
	s.delayMax = max(s.delayMax, now.Sub(sent))
	if s.trackDups {
		for uint64(len(s.seen)) <= seq/64 {
			s.seen = append(s.seen, 0)
		}
		if s.seen[seq/64]&(1<<(seq%64)) != 0 {
			s.dups++
		}
		s.seen[seq/64] |= 1 << (seq % 64)
	}
	if s.record {
		s.arrivals = append(s.arrivals, tsArrival{seq, sent, now, d.ECN, d.Src, d.Dst})
	}
}

func (s *tsSink) HandleTimeout(time.Time)         {}
func (s *tsSink) PollTransmit(time.Time, *Outbox) {}
func (s *tsSink) NextDeadline() time.Time         { return time.Time{} }

// tsEcho sends every datagram back to its source with the same ECN
// codepoint (CE as ECT(0)), truncated to max bytes if max > 0. Replies wait in a
// reusable arena until PollTransmit.
type tsEcho struct {
	max     int
	to      []Addr
	ecn     []ECN
	ends    []int
	arena   []byte
	handled int64
}

func (e *tsEcho) HandleDatagram(now time.Time, d *Datagram) {
	p := d.Payload
	if e.max > 0 && len(p) > e.max {
		p = p[:e.max]
	}
	e.handled++
	e.to = append(e.to, d.Src)
	e.ecn = append(e.ecn, d.ECN)
	e.arena = append(e.arena, p...)
	e.ends = append(e.ends, len(e.arena))
}

func (e *tsEcho) HandleTimeout(time.Time) {}

func (e *tsEcho) PollTransmit(now time.Time, out *Outbox) {
	start := 0
	for i, to := range e.to {
		ecn := e.ecn[i]
		if ecn == CE {
			ecn = ECT0
		}
		out.Send(to, e.arena[start:e.ends[i]], ecn)
		start = e.ends[i]
	}
	e.to, e.ecn, e.ends, e.arena = e.to[:0], e.ecn[:0], e.ends[:0], e.arena[:0]
}

func (e *tsEcho) NextDeadline() time.Time { return time.Time{} }

// tsPinger sends count pings of size bytes to to, one at a time, each gap
// after the previous pong, and records the round-trip times.
type tsPinger struct {
	to    Addr
	size  int
	count int
	gap   time.Duration

	sent    int
	waiting bool
	next    time.Time
	rtts    []time.Duration
	buf     []byte
}

func (p *tsPinger) HandleDatagram(now time.Time, d *Datagram) {
	_, sent, _ := tsGet(d.Payload)
	p.rtts = append(p.rtts, now.Sub(sent))
	p.waiting = false
	p.next = now.Add(p.gap)
}

func (p *tsPinger) HandleTimeout(time.Time) {}

func (p *tsPinger) PollTransmit(now time.Time, out *Outbox) {
	if p.waiting || p.sent >= p.count || now.Before(p.next) {
		return
	}
	if p.buf == nil {
		p.buf = make([]byte, p.size)
	}
	tsPut(p.buf, uint64(p.sent), now)
	out.Send(p.to, p.buf, NotECT)
	p.sent++
	p.waiting = true
}

func (p *tsPinger) NextDeadline() time.Time {
	if p.waiting || p.sent >= p.count {
		return time.Time{}
	}
	return p.next
}

// tsTimers asks to be woken at each of its deadlines in turn and records
// when HandleTimeout and PollTransmit were called.
type tsTimers struct {
	deadlines []time.Time
	fired     []time.Time
	polls     []time.Time
}

func (t *tsTimers) HandleDatagram(time.Time, *Datagram) {}

func (t *tsTimers) HandleTimeout(now time.Time) {
	t.fired = append(t.fired, now)
	for len(t.deadlines) > 0 && !t.deadlines[0].After(now) {
		t.deadlines = t.deadlines[1:]
	}
}

func (t *tsTimers) PollTransmit(now time.Time, _ *Outbox) { t.polls = append(t.polls, now) }

func (t *tsTimers) NextDeadline() time.Time {
	if len(t.deadlines) == 0 {
		return time.Time{}
	}
	return t.deadlines[0]
}

// tsOnce sends one datagram of each size to to at its first PollTransmit,
// numbered from 0, with ECN codepoint ecn.
type tsOnce struct {
	to    Addr
	sizes []int
	ecn   ECN
	done  bool
}

func (o *tsOnce) HandleDatagram(time.Time, *Datagram) {}
func (o *tsOnce) HandleTimeout(time.Time)             {}

func (o *tsOnce) PollTransmit(now time.Time, out *Outbox) {
	if o.done {
		return
	}
	o.done = true
	for i, n := range o.sizes {
		b := make([]byte, n)
		tsPut(b, uint64(i), now)
		out.Send(o.to, b, o.ecn)
	}
}

func (o *tsOnce) NextDeadline() time.Time { return time.Time{} }

// tsCounter counts datagrams and bytes and looks at nothing else.
type tsCounter struct{ packets, bytes int64 }

func (c *tsCounter) HandleDatagram(_ time.Time, d *Datagram) {
	c.packets++
	c.bytes += int64(len(d.Payload))
}
func (c *tsCounter) HandleTimeout(time.Time)         {}
func (c *tsCounter) PollTransmit(time.Time, *Outbox) {}
func (c *tsCounter) NextDeadline() time.Time         { return time.Time{} }
