package netsim

import (
	"math/rand/v2"
	"time"
)

// LinkConfig describes one direction of a path. The zero value is an
// ideal link: unlimited bandwidth, no delay, no queue, no impairments.
type LinkConfig struct {
	// Name appears in traces; optional.
	Name string

	// Bandwidth is the serialization rate in bits per second. 0 means
	// unlimited: no serialization delay and no queue.
	Bandwidth int64
	// Delay is the one-way propagation delay, added after serialization.
	Delay time.Duration
	// Overhead is added to each payload's length for serialization,
	// queue accounting and byte statistics, for example 28 for the IPv4
	// and UDP headers. Default 0.
	Overhead int

	// QueueBytes and QueuePackets limit the drop-tail queue in front of
	// the link (the datagram being serialized counts as queued). A
	// datagram that would exceed either limit is dropped. 0 means no
	// limit. Ignored without a Bandwidth.
	QueueBytes   int
	QueuePackets int

	// MTU is the largest payload, in bytes, the link carries; larger
	// datagrams are dropped. 0 means no limit.
	MTU int

	// LossProb is the probability that a datagram is lost on the wire,
	// after it has been serialized (a lost datagram still uses the
	// link's capacity).
	LossProb float64
	// ReorderProb is the probability that a datagram is held back for an
	// extra ReorderDelay, so that datagrams sent after it overtake it.
	ReorderProb  float64
	ReorderDelay time.Duration
	// DuplicateProb is the probability that a delivered datagram is
	// delivered twice (the copy arrives right after the original and
	// takes no capacity).
	DuplicateProb float64
	// CEProb is the probability that an ECT(0) or ECT(1) datagram is
	// marked CE.
	CEProb float64
	// CEThresholdBytes, if positive, makes the queue mark an arriving
	// ECT(0) or ECT(1) datagram CE when the bytes already queued are at
	// least this many (threshold marking on the instantaneous queue, as
	// DCTCP-style AQMs do). Not-ECT datagrams are never marked.
	CEThresholdBytes int
	// CorruptProb is the probability that one byte of a datagram's
	// payload is changed to a different value.
	CorruptProb float64

	// Seed seeds the link's random generator (PCG, math/rand/v2). 0
	// derives the seed from the Network's seed and the order in which
	// links were created. Random numbers are drawn only for the
	// impairments whose probability is positive.
	Seed uint64

	// StatsInterval is the width of the windows Link.StatsBetween works
	// with. 0 means DefaultStatsInterval. Read when the link is
	// created. A link keeps one window of about 130 bytes per interval,
	// from Epoch to its latest event (at most MaxStatsWindows).
	StatsInterval time.Duration
}

// A Link carries datagrams in one direction: a drop-tail queue, a
// serializer of Bandwidth bits per second, then Delay of propagation, with
// optional random loss, reordering, duplication, ECN marking, MTU limit
// and corruption. Create links with Network.NewLink or Network.Connect.
//
// A datagram is offered to the link when an endpoint sends it; queue,
// MTU and random decisions are all taken at that moment, so later
// configuration changes (SetConfig) do not affect datagrams already on
// the link.
type Link struct {
	net   *Network
	cfg   LinkConfig
	rng   *rand.Rand
	index int

	// Serializer: busyUntil is when the last queued datagram finishes
	// serializing; busyRem carries the remainder of the division by the
	// bandwidth so that rounding never accumulates.
	busyUntil   int64
	busyRem     int64
	queue       simRing[linkQueued] // datagrams not yet fully serialized
	queuedBytes int

	// flight holds datagrams whose arrival times are in non-decreasing
	// order (the common case), so that the Sim's heap holds only the
	// head; datagrams that arrive earlier than the last one (reordered,
	// or after Delay shrank) go to the heap on their own.
	flight   simRing[linkFlight]
	inFlight int // queued or propagating, flight and heap together

	created int64
	stats   LinkStats
	series  linkSeries
}

type linkQueued struct {
	depart int64
	size   int
}

type linkFlight struct {
	at  int64
	seq uint64
	d   *Datagram
}

// linkSeedStream is the PCG stream used for explicitly seeded links.
const linkSeedStream = 0x6e657473696d // "netsim"

