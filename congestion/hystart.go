package congestion

import (
	"math"
	"time"
)

// Constants of HyStart++, RFC 9406, Section 4.3: "It is RECOMMENDED that a
// HyStart++ implementation use the following constants".
const (
	hystartMinRTTThresh    = 4 * time.Millisecond
	hystartMaxRTTThresh    = 16 * time.Millisecond
	hystartMinRTTDivisor   = 8
	hystartNRTTSample      = 8
	hystartCSSGrowthDiv    = 4
	hystartCSSRounds       = 5
	hystartInfinity        = time.Duration(math.MaxInt64)
	hystartNoPacket        = int64(-1)
	hystartRoundNotStarted = int64(math.MinInt64)
)

// hystart is HyStart++ (RFC 9406): the slow start of a window-based
// controller that leaves it on an RTT increase, into Conservative Slow
// Start (CSS), and from CSS into congestion avoidance after CSS_ROUNDS
// rounds. It only decides how much the window grows during slow start and
// when slow start ends; the controller owns the window and its reaction to
// loss. L, the per-ACK growth limit, is infinity: "L = infinity if paced"
// (Section 4.3), and our senders pace.
//
// Rounds are tracked by packet number: "When windowEnd is ACKed, the
// current round ends and windowEnd is set to SND.NXT" (Section 4.2), with
// windowEnd the largest packet number sent when the round started.
//
// The zero value is not ready for use; call reset.
type hystart struct {
	// done reports that HyStart++ no longer runs: "An implementation
	// SHOULD use HyStart++ only for the initial slow start" (Section 4.2).
	done  bool
	inCSS bool

	largestSent  int64 // largest packet number sent
	largestAcked int64 // largest packet number acknowledged
	windowEnd    int64 // end of the current round

	lastRoundMinRTT    time.Duration
	currentRoundMinRTT time.Duration
	rttSampleCount     int
	cssBaselineMinRTT  time.Duration
	cssRounds          int
	cssAcked           int // bytes acknowledged in CSS not yet turned into growth
}

// reset returns h to the state of a new connection (Section 4.2:
// "lastRoundMinRTT = infinity; currentRoundMinRTT = infinity; currRTT =
// infinity; rttSampleCount = 0").
func (h *hystart) reset() {
	*h = hystart{
		largestSent:        hystartNoPacket,
		largestAcked:       hystartNoPacket,
		windowEnd:          hystartRoundNotStarted,
		lastRoundMinRTT:    hystartInfinity,
		currentRoundMinRTT: hystartInfinity,
		cssBaselineMinRTT:  hystartInfinity,
	}
}

// stop ends HyStart++ for the rest of the connection: after the first slow
// start, "subsequent slow starts will use the discovered ssthresh value to
// exit slow start".
func (h *hystart) stop() {
	h.done = true
	h.inCSS = false
}

// onPacketSent records the largest packet number sent, SND.NXT's analogue.
func (h *hystart) onPacketSent(pn int64) {
	h.largestSent = max(h.largestSent, pn)
}

// startRound begins a round: "At the start of each round during standard
// slow start [RFC5681] and CSS, initialize the variables used to compute
// the last round's and current round's minimum RTT: lastRoundMinRTT =
// currentRoundMinRTT; currentRoundMinRTT = infinity; rttSampleCount = 0".
func (h *hystart) startRound() {
	h.windowEnd = h.largestSent
	h.lastRoundMinRTT = h.currentRoundMinRTT
	h.currentRoundMinRTT = hystartInfinity
	h.rttSampleCount = 0
}

// onAck processes one ACK in slow start: ackedBytes is N, "the number of
// previously unacknowledged bytes acknowledged in the arriving ACK",
// largestAcked the largest packet number it acknowledged, and rtt the
// latest RTT sample, counted only when the ACK newly acknowledged a
// largest packet number (the condition for an RTT sample, RFC 9002,
// Section 5.1). It returns the growth of the window in bytes and whether
// slow start ends: "If CSS_ROUNDS rounds are complete, enter congestion
// avoidance by setting the ssthresh to the current cwnd."
func (h *hystart) onAck(ackedBytes int, largestAcked int64, rtt time.Duration) (growth int, exitSlowStart bool) {
	if h.done {
		return ackedBytes, false
	}
	if h.windowEnd == hystartRoundNotStarted {
		h.startRound()
	}
	if h.inCSS {
		// "cwnd = cwnd + (min(N, L * SMSS) / CSS_GROWTH_DIVISOR)"
		h.cssAcked += ackedBytes
		growth = h.cssAcked / hystartCSSGrowthDiv
		h.cssAcked -= growth * hystartCSSGrowthDiv
	} else {
		// "cwnd = cwnd + min(N, L * SMSS)"
		growth = ackedBytes
	}
	if largestAcked > h.largestAcked {
		h.largestAcked = largestAcked
		if rtt > 0 {
			// "Keep track of the minimum observed RTT:
			// currentRoundMinRTT = min(currentRoundMinRTT, currRTT);
			// rttSampleCount += 1"
			h.currentRoundMinRTT = min(h.currentRoundMinRTT, rtt)
			h.rttSampleCount++
		}
	}
	if h.rttSampleCount >= hystartNRTTSample {
		if !h.inCSS {
			h.checkDelayIncrease()
		} else if h.currentRoundMinRTT < h.cssBaselineMinRTT {
			// "if (currentRoundMinRTT < cssBaselineMinRtt)
			// cssBaselineMinRtt = infinity; resume slow start including
			// HyStart++"
			h.cssBaselineMinRTT = hystartInfinity
			h.inCSS = false
			h.cssRounds = 0
			h.cssAcked = 0
		}
	}
	if largestAcked >= h.windowEnd {
		// The round ends when windowEnd is acknowledged. "CSS lasts at
		// most CSS_ROUNDS rounds. If the transition into CSS happens in the
		// middle of a round, that partial round counts towards the limit."
		if h.inCSS {
			h.cssRounds++
			if h.cssRounds >= hystartCSSRounds {
				h.stop()
				return growth, true
			}
		}
		h.startRound()
	}
	return growth, false
}

// checkDelayIncrease is the exit test of standard slow start: "if
// ((rttSampleCount >= N_RTT_SAMPLE) AND (currentRoundMinRTT != infinity)
// AND (lastRoundMinRTT != infinity)) RttThresh = max(MIN_RTT_THRESH,
// min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH)) if
// (currentRoundMinRTT >= (lastRoundMinRTT + RttThresh))
// cssBaselineMinRtt = currentRoundMinRTT; exit slow start and enter CSS".
func (h *hystart) checkDelayIncrease() {
	if h.currentRoundMinRTT == hystartInfinity || h.lastRoundMinRTT == hystartInfinity {
		return
	}
	thresh := max(hystartMinRTTThresh, min(h.lastRoundMinRTT/hystartMinRTTDivisor, hystartMaxRTTThresh))
	if h.currentRoundMinRTT >= h.lastRoundMinRTT+thresh {
		h.cssBaselineMinRTT = h.currentRoundMinRTT
		h.inCSS = true
		h.cssRounds = 0
		h.cssAcked = 0
	}
}

// onCongestion ends HyStart++: "If loss or ECN-marking is observed anytime
// during standard slow start or CSS, enter congestion avoidance"
// (Section 4.2); the controller sets the window.
func (h *hystart) onCongestion() { h.stop() }
