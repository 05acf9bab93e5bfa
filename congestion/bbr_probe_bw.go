package congestion

import "time"

// This file holds BBR's ProbeBW states: draft-ietf-ccwg-bbr, Section 5.3.3
// and the pseudocode of Section 5.3.3.9. The pseudocode does not set the
// gains in the StartProbeBW_* steps; they follow the table of Section
// 5.6.1 (DOWN 0.90/2, CRUISE 1.0/2, REFILL 1.0/2, UP 1.25/2.25).

// enterProbeBW is EnterProbeBW of Section 5.3.3.9.
func (b *bbr) enterProbeBW() {
	b.cwndGain = bbrDefaultCwndGain
	b.startProbeBWDown()
}

// startProbeBWDown is StartProbeBW_DOWN: "sending at 90% of BBR.bw".
//
//	ResetCongestionSignals()
//	BBR.probe_up_acked_per_inc = Infinity /* not growing BBR.inflight_longterm */
//	PickProbeWait()
//	BBR.cycle_stamp = Now()  /* start wall clock */
//	BBR.ack_phase  = ACKS_PROBE_STOPPING
//	StartRound()
//	BBR.state = ProbeBW_DOWN
func (b *bbr) startProbeBWDown() {
	b.resetCongestionSignals()
	b.probeUpAckedPerInc = bbrInfBytes
	b.pickProbeWait()
	b.cycleStamp = b.now
	b.ackPhase = bbrAcksProbeStopping
	b.startRound()
	b.state = bbrProbeBWDown
	b.pacingGain = bbrProbeBWDownPacingGain
	b.cwndGain = bbrDefaultCwndGain
}

// startProbeBWCruise is StartProbeBW_CRUISE: "switching to a pacing_gain
// of 1.0, sending at 100% of BBR.bw".
func (b *bbr) startProbeBWCruise() {
	b.state = bbrProbeBWCruise
	b.pacingGain = bbrUnityGain
	b.cwndGain = bbrDefaultCwndGain
}

// startProbeBWRefill is StartProbeBW_REFILL: "BBR first resets the
// short-term model parameters BBR.bw_shortterm and
// BBR.inflight_shortterm, setting both to "Infinity"", then sends at 1.0
// times BBR.bw for one round trip.
//
//	ResetShortTermModel()
//	BBR.bw_probe_up_rounds = 0
//	BBR.bw_probe_up_acked = 0
//	BBR.prev_probe_precautionary = false
//	BBR.ack_phase = ACKS_REFILLING
//	StartRound()
//	BBR.state = ProbeBW_REFILL
func (b *bbr) startProbeBWRefill() {
	b.resetShortTermModel()
	b.bwProbeUpRounds = 0
	b.bwProbeUpAcked = 0
	b.prevProbePrecautionary = false
	b.ackPhase = bbrAcksRefilling
	b.startRound()
	b.state = bbrProbeBWRefill
	b.pacingGain = bbrUnityGain
	b.cwndGain = bbrDefaultCwndGain
}

// startProbeBWUp is StartProbeBW_UP: "ProbeBW_UP probes for possible
// increases in available bandwidth by raising the sending rate, using a
// BBR.pacing_gain of 1.25 ... It also raises BBR.cwnd_gain to 2.25".
//
//	BBR.ack_phase = ACKS_PROBE_STARTING
//	StartRound()
//	ResetFullBW()
//	BBR.full_bw = RS.delivery_rate
//	BBR.state = ProbeBW_UP
//	RaiseInflightLongtermSlope()
func (b *bbr) startProbeBWUp() {
	b.ackPhase = bbrAcksProbeStarting
	b.startRound()
	b.resetFullBW()
	b.fullBw = b.rate.rs.deliveryRate
	b.state = bbrProbeBWUp
	b.pacingGain = bbrProbeBWUpPacingGain
	b.cwndGain = bbrProbeBWUpCwndGain
	b.raiseInflightLongtermSlope()
}

// updateProbeBWCyclePhase is UpdateProbeBWCyclePhase: "The core state
// machine logic for ProbeBW", run on each ACK.
func (b *bbr) updateProbeBWCyclePhase() {
	if !b.fullBwReached {
		return // "only handling steady-state behavior here"
	}
	if b.adaptLongTermModel() {
		return // "already decided state transition"
	}
	if !b.isInAProbeBWState() {
		return // "only handling ProbeBW states here"
	}
	switch b.state {
	case bbrProbeBWDown:
		if b.isTimeToProbeBW() {
			return
		}
		if b.isTimeToCruise() {
			b.startProbeBWCruise()
		}
	case bbrProbeBWCruise:
		b.isTimeToProbeBW()
	case bbrProbeBWRefill:
		// "After one round of REFILL, start UP"
		if b.roundStart {
			b.isBwProbeSample = true
			b.startProbeBWUp()
		}
	case bbrProbeBWUp:
		if b.isTimeToGoDown() {
			b.prevProbeTooHigh = false // "no high loss (yet)"
			b.startProbeBWDown()
		}
	}
}

