package congestion

// This file holds BBR's Startup and Drain states: draft-ietf-ccwg-bbr,
// Sections 5.3.1 and 5.3.2.

// enterStartup is EnterStartup of Section 5.3.1.1: "in Startup BBR sets
// BBR.pacing_gain to BBR.StartupPacingGain (2.77) and BBR.cwnd_gain to
// BBR.DefaultCwndGain (2)".
func (b *bbr) enterStartup() {
	b.state = bbrStartup
	b.pacingGain = bbrStartupPacingGain
	b.cwndGain = bbrDefaultCwndGain
}

// checkStartupDone is CheckStartupDone of Section 5.3.1.1.
//
//	CheckStartupHighLoss()
//	if (BBR.state == Startup && BBR.full_bw_reached)
//	  EnterDrain()
func (b *bbr) checkStartupDone() {
	b.checkStartupHighLoss()
	if b.state == bbrStartup && b.fullBwReached {
		b.enterDrain()
	}
}

// resetFullBW is ResetFullBW of Section 5.3.1.2: "Upon starting a full
// pipe detection process (either on startup or when probing for an
// increase in bandwidth)".
func (b *bbr) resetFullBW() {
	b.fullBw = 0
	b.fullBwCount = 0
	b.fullBwNow = false
}

// checkFullBWReached is CheckFullBWReached of Section 5.3.1.2: "if BBR
// counts several (three) non-application-limited rounds where attempts to
// significantly increase the delivery rate actually result in little
// increase (less than 25 percent), then it estimates that it has fully
// utilized the per-flow available bandwidth".
//
//	if (BBR.full_bw_now || !BBR.round_start || RS.is_app_limited)
//	  return  /* no need to check for a full pipe now */
//	if (RS.delivery_rate >= BBR.full_bw * 1.25)
//	  ResetFullBW()       /* bw is still growing, so reset */
//	  BBR.full_bw = RS.delivery_rate  /* record new baseline bw */
//	  return
//	BBR.full_bw_count++   /* another round w/o much growth */
//	BBR.full_bw_now = (BBR.full_bw_count >= 3)
//	if (BBR.full_bw_now)
//	  BBR.full_bw_reached = true
//
// An ACK whose rate sample has no delivery rate ("no reliable rate
// sample", GenerateRateSample) is not counted as a round without growth:
// the estimator runs "when the delivery rate sample is not
// application-limited", and there is no sample.
func (b *bbr) checkFullBWReached() {
	rs := &b.rate.rs
	if b.fullBwNow || !b.roundStart || rs.isAppLimited || rs.deliveryRate == 0 {
		return
	}
	if rs.deliveryRate >= rateMulDiv(b.fullBw, bbrFullBwGrowth, 100) {
		b.resetFullBW()
		b.fullBw = rs.deliveryRate
		return
	}
	b.fullBwCount++
	b.fullBwNow = b.fullBwCount >= bbrFullBwCount
	if b.fullBwNow {
		b.fullBwReached = true
	}
}

// checkStartupHighLoss is CheckStartupHighLoss of Section 5.3.1.3, whose
// text this follows as the draft gives no pseudocode. For QUIC, which has
// selective ACKs, Startup exits on loss when, at the end of a loss round:
//
//   - "The connection has been in fast recovery for at least one full
//     packet-timed round trip."
//   - "The loss rate over the time scale of a single full round trip
//     exceeds BBR.LossThresh (2%)": IsInflightTooHigh() on the ACK's rate
//     sample, whose RS.lost is the data lost since the acknowledged packet
//     was sent, one round trip ago.
//   - "There are at least BBRStartupFullLossCnt=6 discontiguous sequence
//     ranges lost in that round trip."
//
// Then "it sets BBR.undo_state = Startup ... it sets BBR.full_bw_reached =
// true. Then it sets BBR.inflight_longterm to ... max(BBR.bdp,
// BBR.inflight_latest) ... Finally, it exits Startup and enters Drain."
func (b *bbr) checkStartupHighLoss() {
	if b.state != bbrStartup || b.fullBwReached || !b.lossRoundStart {
		return
	}
	if b.inRecoveryEpisode() && b.recoveryFullRound &&
		b.lossEventsInRound >= bbrStartupFullLossCnt && b.isInflightTooHigh() {
		b.undoState = bbrStartup
		b.fullBwReached = true
		b.inflightLongterm = max(b.bdp, b.inflightLatest)
	}
}

// enterDrain is EnterDrain of Section 5.3.2: "In Drain, BBR aims to
// quickly drain any queue at the bottleneck link that was created in
// Startup by switching to a pacing_gain well below 1.0".
//
//	BBR.state = Drain
//	BBR.pacing_gain = BBR.DrainPacingGain    /* pace slowly */
//	BBR.cwnd_gain = BBR.DefaultCwndGain      /* maintain cwnd */
//	BBR.drain_start_round = BBR.round_count
func (b *bbr) enterDrain() {
	b.state = bbrDrain
	b.pacingGain = bbrDrainPacingGain
	b.cwndGain = bbrDefaultCwndGain
	b.drainStartRound = b.roundCount
}

// checkDrainDone is CheckDrainDone of Section 5.3.2: "when the amount of
// data in flight is less than or equal to the estimated BDP ... BBR exits
// Drain and enters ProbeBW ... BBR enters ProbeBW after 3 round trips".
//
//	if (BBR.state == Drain &&
//	    (C.inflight <= Inflight(1.0) ||
//	     BBR.round_count > BBR.drain_start_round + 3))
//	  EnterProbeBW()
func (b *bbr) checkDrainDone() {
	if b.state == bbrDrain &&
		(b.inflight <= b.inflightFor(b.bw, bbrUnityGain) ||
			b.roundCount > b.drainStartRound+3) {
		b.enterProbeBW()
	}
}
