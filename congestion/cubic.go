package congestion

import (
	"math"
	"math/bits"
	"time"
)

// Constants of RFC 9438, Sections 4.1.1, 4.3 and 4.6, as fractions so that
// the per-ACK path stays in integers.
const (
	// cubicC is C: "C SHOULD be set to 0.4" (Section 5), in segments per
	// second cubed; used as a float for K only.
	cubicC = 0.4
	// cubicCNum/cubicCDen is C as a fraction.
	cubicCNum = 2
	cubicCDen = 5
	// cubicBetaNum/cubicBetaDen is β_cubic: "The parameter β_cubic SHOULD
	// be set to 0.7" (Section 4.6).
	cubicBetaNum = 7
	cubicBetaDen = 10
	// cubicAlphaNum/cubicAlphaDen is α_cubic = 3 * (1 - β_cubic) /
	// (1 + β_cubic) = 0.9 / 1.7 = 9/17 (Section 4.3).
	cubicAlphaNum = 9
	cubicAlphaDen = 17
	// cubicMaxOffset bounds |t - K| in W_cubic(t) so that its cube fits
	// the integer arithmetic (about 71 minutes; the target is capped at
	// 1.5 * cwnd anyway).
	cubicMaxOffset = time.Duration(1<<32-1) * time.Microsecond
)

// NewCubic returns the CUBIC congestion controller of RFC 9438 with
// HyStart++ (RFC 9406) for its first slow start; it is the default
// controller of a connection.
//
// In congestion avoidance the window follows W_cubic(t) = C*(t-K)^3 + W_max
// (C = 0.4, windows in max_datagram_size segments, t in seconds since the
// congestion avoidance stage began, minus time spent application limited),
// aiming each ACK at W_cubic(t + smoothed_rtt) bounded to [cwnd, 1.5*cwnd],
// but never below the Reno-friendly estimate W_est (α_cubic = 9/17, then 1
// once W_est reaches cwnd_prior). A congestion event (loss or ECN-CE)
// multiplies the window by β_cubic = 0.7, at most once per recovery period
// (RFC 9002, Section 7.3.2), with fast convergence (RFC 9438, Section 4.7)
// lowering W_max when the flow's saturation point dropped. The window
// never falls below 2 * max_datagram_size; persistent congestion sets it
// there and restarts slow start, after which K = 0 (Section 4.8). The
// window does not grow while the connection is application limited
// (OnAppLimited). PacingRate is 1.25 * cwnd / smoothed_rtt (RFC 9002,
// Section 7.7).
//
// Zero fields of c take their defaults: MaxDatagramSize 1200, the initial
// window of InitialWindow, and a fresh RTTStats when RTT is nil.
func NewCubic(c ControllerConfig) Controller {
	c = renoFillDefaults(c)
	cc := &cubicController{
		rtt:             c.RTT,
		mds:             c.MaxDatagramSize,
		initPackets:     c.InitialWindowPackets,
		ssthresh:        math.MaxInt,
		fastConvergence: true,
	}
	cc.cwnd = InitialWindow(cc.mds, cc.initPackets)
	cc.hs.reset()
	return cc
}

// cubicController is CUBIC, RFC 9438. Windows are in bytes; the RFC's
// segment formulas are scaled by max_datagram_size.
type cubicController struct {
	rtt         *RTTStats
	rate        renoRateCache
	mds         int
	initPackets int

	cwnd     int
	ssthresh int // math.MaxInt until the first slow start ends
	hs       hystart

	// Recovery period, as for NewReno (RFC 9002, Appendix B).
	recoveryStart    time.Time
	hasRecoveryStart bool
	inRecovery       bool

	appLimited      bool
	appLimitedSince time.Time
	grown           bool

	fastConvergence bool

	// wMax is W_max in bytes; 0 means "W_max is set to the congestion
	// window size at the beginning of the current congestion avoidance
	// stage" with K = 0 (Sections 4.8 and 4.10).
	wMax      int
	cwndPrior int // cwnd_prior in bytes
	// inEpoch reports that a congestion avoidance stage began at
	// epochStart (t_epoch), shifted forward by application-limited time.
	inEpoch    bool
	epochStart time.Time
	k          time.Duration // K
	wEst       int           // W_est in bytes
	wEstAcc    uint64        // remainder of the W_est increase
	growAcc    uint64        // remainder of the cubic increase
}

