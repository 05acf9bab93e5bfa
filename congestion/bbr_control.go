package congestion

import "time"

// This file computes BBR's control parameters: pacing rate, send quantum
// and congestion window (draft-ietf-ccwg-bbr, Section 5.6).

// initPacingRate is InitPacingRate of Section 5.6.2: "When a BBR flow
// starts it has no bw estimate (bw is 0). So in this case it sets an
// initial pacing rate based on the transport sender implementation's
// initial congestion window ..., the initial C.srtt after the first
// non-zero RTT sample, and the initial pacing_gain".
//
//	nominal_bandwidth = C.InitialCwnd / (C.srtt ? C.srtt : 1ms)
//	C.pacing_rate =  BBR.StartupPacingGain * nominal_bandwidth
func (b *bbr) initPacingRate() {
	srtt := b.srtt()
	if srtt <= 0 {
		srtt = time.Millisecond
	}
	nominal := rateMulDiv(uint64(b.initialCwnd), uint64(time.Second), uint64(srtt))
	b.pacingRate = rateMulDiv(nominal, bbrStartupPacingGain, 100)
}

// setPacingRateWithGain is SetPacingRateWithGain of Section 5.6.2: BBR
// "updates its pacing rate to be proportional to bw, as long as it
// estimates that it has filled the pipe ..., or doing so increases the
// pacing rate." "the BBR.PacingMarginPercent constant of 1 aims to cause
// BBR to pace at 1% below the bw, on average."
//
//	rate = pacing_gain * bw * (100 - BBR.PacingMarginPercent) / 100
//	if (BBR.full_bw_reached || rate > C.pacing_rate)
//	  C.pacing_rate = rate
func (b *bbr) setPacingRateWithGain(gain int64) {
	rate := rateMulDiv(b.bw, uint64(gain)*(100-bbrPacingMarginPercent), 100*100)
	if rate > 0 && (b.fullBwReached || rate > b.pacingRate) {
		b.pacingRate = rate
	}
}

// setPacingRate is SetPacingRate of Section 5.6.2.
func (b *bbr) setPacingRate() {
	b.setPacingRateWithGain(b.pacingGain)
}

// setSendQuantum is SetSendQuantum of Section 5.6.3.
//
//	C.send_quantum = C.pacing_rate * 1ms
//	C.send_quantum = min(C.send_quantum, 64 KBytes)
//	C.send_quantum = max(C.send_quantum, 2 * C.SMSS)
func (b *bbr) setSendQuantum() {
	q := int64(min(b.pacingRate/1000, bbrMaxSendQuantum))
	b.sendQuantum = max(q, 2*b.smss)
}

// updateOffloadBudget is UpdateOffloadBudget of Section 5.5.8.2: "For
// QUIC, in the simplest case, offload_budget is equal to the send
// quantum".
func (b *bbr) updateOffloadBudget() {
	b.offloadBudget = b.sendQuantum
}

// bdpMultiple is BDPMultiple(bw, gain) of Section 5.6.4.2, gain in
// percent.
//
//	if (BBR.min_rtt == Infinity)
//	  return C.InitialCwnd /* no valid RTT samples yet */
//	BBR.bdp = BBR.bw * BBR.min_rtt
//	return gain * BBR.bdp
//
// It computes the BDP of bw; updateMaxInflight keeps BBR.bdp for BBR.bw.
func (b *bbr) bdpMultiple(bw uint64, gain int64) int64 {
	if b.minRTT.minRTT == filterInfiniteRTT {
		return b.initialCwnd
	}
	return bbrVolume(bw, b.minRTT.minRTT) * gain / 100
}

// quantizationBudget is QuantizationBudget of Section 5.6.4.2: "The
// "quanta" term allows enough quanta in flight on the sending and
// receiving hosts to reach high throughput even in environments using
// offload mechanisms."
//
//	UpdateOffloadBudget()
//	inflight_cap = max(inflight_cap, BBR.offload_budget)
//	inflight_cap = max(inflight_cap, BBR.MinPipeCwnd)
//	if (BBR.state == ProbeBW_UP)
//	  inflight_cap += 2*C.SMSS
//	return inflight_cap
func (b *bbr) quantizationBudget(inflightCap int64) int64 {
	b.updateOffloadBudget()
	inflightCap = max(inflightCap, b.offloadBudget, b.minPipeCwnd())
	if b.state == bbrProbeBWUp {
		inflightCap += 2 * b.smss
	}
	return inflightCap
}

// inflightFor is Inflight(bw, gain) of Sections 5.3.3.9 and 5.6.4.2:
//
//	inflight_cap = BDPMultiple(gain)
//	return QuantizationBudget(inflight_cap)
func (b *bbr) inflightFor(bw uint64, gain int64) int64 {
	return b.quantizationBudget(b.bdpMultiple(bw, gain))
}

