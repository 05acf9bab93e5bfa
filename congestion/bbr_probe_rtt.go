package congestion

import "time"

// This file holds BBR's ProbeRTT state and min_rtt estimation
// (draft-ietf-ccwg-bbr, Section 5.3.4) and the restart from idle (Section
// 5.4).

// updateMinRTT is UpdateMinRTT of Section 5.3.4.3 with RS.rtt; see
// filterMinRTT.update.
//
// One deviation, for RTT samples of packets sent while the connection was
// application-limited with no more than ProbeRTTCwnd() in flight
// (appLimitedDrained): such a flow already keeps its flight where ProbeRTT
// would put it, and its samples are those ProbeRTT would take. "When the
// flow's rate is low enough for long enough to drain its queue in the
// bottleneck ... the BBR.probe_rtt_min_delay filter opportunistically
// picks up these measurements, and the BBR.probe_rtt_min_delay estimate
// refreshes without requiring ProbeRTT" (Section 5.3.4.2). The draft's
// filter takes only a strictly lower sample, which such a flow rarely
// measures: its samples vary with the peer's ACK delay around the
// minimum and equal it at best. So a drained sample within an eighth of
// BBR.probe_rtt_min_delay restarts BBR.ProbeRTTInterval
// (filterMinRTT.refreshDrained), and one that
// finds the estimate expired (which UpdateMinRTT then replaces with it)
// does not start ProbeRTT (checkProbeRTT), as for the restart from idle,
// where "the idleness is deemed a sufficient attempt to coordinate to
// drain the queue" (Section 5.3.4.2). A request/response flow otherwise
// entered ProbeRTT every five seconds for nothing; when a bulk transfer
// began just then, ProbeRTT cut its Startup short before the loss that
// ends Startup was counted, and a second Startup overshot the path again
// (half as many queue drops again as a fresh connection's in
// TestSimAppLimitedWindow).
func (b *bbr) updateMinRTT() {
	b.minRTT.update(b.now, b.rate.rs.rtt)
	if b.appLimitedDrained() {
		b.minRTT.refreshDrained(b.now, b.rate.rs.rtt)
	}
}

// checkProbeRTT is CheckProbeRTT of Section 5.3.4.3. "In any state other
// than ProbeRTT itself, if the BBR.probe_rtt_min_delay estimate has not
// been updated (i.e., by getting a lower RTT measurement) for more than
// BBR.ProbeRTTInterval = 5 seconds, then BBR enters ProbeRTT".
//
//	if (BBR.state != ProbeRTT &&
//	    BBR.probe_rtt_expired &&
//	    !BBR.idle_restart)
//	  EnterProbeRTT()
//	  SaveCwnd()
//	  BBR.probe_rtt_done_stamp = 0
//	  BBR.ack_phase = ACKS_PROBE_STOPPING
//	  StartRound()
//	if (BBR.state == ProbeRTT)
//	  HandleProbeRTT()
//	if (RS.delivered > 0)
//	  BBR.idle_restart = false
//
// ProbeRTT is not entered on an ACK whose sample appLimitedDrained
// reports, a deviation explained at updateMinRTT.
func (b *bbr) checkProbeRTT() {
	if b.state != bbrProbeRTT && b.minRTT.probeRTTExpired && !b.idleRestart && !b.appLimitedDrained() {
		b.enterProbeRTT()
		b.saveCwnd()
		b.probeRTTDoneStamp = time.Time{}
		b.ackPhase = bbrAcksProbeStopping
		b.startRound()
	}
	if b.state == bbrProbeRTT {
		b.handleProbeRTT()
	}
	if b.rate.rs.delivered > 0 {
		b.idleRestart = false
	}
}

// appLimitedDrained reports whether the ACK's RTT sample measured a
// packet sent while the connection was application-limited with at most
// ProbeRTTCwnd() in flight (see checkProbeRTT).
func (b *bbr) appLimitedDrained() bool {
	rs := &b.rate.rs
	return rs.rtt >= 0 && rs.isAppLimited && rs.txInFlight <= b.probeRTTCwnd()
}