func (c *cubicController) minWindow() int { return MinWindowPackets * c.mds }

func (c *cubicController) inCongestionRecovery(sent time.Time) bool {
	return c.hasRecoveryStart && !sent.After(c.recoveryStart)
}

func (c *cubicController) OnPacketSent(now time.Time, pn int64, bytes int, bytesInFlight int) {
	c.hs.onPacketSent(pn)
	if c.appLimited && renoWindowLimited(bytesInFlight, c.cwnd, c.mds) {
		c.appLimited = false
		if c.inEpoch && now.After(c.appLimitedSince) {
			// RFC 9438, Section 4.2: "The elapsed time t in Figure 1 MUST
			// NOT include periods during which cwnd has not been updated
			// due to application-limited behavior".
			c.epochStart = c.epochStart.Add(now.Sub(c.appLimitedSince))
		}
	}
}

func (c *cubicController) OnAck(now time.Time, ev *AckEvent) {
	if len(ev.Acked) == 0 {
		return
	}
	acked := 0
	for i := range ev.Acked {
		p := &ev.Acked[i]
		if c.inCongestionRecovery(p.SentTime) {
			continue // no growth for packets sent before recovery began
		}
		// RFC 9002, Section 7.3.2: "A recovery period ends and the sender
		// enters congestion avoidance when a packet sent during the
		// recovery period is acknowledged."
		c.inRecovery = false
		acked += p.Bytes
	}
	rtt := ev.RTT
	if rtt == nil {
		rtt = c.rtt
	}
	if c.cwnd < c.ssthresh {
		var sample time.Duration
		if rtt.HasSample() {
			sample = rtt.Latest()
		}
		growth, exit := c.hs.onAck(acked, ev.Acked[len(ev.Acked)-1].PacketNumber, sample)
		// RFC 9438, Section 5.8: "CUBIC does not increase its congestion
		// window if a flow is application-limited."
		if !c.appLimited && growth > 0 {
			c.cwnd += growth
			c.grown = true
		}
		if exit {
			// RFC 9406, Section 4.2: "enter congestion avoidance by
			// setting the ssthresh to the current cwnd". RFC 9438,
			// Section 4.10: "CUBIC sets cwnd_prior = cwnd and switches to
			// congestion avoidance", with K = 0 and W_max the window at
			// the beginning of congestion avoidance.
			c.ssthresh = c.cwnd
			c.cwndPrior = c.cwnd
			c.wMax = 0
			c.inEpoch = false
		}
		return
	}
	if c.appLimited || acked == 0 {
		return
	}
	c.avoidance(now, acked, rtt.Smoothed())
}

