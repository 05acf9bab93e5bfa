package linkem

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Params describes one direction of the emulated link. The zero value is a
// perfect wire: no delay, no loss, no rate limit. A packet crosses the
// stages in this order (see the package documentation):
//
//	arrival → duplication → queue and serialiser (Rate, Queue) →
//	loss (Loss, GE) → propagation (Delay, Jitter) → reordering → delivery
type Params struct {
	// Delay is the fixed one-way propagation delay. At most MaxDelay.
	Delay time.Duration

	// Jitter varies the delay of each packet within Delay ± Jitter
	// (never below zero). By default the variation is a smooth random
	// process that never reorders packets: every 4×Jitter it heads for a
	// new target drawn uniformly from [-Jitter, +Jitter], moving linearly,
	// so that consecutive packets see nearly the same delay and a packet
	// never leaves before one sent earlier. With JitterReorder, each
	// packet draws its own variation, uniformly, and packets overtake one
	// another (the behaviour of Linux netem). At most MaxDelay.
	Jitter time.Duration
	// JitterReorder makes the jitter of each packet independent, which
	// reorders packets whose departures are closer than their jitter.
	JitterReorder bool

	// Loss is the probability in [0, 1] that a packet is lost at random,
	// independently of the others (Bernoulli loss).
	Loss float64
	// GE adds bursty loss (a Gilbert-Elliott channel). The zero value
	// loses nothing.
	GE GilbertElliott

	// Rate is the serialisation rate in bits per second of IP packet
	// bytes (the TUN devices carry no link-layer header): a packet of n
	// bytes occupies the link for n×8/Rate seconds, and packets wait in a
	// FIFO queue while the link is busy. 0 means unlimited: no
	// serialisation delay and no queue.
	Rate int64
	// Queue is how many bytes may wait for the serialiser, not counting
	// the packet being serialised; a packet that does not fit is dropped
	// (tail drop). 0 means the default: the bytes of 100 ms at Rate, and
	// at least 15,000 (ten 1,500-byte packets). Ignored without Rate.
	Queue int

	// Reorder is the probability in [0, 1] that a packet is held back by
	// ReorderDelay on top of its delay, so that the packets behind it
	// overtake it.
	Reorder float64
	// ReorderDelay is the extra delay of a reordered packet; 0 means
	// 10 ms. At most MaxDelay.
	ReorderDelay time.Duration

	// Duplicate is the probability in [0, 1] that a packet is sent twice.
	// The copy follows the original into the queue and meets the rest of
	// the link on its own (it may be lost when the original is not).
	Duplicate float64
}

// GilbertElliott is a two-state Markov loss channel (Gilbert 1960,
// Elliott 1963), the model of Linux netem's "loss gemodel p r 1-h 1-k":
// for each packet the channel first moves, from Good to Bad with
// probability P or from Bad to Good with probability R, then loses the
// packet with probability LossBad in the Bad state or LossGood in the Good
// state. The channel starts in Good.
//
// The stationary probability of Bad is P/(P+R), so the average loss rate
// is (P×LossBad + R×LossGood)/(P+R); a stay in Bad lasts 1/R packets on
// average. With LossBad 1 and LossGood 0 (Gilbert's original model, which
// Gilbert builds) a loss burst is exactly a stay in Bad.
//
// The zero value (P 0) never leaves Good and, with LossGood 0, loses
// nothing.
type GilbertElliott struct {
	P, R              float64
	LossBad, LossGood float64
}

// Gilbert returns the simple Gilbert channel (a Bad state that loses every
// packet, a Good state that loses none) with the given average loss rate
// in [0, 1) and mean loss burst length in packets (at least 1).
// A loss of 1 or more loses everything; a loss of 0 or less, or a burst
// shorter than 1, nothing.
func Gilbert(loss, meanBurst float64) GilbertElliott {
	if loss <= 0 || meanBurst < 1 || !finite(meanBurst) {
		return GilbertElliott{}
	}
	if loss >= 1 {
		return GilbertElliott{LossGood: 1}
	}
	r := 1 / meanBurst
	return GilbertElliott{P: loss * r / (1 - loss), R: r, LossBad: 1}
}

// Enabled reports whether the channel can lose a packet.
func (g GilbertElliott) Enabled() bool {
	return (g.P > 0 && g.LossBad > 0) || g.LossGood > 0
}

// MeanLoss returns the channel's average loss rate.
func (g GilbertElliott) MeanLoss() float64 {
	if g.P <= 0 {
		return g.LossGood
	}
	return (g.P*g.LossBad + g.R*g.LossGood) / (g.P + g.R)
}

// Limits of the parameters.
const (
	// MaxDelay bounds Delay, Jitter and ReorderDelay, so that the packets
	// a link holds stay bounded by its rate of arrival times this delay.
	MaxDelay = 30 * time.Second
	// MaxRate bounds Rate (bits per second).
	MaxRate = 400e9
	// MaxQueue bounds Queue (bytes).
	MaxQueue = 1 << 30
	// defaultReorderDelay is the extra delay of a reordered packet when
	// ReorderDelay is 0.
	defaultReorderDelay = 10 * time.Millisecond
	// minDefaultQueue is the smallest default queue, in bytes.
	minDefaultQueue = 15000
)

// Validate reports the first parameter out of its range.
func (p Params) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"delay", p.Delay}, {"jitter", p.Jitter}, {"reorder delay", p.ReorderDelay}} {
		if d.v < 0 || d.v > MaxDelay {
			return fmt.Errorf("linkem: %s %v out of [0, %v]", d.name, d.v, MaxDelay)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"loss", p.Loss}, {"reorder", p.Reorder}, {"duplicate", p.Duplicate},
		{"GE p", p.GE.P}, {"GE r", p.GE.R}, {"GE loss in bad", p.GE.LossBad}, {"GE loss in good", p.GE.LossGood},
	} {
		if !(f.v >= 0 && f.v <= 1) { // also rejects NaN
			return fmt.Errorf("linkem: %s probability %v out of [0, 1]", f.name, f.v)
		}
	}
	if p.GE.P > 0 && p.GE.R == 0 {
		return errors.New("linkem: GE r is 0: the channel would stay in Bad for ever")
	}
	if p.Rate < 0 || p.Rate > MaxRate {
		return fmt.Errorf("linkem: rate %d out of [0, %d] bit/s", p.Rate, int64(MaxRate))
	}
	if p.Queue < 0 || p.Queue > MaxQueue {
		return fmt.Errorf("linkem: queue %d out of [0, %d] bytes", p.Queue, MaxQueue)
	}
	return nil
}

// QueueBytes returns the queue capacity in bytes that applies: Queue, or
// its default when Queue is 0. It is 0 without Rate.
func (p Params) QueueBytes() int {
	if p.Rate <= 0 {
		return 0
	}
	if p.Queue > 0 {
		return p.Queue
	}
	q := p.Rate / 8 / 10 // 100 ms
	return int(max(q, minDefaultQueue))
}

// reorderDelay returns the extra delay of a reordered packet.
func (p Params) reorderDelay() time.Duration {
	if p.ReorderDelay > 0 {
		return p.ReorderDelay
	}
	return defaultReorderDelay
}

// txTime returns how long a packet of size bytes occupies a link of rate
// bits per second, and the remainder in bit-nanoseconds that the exact
// duration exceeds it by (carried to the next packet so that no rounding
// accumulates).
func txTime(size int, rate int64, carry int64) (time.Duration, int64) {
	num := int64(size)*8*int64(time.Second) + carry
	return time.Duration(num / rate), num % rate
}

// finite reports whether f is a finite number.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