// isInAProbeBWState is IsInAProbeBWState.
func (b *bbr) isInAProbeBWState() bool {
	switch b.state {
	case bbrProbeBWDown, bbrProbeBWCruise, bbrProbeBWRefill, bbrProbeBWUp:
		return true
	}
	return false
}

// isTimeToCruise is IsTimeToCruise: "Time to transition from DOWN to
// CRUISE?" "There is free headroom" and "C.inflight is less than or equal
// to BBR.bdp".
//
//	if (C.inflight > InflightWithHeadroom())
//	  return false /* not enough headroom */
//	if (C.inflight > Inflight(BBR.max_bw, 1.0))
//	  return false /* C.inflight > estimated BDP */
//	return true
func (b *bbr) isTimeToCruise() bool {
	if b.inflight > b.inflightWithHeadroom() {
		return false
	}
	if b.inflight > b.inflightFor(b.maxBw, bbrUnityGain) {
		return false
	}
	return true
}

// isTimeToGoDown is IsTimeToGoDown: "Time to transition from UP to DOWN?"
//
//	/* Precautionary Bandwidth Probing: Deceleration */
//	if (BBR.prev_probe_too_high && C.inflight >= BBR.inflight_longterm)
//	  BBR.prev_probe_precautionary = true
//	  return true
//	if (C.is_cwnd_limited && C.cwnd >= BBR.inflight_longterm)
//	  ResetFullBW()   /* bw is limited by BBR.inflight_longterm */
//	  BBR.full_bw = RS.delivery_rate
//	else if (BBR.full_bw_now)
//	  return true  /* we estimate we've fully used path bw */
//	return false
func (b *bbr) isTimeToGoDown() bool {
	if b.prevProbeTooHigh && b.inflight >= b.inflightLongterm {
		b.prevProbePrecautionary = true
		return true
	}
	if b.isCwndLimited() && b.cwnd >= b.inflightLongterm {
		b.resetFullBW()
		b.fullBw = b.rate.rs.deliveryRate
	} else if b.fullBwNow {
		return true
	}
	return false
}

// isProbingBW is IsProbingBW.
func (b *bbr) isProbingBW() bool {
	return b.state == bbrStartup || b.state == bbrProbeBWRefill || b.state == bbrProbeBWUp
}

// hasElapsedInPhase is HasElapsedInPhase:
// "return Now() > BBR.cycle_stamp + interval".
func (b *bbr) hasElapsedInPhase(interval time.Duration) bool {
	return b.now.After(b.cycleStamp.Add(interval))
}

// inflightWithHeadroom is InflightWithHeadroom: "Return a volume of data
// that tries to leave free headroom in the bottleneck buffer or link for
// other flows".
//
//	if (BBR.inflight_longterm == Infinity)
//	  return Infinity
//	headroom = max(1*C.SMSS, BBR.Headroom * BBR.inflight_longterm)
//	return max(BBR.inflight_longterm - headroom,
//	           BBR.MinPipeCwnd)
func (b *bbr) inflightWithHeadroom() int64 {
	if b.inflightLongterm == bbrInfBytes {
		return bbrInfBytes
	}
	headroom := max(b.smss, b.inflightLongterm*bbrHeadroom/100)
	return max(b.inflightLongterm-headroom, b.minPipeCwnd())
}

// raiseInflightLongtermSlope is RaiseInflightLongtermSlope: "in each
// successive round trip, BBR.inflight_longterm grows (in units of C.SMSS)
// by 1, 2, 4, 8, 16, etc".
//
//	growth_this_round = 1 << BBR.bw_probe_up_rounds
//	BBR.bw_probe_up_rounds = min(BBR.bw_probe_up_rounds + 1, 30)
//	BBR.probe_up_acked_per_inc = max(C.cwnd / growth_this_round, C.SMSS)
func (b *bbr) raiseInflightLongtermSlope() {
	growth := int64(1) << b.bwProbeUpRounds
	b.bwProbeUpRounds = min(b.bwProbeUpRounds+1, 30)
	b.probeUpAckedPerInc = max(b.cwnd/growth, b.smss)
}

