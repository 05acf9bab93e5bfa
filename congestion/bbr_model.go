package congestion

import "time"

// This file updates BBR's network path model: draft-ietf-ccwg-bbr,
// Section 5.5 ("Updating Network Path Model Parameters").

// initRoundCounting is InitRoundCounting of Section 5.5.1.
func (b *bbr) initRoundCounting() {
	b.nextRoundDelivered = 0
	b.roundStart = false
	b.roundCount = 0
}

// updateRound is UpdateRound of Section 5.5.1, for P the most recently
// sent packet of the ACK (RS.prior_delivered is its P.delivered): "BBR
// counts packet-timed round trips by recording state about a sentinel
// packet, and waiting for an ACK of any data packet that was sent after
// that sentinel packet".
//
//	if (P.delivered >= BBR.next_round_delivered)
//	  StartRound()
//	  BBR.round_count++
//	  BBR.rounds_since_probe_up++
//	  BBR.round_start = true
//	else
//	  BBR.round_start = false
//
// C.is_cwnd_limited covers "the last packet-timed round trip": at each
// round start, the round's flag becomes the previous round's.
func (b *bbr) updateRound() {
	rs := &b.rate.rs
	if rs.hasData && rs.priorDelivered >= b.nextRoundDelivered {
		b.startRound()
		b.roundCount++
		b.roundsSinceProbeUp++
		b.roundStart = true
		b.cwndLimitedPrevRound = b.cwndLimitedInRound
		b.cwndLimitedInRound = false
	} else {
		b.roundStart = false
	}
}

// startRound is StartRound of Section 5.5.1:
// "BBR.next_round_delivered = C.delivered".
func (b *bbr) startRound() {
	b.nextRoundDelivered = b.rate.delivered
}

// updateMaxBw is UpdateMaxBw of Section 5.5.5. "By default, the estimator
// discards application-limited samples ... However, the estimator does use
// application-limited samples if the measured delivery rate happens to be
// larger than the current BBR.max_bw estimate" (Section 5.5.4).
//
//	UpdateRound()
//	if (RS.delivery_rate > 0 &&
//	    (RS.delivery_rate >= BBR.max_bw || !RS.is_app_limited))
//	    BBR.max_bw = UpdateWindowedMaxFilter(
//	                  filter=BBR.max_bw_filter,
//	                  value=RS.delivery_rate,
//	                  time=BBR.cycle_count,
//	                  window_length=BBR.MaxBwFilterLen)
func (b *bbr) updateMaxBw() {
	b.updateRound()
	rs := &b.rate.rs
	if rs.deliveryRate > 0 && (rs.deliveryRate >= b.maxBw || !rs.isAppLimited) {
		b.maxBw = b.maxBwFilter.update(rs.deliveryRate, b.cycleCount, bbrMaxBwFilterLen)
	}
}

// advanceMaxBwFilter is AdvanceMaxBwFilter of Section 5.5.6: "one round
// trip after exiting ProbeBW_UP ... BBR increments BBR.cycle_count, the
// virtual time used by the BBR.max_bw filter window."
func (b *bbr) advanceMaxBwFilter() {
	b.cycleCount++
}

// bbrVolume returns bw*d in bytes, capped at bbrMaxVolume.
func bbrVolume(bw uint64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(min(rateMulDiv(bw, uint64(d), uint64(time.Second)), bbrMaxVolume))
}

// updateACKAggregation is UpdateACKAggregation of Section 5.5.9: "For
// each ACK, the algorithm computes a sample of the estimated extra ACKed
// data beyond the amount of data that the sender expected to be ACKed over
// the timescale of a round trip, given the BBR.bw."
//
//	interval = (Now() - BBR.extra_acked_interval_start)
//	expected_delivered = BBR.bw * interval
//	/* Reset interval if ACK rate is below expected rate: */
//	if (BBR.extra_acked_delivered <= expected_delivered)
//	    BBR.extra_acked_delivered = 0
//	    BBR.extra_acked_interval_start = Now()
//	    expected_delivered = 0
//	BBR.extra_acked_delivered += RS.newly_acked
//	extra = BBR.extra_acked_delivered - expected_delivered
//	extra = min(extra, C.cwnd)
//	filter_len = BBR.full_bw_reached ? BBR.ExtraAckedFilterLen : 1
//	BBR.extra_acked = UpdateWindowedMaxFilter(BBR.extra_acked_filter,
//	    extra, BBR.round_count, filter_len)
func (b *bbr) updateACKAggregation() {
	expected := bbrVolume(b.bw, b.now.Sub(b.extraAckedStart))
	if b.extraAckedDeliv <= expected {
		b.extraAckedDeliv = 0
		b.extraAckedStart = b.now
		expected = 0
	}
	b.extraAckedDeliv += b.rate.rs.newlyAcked
	extra := min(b.extraAckedDeliv-expected, b.cwnd)
	var filterLen uint64 = 1 // "in Startup, just remember 1 round"
	if b.fullBwReached {
		filterLen = bbrExtraAckedFilterLen
	}
	b.extraAcked = int64(b.extraAckedFilter.update(uint64(max(extra, 0)), b.roundCount, filterLen))
}