// avoidance is the congestion avoidance response to a new ACK that
// acknowledged acked bytes (RFC 9438, Sections 4.2 to 4.5).
func (c *cubicController) avoidance(now time.Time, acked int, srtt time.Duration) {
	if !c.inEpoch {
		c.startEpoch(now)
	}
	t := now.Sub(c.epochStart)
	// Section 4.3, Figure 4: "W_est = W_est + α_cubic * segments_acked /
	// cwnd"; "Once W_est has grown to reach the cwnd at the time of most
	// recently setting ssthresh, that is, W_est >= cwnd_prior, the sender
	// SHOULD set α_cubic to 1".
	an, ad := uint64(cubicAlphaNum), uint64(cubicAlphaDen)
	if c.wEst >= c.cwndPrior {
		an, ad = 1, 1
	}
	inc, rem := cubicMulDivAdd(uint64(acked), uint64(c.mds)*an, c.wEstAcc, uint64(c.cwnd)*ad)
	c.wEst = cubicAddSat(c.wEst, inc)
	c.wEstAcc = rem
	// "CUBIC checks whether W_cubic(t) is less than W_est. If so, CUBIC is
	// in the Reno-friendly region and cwnd SHOULD be set to W_est at each
	// reception of a new ACK."
	if c.window(t) < c.wEst {
		if c.wEst > c.cwnd {
			c.cwnd = c.wEst
			c.grown = true
		}
		return
	}
	// Section 4.2: target = W_cubic(t + RTT), bounded to [cwnd, 1.5*cwnd].
	target := min(max(c.window(t+srtt), c.cwnd), c.cwnd+c.cwnd/2)
	// Sections 4.4 and 4.5: "cwnd MUST be incremented by (target - cwnd) /
	// cwnd for each received new ACK", per segment acknowledged.
	inc, rem = cubicMulDivAdd(uint64(target-c.cwnd), uint64(acked), c.growAcc, uint64(c.cwnd))
	c.growAcc = rem
	if inc > 0 {
		c.cwnd = cubicAddSat(c.cwnd, inc)
		c.grown = true
	}
}

// startEpoch begins a congestion avoidance stage: t_epoch = now,
// cwnd_epoch = cwnd, W_est = cwnd_epoch and (Section 4.2, Figure 2)
// K = cbrt((W_max - cwnd_epoch) / C), in segments; K = 0 with W_max =
// cwnd_epoch when the window is already at or above W_max.
func (c *cubicController) startEpoch(now time.Time) {
	c.inEpoch = true
	c.epochStart = now
	c.wEst = c.cwnd
	c.wEstAcc = 0
	c.growAcc = 0
	if c.wMax <= c.cwnd {
		c.wMax = c.cwnd
		c.k = 0
		return
	}
	c.k = cubicK(c.wMax, c.cwnd, c.mds)
}

// cubicK returns K = cbrt((W_max - cwnd_epoch) / C) for windows in bytes
// and a segment size of mds bytes.
func cubicK(wMax, cwndEpoch, mds int) time.Duration {
	if wMax <= cwndEpoch {
		return 0
	}
	segs := float64(wMax-cwndEpoch) / float64(mds)
	return time.Duration(math.Cbrt(segs/cubicC) * float64(time.Second))
}

// window returns W_cubic(t) = C*(t-K)^3 + W_max in bytes (Figure 1),
// computed in integers with microsecond resolution.
func (c *cubicController) window(t time.Duration) int {
	return cubicWindow(t, c.k, c.wMax, c.mds)
}

// cubicWindow returns W_cubic(t) in bytes for K, W_max in bytes and a
// segment size of mds bytes.
func cubicWindow(t, k time.Duration, wMax, mds int) int {
	d := t - k
	neg := d < 0
	if neg {
		d = -d
	}
	d = min(d, cubicMaxOffset)
	us := uint64(d / time.Microsecond)
	// (t-K)^3 in µs^3 is below 2^96; scale to 10^-6 s^3.
	hi, lo := bits.Mul64(us*us, us)
	cube, _ := bits.Div64(hi, lo, 1e12)
	// delta = C * cube/1e6 * mds = 2 * cube * mds / (5 * 1e6) bytes.
	hi, lo = bits.Mul64(cube, uint64(cubicCNum*mds))
	delta, _ := bits.Div64(hi, lo, cubicCDen*1e6)
	if neg {
		return wMax - int(delta)
	}
	return cubicAddSat(wMax, delta)
}

// cubicMulDivAdd returns (a*b + add) / d and its remainder, saturating the
// quotient at math.MaxInt64 instead of overflowing.
func cubicMulDivAdd(a, b, add, d uint64) (q, r uint64) {
	if d == 0 {
		return 0, 0
	}
	hi, lo := bits.Mul64(a, b)
	var carry uint64
	lo, carry = bits.Add64(lo, add, 0)
	hi += carry
	if hi >= d {
		return math.MaxInt64, 0
	}
	return bits.Div64(hi, lo, d)
}

