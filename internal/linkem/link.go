package linkem

import (
	"math/rand/v2"
	"time"
)

// Packet is one IP packet crossing a Link. Packets come from Link.Alloc
// and go back with Link.Free, so that a forwarding loop allocates nothing
// per packet once the pool has grown.
type Packet struct {
	// Data holds the packet; its capacity is the link's PacketSize.
	Data []byte
}

// LinkOptions are the fixed settings of a Link.
type LinkOptions struct {
	// Seed seeds the link's random decisions. Two links with the same
	// seed and parameters that are handed the same packets at the same
	// times make the same decisions.
	Seed uint64
	// MaxPackets bounds the packets the link holds at once (waiting for
	// the serialiser or in the delay line); a packet arriving at a full
	// link is dropped and counted in DroppedLimit. Default 32,768.
	MaxPackets int
	// PacketSize is the capacity of the packets Alloc returns. Default
	// 1,500, the default MTU.
	PacketSize int
}

// DefaultMaxPackets is the default of LinkOptions.MaxPackets.
const DefaultMaxPackets = 32768

// LinkStats counts what a link did with the packets it was handed.
type LinkStats struct {
	// Arrived and ArrivedBytes count the packets handed to Push.
	Arrived, ArrivedBytes uint64
	// Duplicated counts the extra copies made (Params.Duplicate).
	Duplicated uint64
	// DroppedQueue counts tail drops at a full queue, DroppedLoss random
	// losses (Params.Loss), DroppedBurst the Gilbert-Elliott channel's
	// losses (Params.GE) and DroppedLimit the packets dropped because the
	// link held MaxPackets.
	DroppedQueue, DroppedLoss, DroppedBurst, DroppedLimit uint64
	// Reordered counts the packets held back by Params.Reorder.
	Reordered uint64
	// Delivered and DeliveredBytes count the packets Pop returned.
	Delivered, DeliveredBytes uint64
	// Held is the number of packets in the delay line now.
	Held int
}

// Link is one direction of the emulated link, as a state machine that is
// handed time: Push gives it a packet that arrives at now, Pop takes the
// packets whose time has come, and NextDeadline tells when the next one is
// due. It never reads the clock and starts no goroutine; every random
// decision comes from generators seeded with LinkOptions.Seed, one per
// impairment, so that enabling one impairment leaves the decisions of the
// others unchanged.
//
// The times passed to a Link must not go backwards. A Link is not safe for
// concurrent use.
type Link struct {
	p   Params
	opt LinkOptions

	dupRng, lossRng, geRng, jitRng, reoRng *rand.Rand
	geBad                                  bool

	ser    serialiser
	jitter jitterProcess

	line     delayLine
	seq      uint64
	fifoLast time.Time // delivery time of the last in-order packet

	free  []*Packet
	stats LinkStats
}

// Random streams, one per impairment.
const (
	streamDup = iota + 1
	streamLoss
	streamGE
	streamJitter
	streamReorder
)

// NewLink returns a link with the given parameters, which must be valid
// (Params.Validate).
func NewLink(p Params, opt LinkOptions) *Link {
	if opt.MaxPackets <= 0 {
		opt.MaxPackets = DefaultMaxPackets
	}
	if opt.PacketSize <= 0 {
		opt.PacketSize = 1500
	}
	stream := func(n uint64) *rand.Rand { return rand.New(rand.NewPCG(opt.Seed, n)) }
	l := &Link{
		p: p, opt: opt,
		dupRng: stream(streamDup), lossRng: stream(streamLoss), geRng: stream(streamGE),
		jitRng: stream(streamJitter), reoRng: stream(streamReorder),
	}
	l.ser.init(opt.MaxPackets)
	return l
}

// Params returns the parameters in force.
func (l *Link) Params() Params { return l.p }

// SetParams changes the parameters from now on, which must be valid. The
// packets the link already holds keep the schedule they were given; the
// packets pushed from now on meet the new parameters, behind those already
// queued for the serialiser. The link stays in order (unless reordering is
// asked for): after a reduction of the delay, new packets wait for the
// older ones.
func (l *Link) SetParams(now time.Time, p Params) {
	if p.Jitter != l.p.Jitter {
		l.jitter = jitterProcess{}
	}
	l.p = p
}