// isInflightTooHigh is IsInflightTooHigh of Section 5.5.10.2: "Do loss
// signals suggest C.inflight was too high?" QUIC has selective ACKs.
//
//	return ((RS.lost > RS.tx_in_flight * BBR.LossThresh) ||
//	        (RS.lost > 0 && !C.has_selective_acks))
func (b *bbr) isInflightTooHigh() bool {
	rs := &b.rate.rs
	return rs.lost*100 > rs.txInFlight*bbrLossThresh
}

// handleInflightTooHigh is HandleInflightTooHigh of Section 5.5.10.2.
// "the BBR.Beta (0.7x) bound is to try to ensure that BBR does not react
// more dramatically than CUBIC's 0.7x multiplicative decrease factor."
//
//	BBR.prev_probe_too_high = true
//	BBR.is_bw_probe_sample = false  /* only react once per bw probe */
//	if (!RS.is_app_limited)
//	  BBR.inflight_longterm = max(RS.tx_in_flight,
//	                        TargetInflight() * BBR.Beta)
//	if (BBR.state == ProbeBW_UP)
//	  BBR.undo_state = ProbeBW_UP
//	  StartProbeBW_DOWN()
func (b *bbr) handleInflightTooHigh() {
	rs := &b.rate.rs
	b.prevProbeTooHigh = true
	b.isBwProbeSample = false
	if !rs.isAppLimited {
		b.inflightLongterm = max(rs.txInFlight, b.targetInflight()*bbrBeta/100)
	}
	if b.state == bbrProbeBWUp {
		b.undoState = bbrProbeBWUp
		b.startProbeBWDown()
	}
}

// noteLoss is NoteLoss of Section 5.5.10.2.
//
//	if (!BBR.is_loss_in_round)   /* first loss in this round trip? */
//	  BBR.loss_round_delivered = C.delivered
//	  SaveStateUponLoss()
//	BBR.is_loss_in_round = true
func (b *bbr) noteLoss() {
	if !b.isLossInRound {
		b.lossRoundDelivered = b.rate.delivered
		b.saveStateUponLoss()
	}
	b.isLossInRound = true
}

// handleLostPacket is HandleLostPacket(P) of Section 5.5.10.2; known
// reports that the sampler had P's state. "BBR processes each loss
// detection event to more precisely estimate C.inflight at which loss
// rates cross BBR.LossThresh".
//
//	NoteLoss()
//	if (!BBR.is_bw_probe_sample)
//	  return /* not a packet sent while probing bandwidth */
//	RS.tx_in_flight = P.tx_in_flight /* C.inflight at transmit */
//	RS.lost = C.lost - P.lost /* data lost since transmit */
//	RS.is_app_limited = P.is_app_limited
//	if (IsInflightTooHigh())
//	  RS.tx_in_flight = InflightAtLoss(P)
//	  HandleInflightTooHigh()
func (b *bbr) handleLostPacket(p *ratePacket, known bool) {
	b.noteLoss()
	if !b.isBwProbeSample || !known {
		return
	}
	rs := &b.rate.rs
	rs.txInFlight = p.txInFlight
	rs.lost = b.rate.lost - p.lost
	rs.isAppLimited = p.isAppLimited
	if b.isInflightTooHigh() {
		rs.txInFlight = b.inflightAtLoss(p)
		b.handleInflightTooHigh()
	}
}

// inflightAtLoss is InflightAtLoss(P) of Section 5.5.10.2: "At what
// prefix of "packet" P did losses exceed BBR.LossThresh?"
//
//	lost_prefix >= (BBR.LossThresh * inflight_prev - lost_prev) /
//	                  (1 - BBR.LossThresh)
//	inflight_at_loss = inflight_prev + lost_prefix
func (b *bbr) inflightAtLoss(p *ratePacket) int64 {
	rs := &b.rate.rs
	inflightPrev := rs.txInFlight - p.size // "What was in flight before this packet?"
	lostPrev := rs.lost - p.size           // "What was lost before this packet?"
	lostPrefix := (bbrLossThresh*inflightPrev - 100*lostPrev) / (100 - bbrLossThresh)
	return max(inflightPrev+lostPrefix, 0)
}