func newLink(n *Network, index int, cfg LinkConfig) *Link {
	l := &Link{net: n, index: index, created: n.sim.now}
	l.series.interval = int64(cfg.StatsInterval)
	if l.series.interval <= 0 {
		l.series.interval = int64(DefaultStatsInterval)
	}
	l.setConfig(cfg, true)
	return l
}

// Name returns the configured name.
func (l *Link) Name() string { return l.cfg.Name }

// Config returns the link's configuration.
func (l *Link) Config() LinkConfig { return l.cfg }

// SetConfig replaces the configuration for datagrams entering the link
// from now on; datagrams already queued or in flight keep their schedule.
// The random generator is reseeded only if Seed changes. StatsInterval
// cannot change.
func (l *Link) SetConfig(cfg LinkConfig) { l.setConfig(cfg, false) }

func (l *Link) setConfig(cfg LinkConfig, first bool) {
	if first || cfg.Seed != l.cfg.Seed {
		if cfg.Seed != 0 {
			l.rng = rand.New(rand.NewPCG(cfg.Seed, linkSeedStream))
		} else {
			l.rng = rand.New(rand.NewPCG(l.net.seed, uint64(l.index)))
		}
	}
	if cfg.Bandwidth != l.cfg.Bandwidth {
		l.busyRem = 0 // a remainder in units of the old bandwidth
	}
	cfg.StatsInterval = time.Duration(l.series.interval)
	l.cfg = cfg
}

// Stats returns the totals since the link was created; Duration is the
// simulated time since then.
func (l *Link) Stats() LinkStats {
	s := l.stats
	s.Duration = time.Duration(l.net.sim.now - l.created)
	return s
}

// StatsBetween returns the statistics of the windows from from to to,
// both rounded down to a multiple of StatsInterval (windows are aligned
// to Epoch). For example, with the default interval,
// StatsBetween(Epoch().Add(5*time.Second), Epoch().Add(30*time.Second))
// covers exactly seconds 5 to 30.
func (l *Link) StatsBetween(from, to time.Time) LinkStats {
	return l.series.between(l.net.sim.ns(from), l.net.sim.ns(to))
}

// Windows returns the statistics of each StatsInterval-wide window from
// from to to (rounded as in StatsBetween), in order, for example to plot
// throughput over time.
func (l *Link) Windows(from, to time.Time) []LinkStats {
	return l.series.windows(l.net.sim.ns(from), l.net.sim.ns(to))
}

// Utilization returns the fraction of the link's current Bandwidth used by
// delivered bytes between from and to (rounded as in StatsBetween), or 0
// for a link without a Bandwidth.
func (l *Link) Utilization(from, to time.Time) float64 {
	s := l.StatsBetween(from, to)
	if l.cfg.Bandwidth <= 0 || s.Duration <= 0 {
		return 0
	}
	return float64(s.DeliveredBytes) * 8 / (float64(l.cfg.Bandwidth) * s.Duration.Seconds())
}

// Queued returns the datagrams and bytes in the link's queue now (the one
// being serialized included).
func (l *Link) Queued() (packets, bytes int) {
	l.drain(l.net.sim.now)
	return l.queue.len(), l.queuedBytes
}

// InFlight returns the number of datagrams on the link: queued or
// propagating.
func (l *Link) InFlight() int { return l.inFlight }

// drain forgets the datagrams that finished serializing by now.
func (l *Link) drain(now int64) {
	for l.queue.len() > 0 && l.queue.front().depart <= now {
		l.queuedBytes -= l.queue.pop().size
	}
}