// Stats returns the counters.
func (l *Link) Stats() LinkStats {
	s := l.stats
	s.Held = l.line.len()
	return s
}

// Alloc returns an empty packet with a capacity of PacketSize bytes, from
// the pool when it has one.
func (l *Link) Alloc() *Packet {
	if n := len(l.free); n > 0 {
		p := l.free[n-1]
		l.free = l.free[:n-1]
		return p
	}
	return &Packet{Data: make([]byte, 0, l.opt.PacketSize)}
}

// Free returns a packet to the pool once its holder is done with it.
func (l *Link) Free(p *Packet) {
	p.Data = p.Data[:0]
	l.free = append(l.free, p)
}

// Push hands the link a packet that arrives at now. The link keeps it
// until Pop returns it, or frees it at once if the packet is lost.
func (l *Link) Push(now time.Time, p *Packet) {
	l.stats.Arrived++
	l.stats.ArrivedBytes += uint64(len(p.Data))
	if l.p.Duplicate > 0 && l.dupRng.Float64() < l.p.Duplicate {
		c := l.Alloc()
		c.Data = append(c.Data[:0], p.Data...)
		l.stats.Duplicated++
		l.admit(now, p)
		l.admit(now, c)
		return
	}
	l.admit(now, p)
}

// admit takes one packet (or copy) through the stages of the link.
func (l *Link) admit(now time.Time, p *Packet) {
	if l.line.len() >= l.opt.MaxPackets {
		l.stats.DroppedLimit++
		l.Free(p)
		return
	}
	// Queue and serialiser.
	leave := now
	if l.p.Rate > 0 {
		var ok, full bool
		leave, ok, full = l.ser.admit(now, len(p.Data), l.p.Rate, l.p.QueueBytes())
		if !ok {
			if full {
				l.stats.DroppedLimit++
			} else {
				l.stats.DroppedQueue++
			}
			l.Free(p)
			return
		}
	}
	// Loss on the wire: a lost packet has used its time on the link.
	if l.p.Loss > 0 && l.lossRng.Float64() < l.p.Loss {
		l.stats.DroppedLoss++
		l.Free(p)
		return
	}
	if l.p.GE.Enabled() && l.geLost() {
		l.stats.DroppedBurst++
		l.Free(p)
		return
	}
	// Propagation.
	at := leave.Add(l.p.Delay)
	inOrder := true
	if j := l.p.Jitter; j > 0 {
		var v time.Duration
		if l.p.JitterReorder {
			v = time.Duration((2*l.jitRng.Float64() - 1) * float64(j))
			inOrder = false
		} else {
			v = l.jitter.at(leave, j, l.jitRng)
		}
		at = at.Add(v)
		if at.Before(leave) {
			at = leave
		}
	}
	if l.p.Reorder > 0 && l.reoRng.Float64() < l.p.Reorder {
		at = at.Add(l.p.reorderDelay())
		inOrder = false
		l.stats.Reordered++
	}
	if inOrder {
		if at.Before(l.fifoLast) {
			at = l.fifoLast
		}
		l.fifoLast = at
	}
	l.seq++
	l.line.push(lineEntry{at: at, seq: l.seq, p: p})
}

// geLost moves the Gilbert-Elliott channel by one packet and reports
// whether it loses that packet.
func (l *Link) geLost() bool {
	g := l.p.GE
	if l.geBad {
		if l.geRng.Float64() < g.R {
			l.geBad = false
		}
	} else if l.geRng.Float64() < g.P {
		l.geBad = true
	}
	loss := g.LossGood
	if l.geBad {
		loss = g.LossBad
	}
	return loss >= 1 || (loss > 0 && l.geRng.Float64() < loss)
}

// Pop returns the next packet due at or before now and the time it was
// due, or nil if none is. The caller owns the packet and gives it back
// with Free.
func (l *Link) Pop(now time.Time) (*Packet, time.Time) {
	e, ok := l.line.peek()
	if !ok || e.at.After(now) {
		return nil, time.Time{}
	}
	l.line.pop()
	l.stats.Delivered++
	l.stats.DeliveredBytes += uint64(len(e.p.Data))
	return e.p, e.at
}

// NextDeadline returns when the next packet is due, and false if the link
// holds none.
func (l *Link) NextDeadline() (time.Time, bool) {
	e, ok := l.line.peek()
	return e.at, ok
}