// updateLatestDeliverySignals is UpdateLatestDeliverySignals of Section
// 5.5.10.3, "Near start of ACK processing".
//
//	BBR.loss_round_start = 0
//	BBR.bw_latest       = max(BBR.bw_latest,       RS.delivery_rate)
//	BBR.inflight_latest = max(BBR.inflight_latest, RS.delivered)
//	if (RS.prior_delivered >= BBR.loss_round_delivered)
//	  BBR.loss_round_delivered = C.delivered
//	  BBR.loss_round_start = 1
func (b *bbr) updateLatestDeliverySignals() {
	rs := &b.rate.rs
	b.lossRoundStart = false
	b.bwLatest = max(b.bwLatest, rs.deliveryRate)
	b.inflightLatest = max(b.inflightLatest, rs.delivered)
	if rs.hasData && rs.priorDelivered >= b.lossRoundDelivered {
		b.lossRoundDelivered = b.rate.delivered
		b.lossRoundStart = true
	}
}

// advanceLatestDeliverySignals is AdvanceLatestDeliverySignals of Section
// 5.5.10.3, "Near end of ACK processing". It also restarts the count of
// discontiguous lost ranges of CheckStartupHighLoss.
//
//	if (BBR.loss_round_start)
//	  BBR.bw_latest       = RS.delivery_rate
//	  BBR.inflight_latest = RS.delivered
func (b *bbr) advanceLatestDeliverySignals() {
	if b.lossRoundStart {
		b.bwLatest = b.rate.rs.deliveryRate
		b.inflightLatest = b.rate.rs.delivered
		b.lossEventsInRound = 0
	}
}

// resetCongestionSignals is ResetCongestionSignals of Section 5.5.10.3.
func (b *bbr) resetCongestionSignals() {
	b.isLossInRound = false
	b.bwLatest = 0
	b.inflightLatest = 0
}

// updateCongestionSignals is UpdateCongestionSignals of Section 5.5.10.3:
// "Update congestion state on every ACK".
//
//	UpdateMaxBw()
//	if (!BBR.loss_round_start)
//	  return  /* wait until end of round trip */
//	AdaptLowerBoundsFromCongestion()  /* once per round, adapt */
//	BBR.is_loss_in_round = false
//
// In the rounds right after ProbeRTT, whose rate samples still measure
// ProbeRTT, the loss round end adapts nothing and the loss is kept for the
// next one (holdLowerBoundsAfterProbeRTT, a deviation from the draft).
func (b *bbr) updateCongestionSignals() {
	b.updateMaxBw()
	if !b.lossRoundStart {
		return
	}
	if b.roundCount < b.lowerBoundsFromRound {
		return
	}
	b.adaptLowerBoundsFromCongestion()
	b.isLossInRound = false
}

// adaptLowerBoundsFromCongestion is AdaptLowerBoundsFromCongestion of
// Section 5.5.10.3: "Once per round trip respond to congestion". "When not
// explicitly accelerating to probe for bandwidth (Drain, ProbeRTT,
// ProbeBW_DOWN, ProbeBW_CRUISE), BBR responds to loss by slowing down to
// some extent."
func (b *bbr) adaptLowerBoundsFromCongestion() {
	if b.isProbingBW() {
		return
	}
	if b.isLossInRound {
		b.initLowerBounds()
		b.lossLowerBounds()
	}
}

// initLowerBounds is InitLowerBounds of Section 5.5.10.3: "Handle the
// first congestion episode in this cycle".
func (b *bbr) initLowerBounds() {
	if b.bwShortterm == bbrInfBW {
		b.bwShortterm = b.maxBw
	}
	if b.inflightShortterm == bbrInfBytes {
		b.inflightShortterm = b.cwnd
	}
}

// lossLowerBounds is LossLowerBounds of Section 5.5.10.3: "Adjust model
// once per round based on loss".
//
//	BBR.bw_shortterm       = max(BBR.bw_latest,
//	                             BBR.Beta * BBR.bw_shortterm)
//	BBR.inflight_shortterm = max(BBR.inflight_latest,
//	                             BBR.Beta * BBR.inflight_shortterm)
//
// with one deviation from the draft: BBR.bw_latest enters as the bandwidth
// whose pacing rate it is, BBR.bw_latest / (1 - BBR.PacingMarginPercent/100)
// (latestBwModel), so that the flow then paces at BBR.bw_latest.
func (b *bbr) lossLowerBounds() {
	b.bwShortterm = max(b.latestBwModel(), rateMulDiv(b.bwShortterm, bbrBeta, 100))
	b.inflightShortterm = max(b.inflightLatest, b.inflightShortterm*bbrBeta/100)
}