// enterProbeRTT is EnterProbeRTT of Section 5.3.4.3.
//
//	BBR.state = ProbeRTT
//	BBR.pacing_gain = 1
//	BBR.cwnd_gain = BBR.ProbeRTTCwndGain  /* 0.5 */
func (b *bbr) enterProbeRTT() {
	b.state = bbrProbeRTT
	b.pacingGain = bbrUnityGain
	b.cwndGain = bbrProbeRTTCwndGain
}

// handleProbeRTT is HandleProbeRTT of Section 5.3.4.3: "After maintaining
// C.inflight at BBR.ProbeRTTCwndGain*BBR.bdp for at least
// BBR.ProbeRTTDuration (200 ms) and at least one packet-timed round trip,
// BBR leaves ProbeRTT".
//
//	/* Ignore low rate samples during ProbeRTT: */
//	MarkConnectionAppLimited()
//	if (BBR.probe_rtt_done_stamp == 0 &&
//	    C.inflight <= ProbeRTTCwnd())
//	  /* Wait for at least BBR.ProbeRTTDuration to elapse: */
//	  BBR.probe_rtt_done_stamp =
//	    Now() + BBR.ProbeRTTDuration
//	  /* Wait for at least one round to elapse: */
//	  BBR.probe_rtt_round_done = false
//	  StartRound()
//	else if (BBR.probe_rtt_done_stamp != 0)
//	  if (BBR.round_start)
//	    BBR.probe_rtt_round_done = true
//	  if (BBR.probe_rtt_round_done)
//	    CheckProbeRTTDone()
func (b *bbr) handleProbeRTT() {
	b.rate.markAppLimited(b.inflight)
	if b.probeRTTDoneStamp.IsZero() && b.inflight <= b.probeRTTCwnd() {
		b.probeRTTDoneStamp = b.now.Add(bbrProbeRTTDuration)
		b.probeRTTRoundDone = false
		b.startRound()
	} else if !b.probeRTTDoneStamp.IsZero() {
		if b.roundStart {
			b.probeRTTRoundDone = true
		}
		if b.probeRTTRoundDone {
			b.checkProbeRTTDone()
		}
	}
}

// checkProbeRTTDone is CheckProbeRTTDone of Section 5.3.4.3.
//
//	if (BBR.probe_rtt_done_stamp != 0 &&
//	    Now() > BBR.probe_rtt_done_stamp)
//	  /* schedule next ProbeRTT: */
//	  BBR.probe_rtt_min_stamp = Now()
//	  RestoreCwnd()
//	  ExitProbeRTT()
func (b *bbr) checkProbeRTTDone() {
	if !b.probeRTTDoneStamp.IsZero() && b.now.After(b.probeRTTDoneStamp) {
		b.minRTT.probeRTTMinStamp = b.now
		b.restoreCwnd()
		b.exitProbeRTT()
	}
}

// exitProbeRTT is ExitProbeRTT of Section 5.3.4.4: "When exiting
// ProbeRTT, BBR transitions to ProbeBW if it estimates the pipe was filled
// already, or Startup otherwise." "since the connection is exiting
// ProbeRTT, we know that infligh is already below the estimated BDP, so
// the connection can proceed immediately to ProbeBW_CRUISE."
//
//	ResetShortTermModel()
//	if (BBR.full_bw_reached)
//	  StartProbeBW_DOWN()
//	  StartProbeBW_CRUISE()
//	else
//	  EnterStartup()
func (b *bbr) exitProbeRTT() {
	b.resetShortTermModel()
	b.holdLowerBoundsAfterProbeRTT()
	if b.fullBwReached {
		b.startProbeBWDown()
		b.startProbeBWCruise()
	} else {
		b.enterStartup()
	}
}

// bbrProbeRTTEchoRounds is the number of packet-timed rounds after
// ProbeRTT whose rate samples still measure ProbeRTT's deliveries; see
// holdLowerBoundsAfterProbeRTT.
const bbrProbeRTTEchoRounds = 2

