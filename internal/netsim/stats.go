package netsim

import "time"

// LinkStats counts what happened on a Link, either in total (Link.Stats)
// or in a time window (Link.StatsBetween). Byte counts are wire bytes:
// payload plus the link's configured Overhead.
//
// Events that happen when a datagram enters the link (offered, drops,
// queueing delay, CE marks, reordering, duplication, corruption) count at
// that time; deliveries count at the time the datagram leaves the link.
type LinkStats struct {
	// Duration is the span of simulated time the counts cover.
	Duration time.Duration

	OfferedPackets, OfferedBytes     int64 // datagrams routed onto the link
	DeliveredPackets, DeliveredBytes int64 // datagrams that left the far end, duplicates included

	DroppedQueue int64 // drop-tail: the queue limit was reached
	DroppedLoss  int64 // random loss (LossProb)
	DroppedMTU   int64 // payload larger than the MTU

	MarkedCE   int64 // ECT datagrams changed to CE
	Reordered  int64 // datagrams given ReorderDelay
	Duplicated int64 // extra copies made
	Corrupted  int64 // datagrams with a byte changed

	// Queueing delay: the time from entering the link to the start of
	// serialization, one sample per datagram admitted to the queue of a
	// link with a Bandwidth.
	QueueDelaySum   time.Duration
	QueueDelayCount int64
	QueueDelayMax   time.Duration

	// MaxQueueBytes is the largest queue occupancy seen by an arriving
	// datagram, in bytes (the datagram being serialized included).
	MaxQueueBytes int
}

// Dropped returns the number of datagrams dropped for any reason.
func (s LinkStats) Dropped() int64 { return s.DroppedQueue + s.DroppedLoss + s.DroppedMTU }

// AvgQueueDelay returns the mean queueing delay, 0 without samples.
func (s LinkStats) AvgQueueDelay() time.Duration {
	if s.QueueDelayCount == 0 {
		return 0
	}
	return s.QueueDelaySum / time.Duration(s.QueueDelayCount)
}

// Throughput returns the delivered bits per second over Duration, 0 if
// Duration is 0.
func (s LinkStats) Throughput() float64 {
	if s.Duration <= 0 {
		return 0
	}
	return float64(s.DeliveredBytes) * 8 / s.Duration.Seconds()
}

func (s *LinkStats) add(o *LinkStats) {
	s.OfferedPackets += o.OfferedPackets
	s.OfferedBytes += o.OfferedBytes
	s.DeliveredPackets += o.DeliveredPackets
	s.DeliveredBytes += o.DeliveredBytes
	s.DroppedQueue += o.DroppedQueue
	s.DroppedLoss += o.DroppedLoss
	s.DroppedMTU += o.DroppedMTU
	s.MarkedCE += o.MarkedCE
	s.Reordered += o.Reordered
	s.Duplicated += o.Duplicated
	s.Corrupted += o.Corrupted
	s.QueueDelaySum += o.QueueDelaySum
	s.QueueDelayCount += o.QueueDelayCount
	s.QueueDelayMax = max(s.QueueDelayMax, o.QueueDelayMax)
	s.MaxQueueBytes = max(s.MaxQueueBytes, o.MaxQueueBytes)
}

// DefaultStatsInterval is the width of the time windows a Link keeps
// statistics for when LinkConfig.StatsInterval is 0.
const DefaultStatsInterval = 100 * time.Millisecond

// MaxStatsWindows bounds the per-window statistics a Link keeps: events
// after MaxStatsWindows intervals (7.3 hours at the default interval)
// count in the totals only.
const MaxStatsWindows = 1 << 18

// linkSeries is the per-window statistics of a link.
type linkSeries struct {
	interval int64 // nanoseconds
	bins     []LinkStats
	overflow LinkStats // where events past MaxStatsWindows go
}

// at returns the window that contains time t (nanoseconds since Epoch).
func (ls *linkSeries) at(t int64) *LinkStats {
	i := t / ls.interval
	if i >= MaxStatsWindows {
		return &ls.overflow
	}
	for int64(len(ls.bins)) <= i {
		ls.bins = append(ls.bins, LinkStats{})
	}
	return &ls.bins[i]
}

// between sums the windows from from to to, both rounded down to a
// multiple of the interval.
func (ls *linkSeries) between(from, to int64) LinkStats {
	i0, i1 := max(from, 0)/ls.interval, max(to, 0)/ls.interval
	var s LinkStats
	if i1 <= i0 {
		return s
	}
	s.Duration = time.Duration((i1 - i0) * ls.interval)
	for i := i0; i < i1 && i < int64(len(ls.bins)); i++ {
		s.add(&ls.bins[i])
	}
	return s
}

// windows returns each window from from to to, rounded as in between.
func (ls *linkSeries) windows(from, to int64) []LinkStats {
	i0, i1 := max(from, 0)/ls.interval, max(to, 0)/ls.interval
	if i1 <= i0 {
		return nil
	}
	w := make([]LinkStats, i1-i0)
	for i := range w {
		if j := i0 + int64(i); j < int64(len(ls.bins)) {
			w[i] = ls.bins[j]
		}
		w[i].Duration = time.Duration(ls.interval)
	}
	return w
}

// NetworkStats counts datagrams the Network could not put on a link or
// hand to an endpoint.
type NetworkStats struct {
	Sent        int64 // datagrams endpoints sent
	Unroutable  int64 // no route from the source host to the destination host
	NoEndpoint  int64 // arrived at an address with no endpoint (or a NAT binding that is gone)
	Outstanding int   // datagrams currently inside the network (queued or in flight)
}