// probeInflightLongtermUpward is ProbeInflightLongtermUpward: "Increase
// BBR.inflight_longterm if appropriate."
//
//	if (!C.is_cwnd_limited || C.cwnd < BBR.inflight_longterm)
//	  return  /* not fully using BBR.inflight_longterm, so don't grow it */
//	BBR.bw_probe_up_acked += RS.newly_acked
//	if (BBR.bw_probe_up_acked >= BBR.probe_up_acked_per_inc)
//	  delta = BBR.bw_probe_up_acked / BBR.probe_up_acked_per_inc
//	  BBR.bw_probe_up_acked -= delta * BBR.probe_up_acked_per_inc
//	  BBR.inflight_longterm += delta * C.SMSS
//	if (BBR.round_start)
//	  RaiseInflightLongtermSlope()
func (b *bbr) probeInflightLongtermUpward() {
	if !b.isCwndLimited() || b.cwnd < b.inflightLongterm {
		return
	}
	b.bwProbeUpAcked += b.rate.rs.newlyAcked
	if b.bwProbeUpAcked >= b.probeUpAckedPerInc {
		delta := b.bwProbeUpAcked / b.probeUpAckedPerInc
		b.bwProbeUpAcked -= delta * b.probeUpAckedPerInc
		b.inflightLongterm = min(b.inflightLongterm+delta*b.smss, bbrMaxVolume)
	}
	if b.roundStart {
		b.raiseInflightLongtermSlope()
	}
}

// adaptLongTermModel is AdaptLongTermModel: "Track ACK state and update
// BBR.max_bw window and BBR.inflight_longterm. Returns true if it decided
// a state transition, false otherwise."
func (b *bbr) adaptLongTermModel() bool {
	rs := &b.rate.rs
	if b.ackPhase == bbrAcksProbeStarting && b.roundStart {
		// "starting to get bw probing samples"
		b.ackPhase = bbrAcksProbeFeedback
	}
	if b.ackPhase == bbrAcksProbeStopping && b.roundStart {
		// "end of samples from bw probing phase"
		b.isBwProbeSample = false
		b.ackPhase = bbrAcksInit
		if b.isInAProbeBWState() && !rs.isAppLimited {
			b.advanceMaxBwFilter()
		}
		// "Precautionary Bandwidth Probing: Acceleration"
		if b.isInAProbeBWState() && b.prevProbePrecautionary && !b.prevProbeTooHigh {
			b.startProbeBWRefill()
			return true
		}
	}
	if !b.isInflightTooHigh() {
		// "Loss rate is safe. Adjust upper bounds upward."
		if b.inflightLongterm == bbrInfBytes {
			return false // "no upper bounds to raise"
		}
		if rs.txInFlight > b.inflightLongterm {
			b.inflightLongterm = rs.txInFlight
		}
		if b.state == bbrProbeBWUp {
			b.probeInflightLongtermUpward()
		}
	}
	return false
}

// isTimeToProbeBW is IsTimeToProbeBW: "Is it time to transition from DOWN
// or CRUISE to REFILL?"
//
//	if (HasElapsedInPhase(BBR.bw_probe_wait) ||
//	    IsRenoCoexistenceProbeTime())
//	  StartProbeBW_REFILL()
//	  return true
//	return false
func (b *bbr) isTimeToProbeBW() bool {
	if b.hasElapsedInPhase(b.bwProbeWait) || b.isRenoCoexistenceProbeTime() {
		b.startProbeBWRefill()
		return true
	}
	return false
}

// pickProbeWait is PickProbeWait: "Randomized decision about how long to
// wait until probing for bandwidth, using round count and wall clock."
// The randomness comes from the controller's seeded PCG generator.
//
//	/* Decide random round-trip bound for wait: */
//	BBR.rounds_since_probe_up =
//	  random_int_between(0, 1); /* 0 or 1 */
//	/* Decide the random wall clock bound for wait: */
//	BBR.bw_probe_wait =
//	  2 + random_float_between(0.0, 1.0) /* 0..1 sec */
func (b *bbr) pickProbeWait() {
	b.roundsSinceProbeUp = b.rng.Uint64() & 1
	b.bwProbeWait = 2*time.Second + time.Duration(b.rng.Uint64()%uint64(time.Second))
}

// isRenoCoexistenceProbeTime is IsRenoCoexistenceProbeTime: "T_reno =
// min(reno_bdp, T_reno_bound) round trips" with reno_bdp "min(BBR.bdp,
// C.cwnd)" in packets (the pseudocode's TargetInflight() is a volume; the
// text of Section 5.3.3.8.2 counts it in packets, ~62 for its examples).
//
//	reno_rounds = TargetInflight()
//	rounds = min(reno_rounds, 63)
//	return BBR.rounds_since_probe_up >= rounds
func (b *bbr) isRenoCoexistenceProbeTime() bool {
	renoRounds := uint64(max(b.targetInflight()/b.smss, 0))
	rounds := min(renoRounds, bbrRenoRoundsMax)
	return b.roundsSinceProbeUp >= rounds
}

// targetInflight is TargetInflight: "How much data do we want in flight?
// Our estimated BDP, unless congestion cut C.cwnd."
func (b *bbr) targetInflight() int64 {
	return min(b.bdp, b.cwnd)
}
