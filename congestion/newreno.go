package congestion

import (
	"math"
	"math/bits"
	"time"
)

// Phase names reported in State.Phase by NewReno and Cubic.
const (
	renoPhaseSlowStart  = "slow_start"
	renoPhaseAvoidance  = "congestion_avoidance"
	renoPhaseRecovery   = "recovery"
	renoPhaseAppLimited = "application_limited"
)

// renoDefaultDatagramSize is the maximum datagram size assumed when a
// ControllerConfig leaves it 0: "a minimum value of 1200 bytes"
// (RFC 9002, Appendix B.2).
const renoDefaultDatagramSize = 1200

// renoPacingNum/renoPacingDen is N of RFC 9002, Section 7.7: "Using a value
// for N that is small, but at least 1 (for example, 1.25) ensures that
// variations in RTT do not result in underutilization of the congestion
// window."
const (
	renoPacingNum = 5
	renoPacingDen = 4
)

// renoFillDefaults returns c with its zero fields set to their defaults.
func renoFillDefaults(c ControllerConfig) ControllerConfig {
	if c.MaxDatagramSize <= 0 {
		c.MaxDatagramSize = renoDefaultDatagramSize
	}
	if c.InitialWindowPackets < 0 {
		c.InitialWindowPackets = 0
	}
	if c.RTT == nil {
		c.RTT = NewRTTStats()
	}
	return c
}

// renoPacingRate returns N * cwnd / smoothed_rtt in bytes per second
// (RFC 9002, Section 7.7), saturating instead of overflowing.
// renoRateCache remembers renoPacingRate's last result: the connection
// asks for the rate several times per packet, and the 128-bit division
// showed in profiles; the window and the RTT change far less often.
type renoRateCache struct {
	cwnd int
	srtt time.Duration
	rate uint64
	ok   bool
}

// get returns renoPacingRate(cwnd, srtt).
func (r *renoRateCache) get(cwnd int, srtt time.Duration) uint64 {
	if !r.ok || r.cwnd != cwnd || r.srtt != srtt {
		r.cwnd, r.srtt, r.rate, r.ok = cwnd, srtt, renoPacingRate(cwnd, srtt), true
	}
	return r.rate
}

func renoPacingRate(cwnd int, srtt time.Duration) uint64 {
	if cwnd <= 0 {
		return 0
	}
	if srtt <= 0 {
		srtt = 1
	}
	hi, lo := bits.Mul64(uint64(cwnd)*renoPacingNum, uint64(time.Second))
	d := uint64(srtt) * renoPacingDen
	if hi >= d {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, d)
	return q
}

// renoWindowLimited reports whether a send that left bytesInFlight in
// flight used the window up: no further full-size datagram fits. It ends
// an application-limited period.
func renoWindowLimited(bytesInFlight, cwnd, mds int) bool {
	return bytesInFlight+mds > cwnd
}

// NewNewReno returns the NewReno congestion controller of RFC 9002,
// Section 7 and Appendix B: slow start, congestion avoidance with one
// maximum datagram size of growth per window acknowledged, and a recovery
// period that halves the window (kLossReductionFactor 0.5) at most once
// per round trip. Persistent congestion collapses the window to
// kMinimumWindow, 2 * max_datagram_size. The window does not grow while
// the connection is application limited (OnAppLimited, RFC 9002,
// Section 7.8). PacingRate is 1.25 * cwnd / smoothed_rtt (Section 7.7).
//
// Zero fields of c take their defaults: MaxDatagramSize 1200, the initial
// window of InitialWindow, and a fresh RTTStats when RTT is nil.
func NewNewReno(c ControllerConfig) Controller {
	c = renoFillDefaults(c)
	r := &renoController{
		rtt:         c.RTT,
		mds:         c.MaxDatagramSize,
		initPackets: c.InitialWindowPackets,
		ssthresh:    math.MaxInt,
	}
	r.cwnd = InitialWindow(r.mds, r.initPackets)
	return r
}

// renoController is NewReno, RFC 9002, Appendix B.
type renoController struct {
	rtt         *RTTStats
	rate        renoRateCache
	mds         int // max_datagram_size
	initPackets int

	cwnd     int // congestion_window
	ssthresh int // math.MaxInt is "infinite"
	// caAcked counts bytes acknowledged in congestion avoidance since the
	// last increase: "implementers that use an integer representation for
	// congestion_window should be careful with division and can use the
	// alternative approach suggested in Section 2.1 of [RFC3465]".
	caAcked int

	// recoveryStart is congestion_recovery_start_time, valid when
	// hasRecoveryStart; inRecovery is cleared when a packet sent after it
	// is acknowledged.
	recoveryStart    time.Time
	hasRecoveryStart bool
	inRecovery       bool

	appLimited bool
	grown      bool // the window changed since the initial window was set
}

