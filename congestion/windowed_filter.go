package congestion

import (
	"math"
	"time"
)

// filterMax is a windowed max filter over a virtual time, for BBR.max_bw
// (time: BBR.cycle_count, window BBR.MaxBwFilterLen = 2 ProbeBW cycles) and
// BBR.extra_acked (time: BBR.round_count, window BBR.ExtraAckedFilterLen =
// 10 round trips, or 1 in Startup). draft-ietf-ccwg-bbr, Section 5.5.5:
// "UpdateWindowedMaxFilter() can be implemented using Kathleen Nichols'
// algorithm for tracking the minimum/maximum value of a data stream over
// some measurement window."
//
// The filter keeps the best, second best and third best samples, each
// newer than the one before, so that when the best ages out of the window
// a good replacement is at hand; it uses constant space and time. A sample
// taken at time t is in the window at time now while now-t < window: with
// a window of 2 cycles, the current and the previous cycle count ("the
// current cycle and the previous full cycle"); with a window of 1 round,
// only the current round does. The estimate changes only on update: the
// zero value estimates 0 and accepts any first sample.
type filterMax struct {
	s [3]filterSample // s[0] is the maximum, s[1] and s[2] later and smaller
}

type filterSample struct {
	t, v uint64
}

// reset makes v at time t the only sample.
func (f *filterMax) reset(t, v uint64) {
	f.s[0] = filterSample{t, v}
	f.s[1], f.s[2] = f.s[0], f.s[0]
}

// get returns the current maximum.
func (f *filterMax) get() uint64 { return f.s[0].v }

// update takes a sample v at time t (nondecreasing between calls) and
// returns the maximum over the window ending at t.
func (f *filterMax) update(v, t, window uint64) uint64 {
	window = max(window, 1)
	sample := filterSample{t, v}
	// A new maximum, or nothing left in the window: start over.
	if v >= f.s[0].v || t-f.s[2].t >= window {
		f.reset(t, v)
		return v
	}
	if v >= f.s[1].v {
		f.s[1], f.s[2] = sample, sample
	} else if v >= f.s[2].v {
		f.s[2] = sample
	}
	age := t - f.s[0].t
	switch {
	case age >= window:
		// The best aged out: promote the others. The second best may
		// have aged out as well.
		f.s[0], f.s[1], f.s[2] = f.s[1], f.s[2], sample
		if t-f.s[0].t >= window {
			f.s[0], f.s[1] = f.s[1], f.s[2]
		}
	case f.s[1].t == f.s[0].t && age > window/4:
		// A quarter of the window passed without a second best:
		// take one from the newer samples.
		f.s[1], f.s[2] = sample, sample
	case f.s[2].t == f.s[1].t && age > window/2:
		// Half the window passed without a third best.
		f.s[2] = sample
	}
	return f.s[0].v
}

// filterMinRTT is the BBR.min_rtt estimator integrated with the ProbeRTT
// schedule, as draft-ietf-ccwg-bbr, Section 5.5.7.2 recommends: "a
// significant savings in space and improvement in freshness can be
// achieved by integrating the BBR.min_rtt estimation into the ProbeRTT
// state machine". It holds two minima: probe_rtt_min_delay over
// BBR.ProbeRTTInterval (5 s), whose expiry schedules ProbeRTT, and min_rtt
// over BBR.MinRTTFilterLen (10 s).
type filterMinRTT struct {
	probeRTTMinDelay time.Duration // BBR.probe_rtt_min_delay
	probeRTTMinStamp time.Time     // BBR.probe_rtt_min_stamp
	probeRTTExpired  bool          // BBR.probe_rtt_expired
	minRTT           time.Duration // BBR.min_rtt; filterInfiniteRTT: none
	minRTTStamp      time.Time     // BBR.min_rtt_stamp
}

// filterInfiniteRTT stands for an infinite RTT ("BBR.min_rtt = Infinity").
const filterInfiniteRTT = time.Duration(math.MaxInt64)

// Constants of draft-ietf-ccwg-bbr, Section 2.16.
const (
	// bbrMinRTTFilterLen: "BBR.MinRTTFilterLen is 10 secs."
	bbrMinRTTFilterLen = 10 * time.Second
	// bbrProbeRTTInterval: "The minimum time interval between ProbeRTT
	// states: 5 secs."
	bbrProbeRTTInterval = 5 * time.Second
	// bbrProbeRTTDuration: "the minimum duration for which ProbeRTT state
	// holds C.inflight to BBR.MinPipeCwnd or fewer packets: 200 ms."
	bbrProbeRTTDuration = 200 * time.Millisecond
)

// init sets the state of OnInit (Section 5.2.1): "BBR.min_rtt = C.srtt ?
// C.srtt : Infinity; BBR.min_rtt_stamp = Now()".
func (f *filterMinRTT) init(now time.Time, srtt time.Duration) {
	*f = filterMinRTT{
		probeRTTMinDelay: filterInfiniteRTT,
		probeRTTMinStamp: now,
		minRTT:           filterInfiniteRTT,
		minRTTStamp:      now,
	}
	if srtt > 0 {
		f.minRTT = srtt
	}
}

// update is UpdateMinRTT of Section 5.3.4.3; rtt is RS.rtt (-1: none).
//
//	BBR.probe_rtt_expired =
//	  Now() > BBR.probe_rtt_min_stamp + BBR.ProbeRTTInterval
//	if (RS.rtt >= 0 &&
//	    (RS.rtt < BBR.probe_rtt_min_delay ||
//	     BBR.probe_rtt_expired))
//	   BBR.probe_rtt_min_delay = RS.rtt
//	   BBR.probe_rtt_min_stamp = Now()
//	min_rtt_expired =
//	  Now() > BBR.min_rtt_stamp + BBR.MinRTTFilterLen
//	if (BBR.probe_rtt_min_delay < BBR.min_rtt ||
//	    min_rtt_expired)
//	  BBR.min_rtt       = BBR.probe_rtt_min_delay
//	  BBR.min_rtt_stamp = BBR.probe_rtt_min_stamp
func (f *filterMinRTT) update(now time.Time, rtt time.Duration) {
	f.probeRTTExpired = now.After(f.probeRTTMinStamp.Add(bbrProbeRTTInterval))
	if rtt >= 0 && (rtt < f.probeRTTMinDelay || f.probeRTTExpired) {
		f.probeRTTMinDelay = rtt
		f.probeRTTMinStamp = now
	}
	minRTTExpired := now.After(f.minRTTStamp.Add(bbrMinRTTFilterLen))
	if f.probeRTTMinDelay < f.minRTT || minRTTExpired {
		f.minRTT = f.probeRTTMinDelay
		f.minRTTStamp = f.probeRTTMinStamp
	}
}

// refreshDrained restarts BBR.ProbeRTTInterval for a sample rtt taken
// with the flight as low as ProbeRTT makes it (see bbr.updateMinRTT, a
// deviation from the draft) that is within an eighth of
// BBR.probe_rtt_min_delay, taking it if it is lower. The eighth absorbs
// the peer's ACK delay, which RS.rtt includes; a path whose delay grew
// by more stops refreshing the estimate, which then expires as in the
// draft.
func (f *filterMinRTT) refreshDrained(now time.Time, rtt time.Duration) {
	if rtt < 0 || f.probeRTTMinDelay == filterInfiniteRTT || rtt > f.probeRTTMinDelay+f.probeRTTMinDelay/8 {
		return
	}
	f.probeRTTMinDelay = min(f.probeRTTMinDelay, rtt)
	f.probeRTTMinStamp = now
}