// holdLowerBoundsAfterProbeRTT makes the loss response outside bandwidth
// probing (AdaptLowerBoundsFromCongestion, Section 5.5.10.3) wait until the
// rate samples describe the path again after ProbeRTT. It is a deviation
// from the draft, whose pseudocode adapts the short-term model at the end
// of every loss round outside ProbeBW_REFILL, ProbeBW_UP and Startup.
//
// ExitProbeRTT resets the short-term model ("ResetShortTermModel()") and
// StartProbeBW_DOWN the congestion signals, and the flow cruises at
// BBR.max_bw again. But the delivery signals of the next loss round,
// BBR.bw_latest and BBR.inflight_latest, are maxima of rate samples that
// still measure ProbeRTT, which held C.inflight at half a BDP or less. A
// sample is the data delivered between the transmission of a packet and
// its acknowledgment (Section 4.1.2.3): until the first packet sent after
// ProbeRTT is acknowledged, the samples are those of packets sent during
// it, and in the round that this acknowledgment starts they are those of
// packets whose round trips saw the deliveries of packets sent during
// ProbeRTT; both run at a fraction of the rate. Only from the second round
// after ExitProbeRTT on do the samples measure flights sent after it. The
// draft itself says to "Ignore low rate samples during
// ProbeRTT" (HandleProbeRTT, Section 5.3.4.3), which MarkConnectionAppLimited
// does for BBR.max_bw only. On a path with random loss nearly every round
// has a loss, so LossLowerBounds then sets BBR.bw_shortterm to max(half
// the rate or less, BBR.Beta * BBR.max_bw) = 0.7 * BBR.max_bw right after
// each ProbeRTT, a cut that no congestion caused; and as the following
// rounds deliver only what the lowered rate sends, the model can stay far
// below the path's rate until the next ProbeBW_REFILL (at 100 Mbit/s, 40 ms
// and 1% loss, one simulated flow cruised at 62 Mbit/s for the 2.4 s after
// a ProbeRTT; internal/ccsim, TestPropertyUtilisationOnePercentLoss).
//
// So for bbrProbeRTTEchoRounds rounds after ExitProbeRTT, the ends of
// loss rounds leave the short-term model alone and keep
// BBR.is_loss_in_round: a loss seen then is answered at the first loss
// round end after them, against delivery signals of the flow's own
// post-ProbeRTT sending. As in ProbeBW_REFILL ("after one full round trip
// of sending in ProbeBW_REFILL the flow ... starts to see bandwidth samples
// reflecting its ProbeBW_REFILL behavior", Section 5.3.3.3), the flow
// holds its rate for the round trips its samples lag behind. The loss
// response during ProbeRTT itself is the draft's; the hold delays the
// response to a loss by at most two round trips, once per ProbeRTT (every
// 5 seconds or so for a bulk flow).
func (b *bbr) holdLowerBoundsAfterProbeRTT() {
	b.lowerBoundsFromRound = b.roundCount + bbrProbeRTTEchoRounds
}

// handleRestartFromIdle is HandleRestartFromIdle of Section 5.4.1: "if the
// flow's BBR.state is ProbeBW, and the flow is application-limited, and
// there are no packets in flight currently, then before the flow sends one
// or more packets BBR sets C.pacing_rate to exactly BBR.bw."
//
//	if (C.inflight == 0 && C.app_limited)
//	  BBR.idle_restart = true
//	  BBR.extra_acked_interval_start = Now()
//	  if (IsInAProbeBWState())
//	    SetPacingRateWithGain(1)
//	  else if (BBR.state == ProbeRTT)
//	    CheckProbeRTTDone()
//
// With the interval's start it also clears BBR.extra_acked_delivered, as
// OnInit and UpdateACKAggregation do: it is "The volume of data marked as
// delivered since BBR.extra_acked_interval_start" (Section 2.12), and
// nothing was delivered since Now(). The pseudocode moves the start only:
// a count that had run ahead of BBR.bw * interval before the idle period
// then never came back below expected_delivered, which restarts from zero
// at each flight, and BBR.extra_acked (and BBR.max_inflight and, in
// Startup, C.cwnd) grew by every flight of an application-limited flow
// (TestBBRExtraAckedAfterIdleRestart). Linux's BBR clears both when a
// transmission starts after idle (ack_epoch_mstamp and ack_epoch_acked,
// CA_EVENT_TX_START).
func (b *bbr) handleRestartFromIdle() {
	if b.inflight <= 0 && b.rate.appLimited != 0 {
		b.idleRestart = true
		b.extraAckedStart = b.now
		b.extraAckedDeliv = 0
		if b.isInAProbeBWState() {
			b.setPacingRateWithGain(bbrUnityGain)
		} else if b.state == bbrProbeRTT {
			b.checkProbeRTTDone()
		}
	}
}