// cubicAddSat returns w + inc, saturating at math.MaxInt.
func cubicAddSat(w int, inc uint64) int {
	if inc > uint64(math.MaxInt-w) {
		return math.MaxInt
	}
	return w + int(inc)
}

func (c *cubicController) OnCongestionEvent(now time.Time, ev *CongestionEvent) {
	if !c.inCongestionRecovery(ev.SentTime) {
		// RFC 9002, Appendix B.6: enter a recovery period;
		// "congestion_recovery_start_time = now()".
		c.recoveryStart = now
		c.hasRecoveryStart = true
		c.inRecovery = true
		// RFC 9406, Section 4.2: "If loss or ECN-marking is observed
		// anytime during standard slow start or CSS, enter congestion
		// avoidance".
		c.hs.onCongestion()
		// RFC 9438, Section 4.7: "W_max = cwnd * (1 + β_cubic) / 2 if
		// cwnd < W_max and fast convergence enabled, further reduce W_max;
		// cwnd otherwise, remember cwnd before reduction".
		if c.fastConvergence && c.cwnd < c.wMax {
			c.wMax = c.cwnd * (cubicBetaDen + cubicBetaNum) / (2 * cubicBetaDen)
		} else {
			c.wMax = c.cwnd
		}
		// Section 4.6, Figure 5: "ssthresh = cwnd * β_cubic; cwnd_prior =
		// cwnd; cwnd = max(ssthresh, 2); ssthresh = max(ssthresh, 2)". The
		// window, not flight_size, is reduced: OnAppLimited keeps an
		// under-used window from growing, as Section 4.6 requires of a
		// QUIC sender. Both loss and ECN-CE keep 2 segments, the
		// kMinimumWindow of RFC 9002, Section 7.2.
		c.cwndPrior = c.cwnd
		reduced := int(uint64(c.cwnd) * cubicBetaNum / cubicBetaDen)
		c.ssthresh = max(reduced, c.minWindow())
		c.cwnd = max(reduced, c.minWindow())
		c.inEpoch = false
		c.grown = true
	}
	if ev.PersistentCongestion {
		// RFC 9002, Section 7.6.2: "the sender's congestion window MUST
		// be reduced to the minimum congestion window (kMinimumWindow)".
		// RFC 9438, Section 4.8: "CUBIC follows Reno to reduce cwnd
		// [RFC5681], but sets ssthresh using β_cubic" (done above), and
		// after the following slow start "K is set to 0, and W_max is set
		// to the congestion window size at the beginning of the current
		// congestion avoidance stage".
		c.cwnd = c.minWindow()
		c.hasRecoveryStart = false
		c.inRecovery = false
		c.inEpoch = false
		c.wMax = 0
		c.hs.stop()
	}
}

func (c *cubicController) OnAppLimited(now time.Time, bytesInFlight int) {
	if c.appLimited || renoWindowLimited(bytesInFlight, c.cwnd, c.mds) {
		return
	}
	c.appLimited = true
	c.appLimitedSince = now
}

func (c *cubicController) SetMaxDatagramSize(n int) {
	if n <= 0 || n == c.mds {
		return
	}
	c.mds = n
	// RFC 9002, Section 7.2: "If the maximum datagram size changes during
	// the connection, the initial congestion window SHOULD be recalculated
	// with the new size."
	if !c.grown {
		c.cwnd = InitialWindow(n, c.initPackets)
	}
	c.cwnd = max(c.cwnd, c.minWindow())
	if c.ssthresh != math.MaxInt {
		c.ssthresh = max(c.ssthresh, c.minWindow())
	}
	// K depends on the segment size: recompute it at the next ACK.
	c.inEpoch = false
}

func (c *cubicController) CongestionWindow() int { return c.cwnd }

func (c *cubicController) PacingRate() uint64 { return c.rate.get(c.cwnd, c.rtt.Smoothed()) }

func (c *cubicController) State() State {
	return renoState("cubic", c.cwnd < c.ssthresh, c.inRecovery, c.appLimited)
}