func (r *renoController) minWindow() int { return MinWindowPackets * r.mds }

// inCongestionRecovery is InCongestionRecovery of Appendix B.5:
// "return sent_time <= congestion_recovery_start_time".
func (r *renoController) inCongestionRecovery(sent time.Time) bool {
	return r.hasRecoveryStart && !sent.After(r.recoveryStart)
}

func (r *renoController) OnPacketSent(now time.Time, pn int64, bytes int, bytesInFlight int) {
	if r.appLimited && renoWindowLimited(bytesInFlight, r.cwnd, r.mds) {
		r.appLimited = false
	}
}

func (r *renoController) OnAck(now time.Time, ev *AckEvent) {
	for i := range ev.Acked {
		p := &ev.Acked[i]
		if r.inRecovery && !r.inCongestionRecovery(p.SentTime) {
			// RFC 9002, Section 7.3.2: "A recovery period ends and the
			// sender enters congestion avoidance when a packet sent during
			// the recovery period is acknowledged."
			r.inRecovery = false
		}
		// "Do not increase congestion_window if application limited or
		// flow control limited."
		if r.appLimited {
			continue
		}
		// "Do not increase congestion window in recovery period."
		if r.inCongestionRecovery(p.SentTime) {
			continue
		}
		r.grown = true
		if r.cwnd < r.ssthresh {
			// "Slow start. congestion_window += acked_packet.sent_bytes"
			r.cwnd += p.Bytes
			continue
		}
		// "Congestion avoidance. congestion_window += max_datagram_size *
		// acked_packet.sent_bytes / congestion_window", counted in bytes
		// as in RFC 3465, Section 2.1.
		r.caAcked += p.Bytes
		if r.caAcked >= r.cwnd {
			r.caAcked -= r.cwnd
			r.cwnd += r.mds
		}
	}
}

func (r *renoController) OnCongestionEvent(now time.Time, ev *CongestionEvent) {
	// Appendix B.6, OnCongestionEvent: "No reaction if already in a
	// recovery period."
	if !r.inCongestionRecovery(ev.SentTime) {
		// "Enter recovery period. congestion_recovery_start_time = now();
		// ssthresh = congestion_window * kLossReductionFactor;
		// congestion_window = max(ssthresh, kMinimumWindow)"
		r.recoveryStart = now
		r.hasRecoveryStart = true
		r.inRecovery = true
		r.ssthresh = r.cwnd / 2 // kLossReductionFactor = 0.5
		r.cwnd = max(r.ssthresh, r.minWindow())
		r.caAcked = 0
		r.grown = true
	}
	if ev.PersistentCongestion {
		// Appendix B.8: "congestion_window = kMinimumWindow;
		// congestion_recovery_start_time = 0". The window is below
		// ssthresh: the sender is in slow start again (Section 7.3.1).
		r.cwnd = r.minWindow()
		r.hasRecoveryStart = false
		r.inRecovery = false
		r.caAcked = 0
	}
}

func (r *renoController) OnAppLimited(now time.Time, bytesInFlight int) {
	if !renoWindowLimited(bytesInFlight, r.cwnd, r.mds) {
		r.appLimited = true
	}
}

func (r *renoController) SetMaxDatagramSize(n int) {
	if n <= 0 || n == r.mds {
		return
	}
	r.mds = n
	// RFC 9002, Section 7.2: "If the maximum datagram size changes during
	// the connection, the initial congestion window SHOULD be recalculated
	// with the new size."
	if !r.grown {
		r.cwnd = InitialWindow(n, r.initPackets)
	}
	r.cwnd = max(r.cwnd, r.minWindow())
	if r.ssthresh != math.MaxInt {
		r.ssthresh = max(r.ssthresh, r.minWindow())
	}
}

func (r *renoController) CongestionWindow() int { return r.cwnd }

func (r *renoController) PacingRate() uint64 { return r.rate.get(r.cwnd, r.rtt.Smoothed()) }

func (r *renoController) State() State {
	return renoState("newreno", r.cwnd < r.ssthresh, r.inRecovery, r.appLimited)
}

// renoState describes a window-based controller (NewReno or Cubic): the
// RFC 9002 states, and the qlog phase, recovery taking precedence over
// application-limited, then slow start.
func renoState(name string, slowStart, recovery, appLimited bool) State {
	s := State{Name: name, InSlowStart: slowStart, InRecovery: recovery, AppLimited: appLimited}
	switch {
	case recovery:
		s.Phase = renoPhaseRecovery
	case appLimited:
		s.Phase = renoPhaseAppLimited
	case slowStart:
		s.Phase = renoPhaseSlowStart
	default:
		s.Phase = renoPhaseAvoidance
	}
	return s
}
