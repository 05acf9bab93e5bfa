package linkem

import (
	"math/rand/v2"
	"time"
)

// jitterPeriodFactor is the period of the jitter process in units of the
// jitter: the variation moves at most 2×Jitter per period, a slope of at
// most 1/2, so that a packet's delivery time t+v(t) grows with its
// departure time t and packets stay in order.
const jitterPeriodFactor = 4

// jitterProcess is the order-keeping delay variation: a piecewise-linear
// random function of the departure time that, every period, heads for a
// new target drawn uniformly from [-j, +j].
type jitterProcess struct {
	started bool
	t0      time.Time // start of the current segment
	v0, v1  float64   // values at the ends of the segment, in ns
}

// at returns the variation for a packet leaving at t, for jitter j.
func (p *jitterProcess) at(t time.Time, j time.Duration, rng *rand.Rand) time.Duration {
	draw := func() float64 { return (2*rng.Float64() - 1) * float64(j) }
	period := jitterPeriodFactor * j
	if !p.started {
		p.started, p.t0, p.v0, p.v1 = true, t, draw(), draw()
	}
	el := t.Sub(p.t0)
	if el < 0 {
		el = 0
	}
	if el >= period {
		n := el / period
		if n == 1 {
			// The next segment starts where this one ends.
			p.v0, p.v1 = p.v1, draw()
		} else {
			// No packet left during a whole segment or more: more than
			// a period separates this packet from the last one, and a
			// fresh start cannot overtake it (|v1-v0| <= 2j < period).
			p.v0, p.v1 = draw(), draw()
		}
		p.t0 = p.t0.Add(n * period)
		el -= n * period
	}
	return time.Duration(p.v0 + (p.v1-p.v0)*float64(el)/float64(period))
}