// enqueue offers d to the link at time now; the link owns d from here.
func (l *Link) enqueue(now int64, d *Datagram) {
	cfg := &l.cfg
	size := len(d.Payload) + cfg.Overhead
	d.wire = size
	b := l.series.at(now)
	l.stats.OfferedPackets++
	l.stats.OfferedBytes += int64(size)
	b.OfferedPackets++
	b.OfferedBytes += int64(size)

	if cfg.MTU > 0 && len(d.Payload) > cfg.MTU {
		l.stats.DroppedMTU++
		b.DroppedMTU++
		l.net.drop(TraceDropMTU, l, d)
		return
	}

	depart := now
	if cfg.Bandwidth > 0 {
		l.drain(now)
		if (cfg.QueueBytes > 0 && l.queuedBytes+size > cfg.QueueBytes) ||
			(cfg.QueuePackets > 0 && l.queue.len() >= cfg.QueuePackets) {
			l.stats.DroppedQueue++
			b.DroppedQueue++
			l.net.drop(TraceDropQueue, l, d)
			return
		}
		ahead := l.queuedBytes
		start := l.busyUntil
		if now > start {
			start = now
			l.busyRem = 0 // the serializer was idle
		}
		bits := int64(size)*8*int64(time.Second) + l.busyRem
		depart = start + bits/cfg.Bandwidth
		l.busyRem = bits % cfg.Bandwidth
		l.busyUntil = depart
		l.queue.push(linkQueued{depart: depart, size: size})
		l.queuedBytes += size

		wait := time.Duration(start - now)
		l.stats.QueueDelaySum += wait
		l.stats.QueueDelayCount++
		l.stats.QueueDelayMax = max(l.stats.QueueDelayMax, wait)
		l.stats.MaxQueueBytes = max(l.stats.MaxQueueBytes, l.queuedBytes)
		b.QueueDelaySum += wait
		b.QueueDelayCount++
		b.QueueDelayMax = max(b.QueueDelayMax, wait)
		b.MaxQueueBytes = max(b.MaxQueueBytes, l.queuedBytes)

		if cfg.CEThresholdBytes > 0 && ahead >= cfg.CEThresholdBytes && d.ECN.IsECT() {
			d.ECN = CE
			l.stats.MarkedCE++
			b.MarkedCE++
		}
	}
	if cfg.CEProb > 0 && d.ECN.IsECT() && l.rng.Float64() < cfg.CEProb {
		d.ECN = CE
		l.stats.MarkedCE++
		b.MarkedCE++
	}
	if cfg.LossProb > 0 && l.rng.Float64() < cfg.LossProb {
		l.stats.DroppedLoss++
		b.DroppedLoss++
		l.net.drop(TraceDropLoss, l, d)
		return
	}
	if cfg.CorruptProb > 0 && l.rng.Float64() < cfg.CorruptProb && len(d.Payload) > 0 {
		i := l.rng.IntN(len(d.Payload))
		d.Payload[i] ^= byte(1 + l.rng.IntN(255))
		l.stats.Corrupted++
		b.Corrupted++
	}
	at := depart + int64(cfg.Delay)
	alone := false
	if cfg.ReorderProb > 0 && l.rng.Float64() < cfg.ReorderProb {
		at += int64(cfg.ReorderDelay)
		alone = true
		l.stats.Reordered++
		b.Reordered++
	}
	var dup *Datagram
	if cfg.DuplicateProb > 0 && l.rng.Float64() < cfg.DuplicateProb {
		dup = l.net.pool.clone(d)
		l.stats.Duplicated++
		b.Duplicated++
	}
	l.schedule(at, d, alone)
	if dup != nil {
		l.schedule(at, dup, alone)
	}
}

// schedule arranges for d to arrive at the far end at time at.
func (l *Link) schedule(at int64, d *Datagram, alone bool) {
	s := l.net.sim
	l.inFlight++
	if alone || (l.flight.len() > 0 && at < l.flight.back().at) {
		s.push(simEvent{at: at, target: l, d: d})
		return
	}
	seq := s.seq
	s.seq++
	l.flight.push(linkFlight{at: at, seq: seq, d: d})
	if l.flight.len() == 1 {
		s.events.push(simEvent{at: at, seq: seq, target: l})
	}
}

// simFire delivers d, or the head of flight if d is nil.
func (l *Link) simFire(d *Datagram) {
	if d == nil {
		d = l.flight.pop().d
		if l.flight.len() > 0 {
			f := l.flight.front()
			l.net.sim.events.push(simEvent{at: f.at, seq: f.seq, target: l})
		}
	}
	l.inFlight--
	now := l.net.sim.now
	size := int64(d.wire)
	b := l.series.at(now)
	l.stats.DeliveredPackets++
	l.stats.DeliveredBytes += size
	b.DeliveredPackets++
	b.DeliveredBytes += size
	l.net.deliver(l, d)
}