// updateMaxInflight is UpdateMaxInflight of Section 5.6.4.2: "The BBR
// BBR.max_inflight is the upper bound on the volume of data BBR allows in
// flight."
//
//	inflight_cap = BDPMultiple(BBR.cwnd_gain)
//	inflight_cap += BBR.extra_acked
//	BBR.max_inflight = QuantizationBudget(inflight_cap)
func (b *bbr) updateMaxInflight() {
	if b.minRTT.minRTT != filterInfiniteRTT {
		b.bdp = bbrVolume(b.bw, b.minRTT.minRTT) // BBR.bdp = BBR.bw * BBR.min_rtt
	}
	inflightCap := b.bdpMultiple(b.bw, b.cwndGain)
	inflightCap += b.extraAcked
	b.maxInflight = b.quantizationBudget(inflightCap)
}

// setCwnd is SetCwnd of Section 5.6.4.6: "When C.cwnd is above the
// BBR.max_inflight derived from BBR's path model, BBR cuts C.cwnd
// immediately to the BBR.max_inflight. When C.cwnd is below
// BBR.max_inflight, BBR raises C.cwnd gradually and cautiously, increasing
// C.cwnd by no more than the amount of data acknowledged".
//
//	UpdateMaxInflight()
//	if (BBR.full_bw_reached)
//	  C.cwnd = min(C.cwnd + RS.newly_acked, BBR.max_inflight)
//	else if (C.cwnd < BBR.max_inflight || C.delivered < C.InitialCwnd)
//	  C.cwnd = C.cwnd + RS.newly_acked
//	C.cwnd = max(C.cwnd, BBR.MinPipeCwnd)
//	BoundCwndForProbeRTT()
//	BoundCwndForModel()
func (b *bbr) setCwnd() {
	b.updateMaxInflight()
	newlyAcked := b.rate.rs.newlyAcked
	if b.fullBwReached {
		b.cwnd = min(b.cwnd+newlyAcked, b.maxInflight)
	} else if b.cwnd < b.maxInflight || b.rate.delivered < b.initialCwnd {
		b.cwnd = min(b.cwnd+newlyAcked, bbrMaxVolume)
	}
	b.cwnd = max(b.cwnd, b.minPipeCwnd())
	b.boundCwndForProbeRTT()
	b.boundCwndForModel()
}

// probeRTTCwnd is ProbeRTTCwnd of Section 5.6.4.5.
//
//	probe_rtt_cwnd = BDPMultiple(BBR.bw, BBR.ProbeRTTCwndGain)
//	probe_rtt_cwnd = max(probe_rtt_cwnd, BBR.MinPipeCwnd)
func (b *bbr) probeRTTCwnd() int64 {
	return max(b.bdpMultiple(b.bw, bbrProbeRTTCwndGain), b.minPipeCwnd())
}

// boundCwndForProbeRTT is BoundCwndForProbeRTT of Section 5.6.4.5.
func (b *bbr) boundCwndForProbeRTT() {
	if b.state == bbrProbeRTT {
		b.cwnd = min(b.cwnd, b.probeRTTCwnd())
	}
}

// boundCwndForModel is BoundCwndForModel of Section 5.6.4.7: "BBR bounds
// C.cwnd based on recent congestion, as outlined in the "Volume Cap"
// column of the table".
//
//	cap = Infinity
//	if (IsInAProbeBWState() &&
//	    BBR.state != ProbeBW_CRUISE)
//	  cap = BBR.inflight_longterm
//	else if (BBR.state == ProbeRTT ||
//	         BBR.state == ProbeBW_CRUISE)
//	  cap = InflightWithHeadroom()
//	/* apply BBR.inflight_shortterm (possibly infinite): */
//	cap = min(cap, BBR.inflight_shortterm)
//	cap = max(cap, BBR.MinPipeCwnd)
//	C.cwnd = min(C.cwnd, cap)
func (b *bbr) boundCwndForModel() {
	var inflightCap int64 = bbrInfBytes
	if b.isInAProbeBWState() && b.state != bbrProbeBWCruise {
		inflightCap = b.inflightLongterm
	} else if b.state == bbrProbeRTT || b.state == bbrProbeBWCruise {
		inflightCap = b.inflightWithHeadroom()
	}
	inflightCap = min(inflightCap, b.inflightShortterm)
	inflightCap = max(inflightCap, b.minPipeCwnd())
	b.cwnd = min(b.cwnd, inflightCap)
}

// saveCwnd is SaveCwnd of Section 5.6.4.4: it remembers "the last-known
// good C.cwnd (the latest C.cwnd unmodulated by loss recovery or
// ProbeRTT)".
//
//	if (!InLossRecovery() && BBR.state != ProbeRTT)
//	  BBR.prior_cwnd = C.cwnd
//	else
//	  BBR.prior_cwnd = max(BBR.prior_cwnd, C.cwnd)
func (b *bbr) saveCwnd() {
	if !b.inRecovery && b.state != bbrProbeRTT {
		b.priorCwnd = b.cwnd
	} else {
		b.priorCwnd = max(b.priorCwnd, b.cwnd)
	}
}

// restoreCwnd is RestoreCwnd of Section 5.6.4.4:
// "C.cwnd = max(C.cwnd, BBR.prior_cwnd)".
func (b *bbr) restoreCwnd() {
	b.cwnd = max(b.cwnd, b.priorCwnd)
}