// latestBwModel returns the BBR.bw whose pacing rate is BBR.bw_latest:
// BBR.bw_latest / (1 - BBR.PacingMarginPercent/100), at most BBR.max_bw
// (or BBR.bw_latest if that is higher). LossLowerBounds uses it in place
// of BBR.bw_latest, a deviation from draft-ietf-ccwg-bbr, Section
// 5.5.10.3.
//
// BBR.bw_shortterm is a bound on BBR.bw, the model, while BBR.bw_latest is
// a measurement of delivery, and the two differ by the pacing margin: the
// flow paces at "pacing_gain * bw * (100 - BBR.PacingMarginPercent) / 100"
// (SetPacingRateWithGain, Section 5.6.2), so when it cruises at BBR.bw it
// delivers at most 99% of BBR.bw, whatever the path can carry. Taking
// BBR.bw_latest itself as the new BBR.bw_shortterm therefore lowers the
// pacing rate by up to the margin again in every round with a loss, on top
// of what the loss cost the delivery, and with random loss nearly every
// round has one: the margin compounds over the ~60 rounds between two
// bandwidth probes. (At 100 Mbit/s, 40 ms and 1% random loss, simulated in
// internal/ccsim, the model fell by about 0.4% per round in ProbeBW_CRUISE
// with the draft's rule, and by about 0.2% with the margin undone; the
// best sample of a round has fewer losses than the average, and lags the
// falling rate by a round.) The draft means something else: in
// ProbeBW_CRUISE the flow responds to loss by "slowing down to match the
// latest delivery process" (Section 5.3.3.2), and "the steady-state
// (non-bandwidth-probing) BBR response to a non-application-limited round
// trip with X% packet loss is to reduce the sending rate by X%" (Section
// 5.3.3.8.3). Undoing the margin does that: after the cut, the flow paces
// at the delivery rate it measured, lower than before by what the loss
// and the path took from the delivery and not by another 1%, and the
// margin applies once, to the model. The response to congestion keeps its
// strength: when a competing flow or a lower path rate holds the delivery
// rate down, BBR.bw_shortterm still falls to it, by up to BBR.Beta per
// round, and the flow then paces at that rate instead of 1% below it
// (internal/ccsim, TestBackOffAfterBandwidthDrop). (Production BBRv2 in
// Chromium's QUIC, quiche, paces at "pacing_gain * BandwidthEstimate()"
// with no margin, so its bandwidth_lo likewise tracks the latest delivery
// rate itself.)
//
// The same holds for CE marks, which take this path (OnCongestionEvent).
// BBR.inflight_latest needs no such correction: C.cwnd carries no margin.
// The correction never takes the result above BBR.max_bw, which already
// bounds BBR.bw (BoundBWForModel).
func (b *bbr) latestBwModel() uint64 {
	bw := rateMulDiv(b.bwLatest, 100, 100-bbrPacingMarginPercent)
	return min(bw, max(b.maxBw, b.bwLatest))
}

// resetShortTermModel is ResetShortTermModel of Section 5.5.10.3.
func (b *bbr) resetShortTermModel() {
	b.bwShortterm = bbrInfBW
	b.inflightShortterm = bbrInfBytes
}

// boundBWForModel is BoundBWForModel of Section 5.5.10.3:
// "BBR.bw = min(BBR.max_bw, BBR.bw_shortterm)".
func (b *bbr) boundBWForModel() {
	b.bw = min(b.maxBw, b.bwShortterm)
}

// saveStateUponLoss is SaveStateUponLoss of Section 5.5.11.1: "Save state
// in case a loss episode is later declared spurious".
func (b *bbr) saveStateUponLoss() {
	b.saveCwnd()
	b.undoState = bbrNone
	b.undoBwShortterm = b.bwShortterm
	b.undoInflightShortterm = b.inflightShortterm
	b.undoInflightLongterm = b.inflightLongterm
}

// handleSpuriousLossDetection is HandleSpuriousLossDetection of Section
// 5.5.11.2: "If a loss recovery episode is declared spurious, BBR restores
// aspects of its state to their previously saved values."
func (b *bbr) handleSpuriousLossDetection() {
	b.restoreCwnd()
	b.isLossInRound = false
	b.resetFullBW()
	b.bwShortterm = max(b.bwShortterm, b.undoBwShortterm)
	b.inflightShortterm = max(b.inflightShortterm, b.undoInflightShortterm)
	b.inflightLongterm = max(b.inflightLongterm, b.undoInflightLongterm)
	// "If flow was probing bandwidth, return to that state:"
	if b.undoState == bbrStartup && b.state != bbrStartup {
		b.fullBwReached = false
		if b.state != bbrProbeRTT {
			b.enterStartup()
		}
	} else if b.undoState == bbrProbeBWUp && b.state != bbrProbeBWUp {
		if b.state != bbrProbeRTT {
			b.startProbeBWRefill()
		}
	}
	b.undoState = bbrNone
}
