package congestion

import (
	"math"
	"math/rand/v2"
	"time"
)

// This file holds BBR's state and maps the Controller callbacks onto the
// steps of draft-ietf-ccwg-bbr (BBRv3), Section 5.2 ("Algorithm
// Organization"). The other concerns live beside it:
//
//	bbr_startup.go   Startup and Drain (Sections 5.3.1, 5.3.2)
//	bbr_probe_bw.go  ProbeBW and its phases (Section 5.3.3)
//	bbr_probe_rtt.go ProbeRTT, min_rtt, restart from idle (Sections 5.3.4, 5.4)
//	bbr_model.go     path model: rounds, max_bw, extra_acked, loss (Section 5.5)
//	bbr_control.go   pacing rate, send quantum, cwnd (Section 5.6)
//
// Names follow the draft's pseudocode: BBR.max_bw is b.maxBw, C.cwnd is
// b.cwnd, UpdateMaxBw() is b.updateMaxBw(). Volumes are bytes (int64),
// rates bytes per second (uint64), gains percent.

// bbrState is BBR.state.
type bbrState uint8

const (
	bbrStartup bbrState = iota
	bbrDrain
	bbrProbeBWDown
	bbrProbeBWCruise
	bbrProbeBWRefill
	bbrProbeBWUp
	bbrProbeRTT
	bbrNone // BBR.undo_state = None
)

// String returns the state's name as State.Phase reports it.
func (s bbrState) String() string {
	switch s {
	case bbrStartup:
		return "startup"
	case bbrDrain:
		return "drain"
	case bbrProbeBWDown:
		return "probe_bw_down"
	case bbrProbeBWCruise:
		return "probe_bw_cruise"
	case bbrProbeBWRefill:
		return "probe_bw_refill"
	case bbrProbeBWUp:
		return "probe_bw_up"
	case bbrProbeRTT:
		return "probe_rtt"
	}
	return "none"
}

// bbrAckPhase is BBR.ack_phase (Section 2.14).
type bbrAckPhase uint8

const (
	bbrAcksInit          bbrAckPhase = iota // "not probing bandwidth; not getting probe feedback"
	bbrAcksRefilling                        // "sending at estimated bandwidth to fill pipe"
	bbrAcksProbeStarting                    // "inflight rising to probe bandwidth"
	bbrAcksProbeFeedback                    // "getting feedback from bandwidth probing"
	bbrAcksProbeStopping                    // "stopped bandwidth probing; still getting feedback"
)

// Constants of draft-ietf-ccwg-bbr, Section 2. Gains are in percent.
const (
	// bbrStartupPacingGain: "4 * ln(2) ~= 2.77".
	bbrStartupPacingGain = 277
	// bbrDrainPacingGain: "BBR uses the value 0.5".
	bbrDrainPacingGain = 50
	// bbrDefaultCwndGain: "the minimum gain value that allows the sending
	// rate to double each round (2)".
	bbrDefaultCwndGain = 200
	// bbrProbeRTTCwndGain: "0.5 (meaning that ProbeRTT attempts to reduce
	// in-flight data to 50% of the estimated BDP)".
	bbrProbeRTTCwndGain = 50
	// Pacing and cwnd gains of the ProbeBW phases (Section 5.3.3): DOWN
	// "a BBR.pacing_gain of 0.90", CRUISE and REFILL "1.0", UP "1.25" with
	// "BBR.cwnd_gain to 2.25".
	bbrProbeBWDownPacingGain = 90
	bbrProbeBWUpPacingGain   = 125
	bbrProbeBWUpCwndGain     = 225
	bbrUnityGain             = 100
	// bbrPacingMarginPercent: "The static discount factor of 1% used to
	// scale BBR.bw to produce C.pacing_rate."
	bbrPacingMarginPercent = 1
	// bbrLossThresh: "the maximum tolerated per-round-trip packet loss
	// rate when probing for bandwidth (the default is 2%)", percent.
	bbrLossThresh = 2
	// bbrBeta: "the default multiplicative decrease to make upon each
	// round trip during which the connection detects packet loss (the
	// value is 0.7)", percent.
	bbrBeta = 70
	// bbrHeadroom: "the multiplicative factor to apply to
	// BBR.inflight_longterm when calculating a volume of free headroom
	// ... (the value is 0.15)", percent.
	bbrHeadroom = 15
	// bbrMinPipeCwndPackets: "BBR.MinPipeCwnd: ... 4 * C.SMSS".
	bbrMinPipeCwndPackets = 4
	// bbrMaxBwFilterLen: "BBR.max_bw_filter = 2 (representing up to 2
	// ProbeBW cycles, the current cycle and the previous full cycle)".
	bbrMaxBwFilterLen = 2
	// bbrExtraAckedFilterLen: "BBR.extra_acked_filter max filter window
	// in steady-state = 10 (in units of packet-timed round trips)".
	bbrExtraAckedFilterLen = 10
	// bbrStartupFullLossCnt: "at least BBRStartupFullLossCnt=6
	// discontiguous sequence ranges lost in that round trip"
	// (Section 5.3.1.3).
	bbrStartupFullLossCnt = 6
	// bbrFullBwGrowth and bbrFullBwCount: "three non-application-limited
	// rounds where attempts to significantly increase the delivery rate
	// actually result in little increase (less than 25 percent)"
	// (Section 5.3.1.2); growth in percent.
	bbrFullBwGrowth = 125
	bbrFullBwCount  = 3
	// bbrRenoRoundsMax is the larger T_reno_bound of Section 5.3.3.8.2,
	// "pick_randomly_either({62, 63})": the random start of
	// BBR.rounds_since_probe_up (0 or 1) picks between the two.
	bbrRenoRoundsMax = 63
	// bbrMaxSendQuantum: "C.send_quantum = min(C.send_quantum, 64
	// KBytes)" (Section 5.6.3).
	bbrMaxSendQuantum = 64 * 1024
)

// Infinities of the pseudocode ("BBR.inflight_longterm = Infinity").
const (
	bbrInfBytes = math.MaxInt64
	bbrInfBW    = math.MaxUint64
	// bbrMaxVolume caps computed volumes (BDP multiples) so that the sums
	// built on them cannot overflow: 1 PB.
	bbrMaxVolume = 1 << 50
)

// bbrDefaultSeed seeds the PCG generator behind the random probe timing of
// NewBBR (Section 5.3.3.8.2: "We randomize both the T_bbr and T_reno
// parameters, for better mixing and fairness convergence"). It is a
// constant, never the clock, so that runs in a simulator repeat exactly.
const bbrDefaultSeed = 0x6262_7233_7365_6564 // "bbr3seed"

// bbr is the BBR congestion controller. All fields follow the draft's
// names; see Section 2 for each one's meaning.
type bbr struct {
	cfgRTT *RTTStats

	// Transport connection state (Section 2.2).
	smss        int64 // C.SMSS: the maximum datagram size
	initialCwnd int64 // C.InitialCwnd
	cwnd        int64 // C.cwnd
	pacingRate  uint64
	sendQuantum int64 // C.send_quantum
	inflight    int64 // C.inflight: the connection's bytes in flight
	rate        rateSampler

	// now is Now() of the callback being processed: "all functions have
	// implicit access to the (C) connection state" and to the time.
	now     time.Time
	started bool // the first callback stamped the OnInit times

	rng rand.PCG

	// General algorithm state (Section 2.7).
	state              bbrState
	pacingGain         int64 // BBR.pacing_gain, percent
	cwndGain           int64 // BBR.cwnd_gain, percent
	roundCount         uint64
	roundStart         bool
	nextRoundDelivered int64
	idleRestart        bool
	drainStartRound    uint64

	// Network path model (Section 2.9).
	maxBw              uint64 // BBR.max_bw
	bwShortterm        uint64 // BBR.bw_shortterm
	bw                 uint64 // BBR.bw
	maxBwFilter        filterMax
	cycleCount         uint64 // BBR.cycle_count
	minRTT             filterMinRTT
	bdp                int64 // BBR.bdp
	extraAcked         int64 // BBR.extra_acked
	extraAckedStart    time.Time
	extraAckedDeliv    int64 // BBR.extra_acked_delivered
	extraAckedFilter   filterMax
	offloadBudget      int64 // BBR.offload_budget
	maxInflight        int64 // BBR.max_inflight
	inflightLongterm   int64 // BBR.inflight_longterm
	inflightShortterm  int64 // BBR.inflight_shortterm
	bwLatest           uint64
	inflightLatest     int64
	lossRoundDelivered int64
	lossRoundStart     bool
	isLossInRound      bool

	// Startup (Section 2.13).
	fullBwReached bool
	fullBwNow     bool
	fullBw        uint64
	fullBwCount   int

	// ProbeBW (Section 2.14).
	ackPhase               bbrAckPhase
	isBwProbeSample        bool
	bwProbeUpAcked         int64
	probeUpAckedPerInc     int64
	bwProbeUpRounds        uint
	roundsSinceProbeUp     uint64
	bwProbeWait            time.Duration
	cycleStamp             time.Time
	prevProbeTooHigh       bool
	prevProbePrecautionary bool

	// Undo state (Section 2.15).
	undoState             bbrState
	undoBwShortterm       uint64
	undoInflightShortterm int64
	undoInflightLongterm  int64

	// ProbeRTT (Section 2.16).
	probeRTTDoneStamp time.Time // zero: 0 in the pseudocode
	probeRTTRoundDone bool
	priorCwnd         int64
	// lowerBoundsFromRound is the first BBR.round_count at whose loss
	// round ends the short-term model may adapt again after ProbeRTT
	// (see holdLowerBoundsAfterProbeRTT).
	lowerBoundsFromRound uint64

	// Loss recovery (Section 5.6.4.4): InLossRecovery() holds from a
	// loss or CE mark until an ACK of a packet sent after it, as
	// RFC 9002, Section 7.3.2 defines recovery for QUIC.
	inRecovery      bool
	recoveryStarted bool // recoveryStart is set
	recoveryStart   time.Time
	// The recovery episode spans recovery periods that follow each other
	// on the same ACK, for "in fast recovery for at least one full
	// packet-timed round trip" (Section 5.3.1.3).
	recoveryExit          time.Time
	recoveryRoundDeliv    int64 // C.delivered when the episode began
	recoveryFullRound     bool
	lossEventsInRound     int   // discontiguous lost ranges in this loss round
	lastLostPN            int64 // to count discontiguous ranges
	cwndLimitedInRound    bool  // C.is_cwnd_limited, this round
	cwndLimitedPrevRound  bool  // C.is_cwnd_limited, last round
	appLimitedUntilWindow bool  // State.AppLimited
	pacingFromSRTT        bool  // InitPacingRate used a real C.srtt
	// ecnPending: the last congestion event reported new CE marks,
	// whose check against a bandwidth probe waits for the ACK that
	// carried them (onECNAcked).
	ecnPending bool
}

// NewBBR returns a BBR version 3 controller (draft-ietf-ccwg-bbr) for one
// connection. Its random bandwidth-probe timing comes from a PCG generator
// seeded with c.Seed, or a fixed seed when it is 0, so runs repeat exactly.
//
// It follows the draft's pseudocode except in two points of the response
// to loss outside bandwidth probing (Section 5.5.10.3), which on paths with
// random loss cut the rate without congestion: after a round with loss it
// paces at the delivery rate it measured in that round rather than 1%
// below it, and it does not adapt to the rate samples of the two rounds
// after ProbeRTT, which still measure ProbeRTT's reduced flight.
//
// The controller starts in Startup with the initial window of c
// (InitialWindow) and a pacing rate of 2.77 times that window per
// smoothed RTT (per millisecond before the first RTT sample). Its cwnd is
// never below 4 times the maximum datagram size. It keeps per-packet
// delivery state for at most 65536 packets in flight; older ones are
// forgotten (they count as delivered when acknowledged but give no rate
// sample).
func NewBBR(c ControllerConfig) Controller {
	if c.Seed != 0 {
		return NewBBRWithSeed(c, c.Seed)
	}
	return NewBBRWithSeed(c, bbrDefaultSeed)
}

// NewBBRWithSeed is NewBBR with the seed of the generator that randomises
// the time between bandwidth probes (2 to 3 seconds, and 62 or 63 round
// trips, draft-ietf-ccwg-bbr, Section 5.3.3.8.2). Equal seeds give equal
// behaviour for equal inputs.
func NewBBRWithSeed(c ControllerConfig, seed uint64) Controller {
	b := &bbr{cfgRTT: c.RTT}
	b.rng.Seed(seed, bbrDefaultSeed^0x9e37_79b9_7f4a_7c15)
	b.smss = int64(max(c.MaxDatagramSize, 1200))
	b.initialCwnd = int64(InitialWindow(int(b.smss), c.InitialWindowPackets))
	b.cwnd = max(b.initialCwnd, b.minPipeCwnd())
	b.rate.init()
	b.onInit()
	return b
}

// onInit is OnInit of Section 5.2.1. Its Now() stamps are taken again by
// the first callback (begin), as the constructor has no time.
func (b *bbr) onInit() {
	b.maxBwFilter.reset(0, 0) // InitWindowedMaxFilter(filter=BBR.max_bw_filter, value=0, time=0)
	b.minRTT.init(b.now, b.srtt())
	b.probeRTTDoneStamp = time.Time{}
	b.probeRTTRoundDone = false
	b.priorCwnd = 0
	b.undoState = bbrNone
	b.undoBwShortterm = 0
	b.undoInflightShortterm = 0
	b.undoInflightLongterm = 0
	b.idleRestart = false
	b.extraAckedStart = b.now
	b.extraAckedDeliv = 0
	b.fullBwReached = false
	b.inflightLongterm = bbrInfBytes
	b.probeUpAckedPerInc = bbrInfBytes
	b.bwProbeUpAcked = 0
	b.bwProbeUpRounds = 0
	b.roundsSinceProbeUp = 0
	b.isBwProbeSample = false
	b.prevProbeTooHigh = false
	b.prevProbePrecautionary = false
	b.ackPhase = bbrAcksInit
	b.cycleStamp = time.Time{}
	b.bwProbeWait = 0
	b.lastLostPN = -2
	b.resetCongestionSignals()
	b.resetShortTermModel()
	b.initRoundCounting()
	b.resetFullBW()
	b.initPacingRate()
	b.enterStartup()
	b.setSendQuantum()
}

// begin records Now() for the callback and, on the first one, takes the
// Now() stamps of OnInit.
func (b *bbr) begin(now time.Time) {
	b.now = now
	if !b.started {
		b.started = true
		b.minRTT.init(now, b.srtt())
		b.extraAckedStart = now
	}
}

// srtt returns C.srtt, or 0 before the first RTT sample.
func (b *bbr) srtt() time.Duration {
	if b.cfgRTT == nil || !b.cfgRTT.HasSample() {
		return 0
	}
	return b.cfgRTT.Smoothed()
}

// minPipeCwnd is BBR.MinPipeCwnd: "4 * C.SMSS".
func (b *bbr) minPipeCwnd() int64 { return bbrMinPipeCwndPackets * b.smss }

// OnPacketSent runs the per-transmit steps (Section 5.2.2, "OnTransmit():
// HandleRestartFromIdle()") and snapshots the delivery state of the packet
// (Section 4.1.2.2).
func (b *bbr) OnPacketSent(now time.Time, pn int64, bytes int, bytesInFlight int) {
	b.begin(now)
	size, inflight := int64(bytes), int64(bytesInFlight)
	b.inflight = inflight - size // before this packet
	b.handleRestartFromIdle()
	b.inflight = inflight
	b.rate.onPacketSent(now, pn, size, inflight)
	// C.is_cwnd_limited: "True if the connection has fully utilized
	// C.cwnd at any point in the last packet-timed round trip." The
	// window is full when another packet would not fit.
	if inflight+b.smss > b.cwnd {
		b.cwndLimitedInRound = true
		b.appLimitedUntilWindow = false
	}
}

// OnAck runs the per-ACK steps (Section 5.2.3): UpdateRateSample for each
// newly acknowledged packet, then UpdateOnACK. An ACK of a packet sent
// after loss recovery began ends recovery and restores the cwnd of before
// (Section 5.6.4.4: "Upon exiting loss recovery ... RestoreCwnd()").
func (b *bbr) OnAck(now time.Time, ev *AckEvent) {
	if len(ev.Acked) == 0 {
		return
	}
	b.begin(now)
	b.inflight = int64(ev.BytesInFlight)
	b.rate.initRateSample()
	for i := range ev.Acked {
		b.rate.onPacketAcked(now, &ev.Acked[i])
	}
	// The connection reported the packets this ACK makes lost before
	// it (OnCongestionEvent, which trims the sampler's packets to the
	// bytes in flight with this ACK's packets still counted).
	rs := &b.rate.rs
	if b.inRecovery && rs.hasData && rs.priorDelivered >= b.recoveryRoundDeliv {
		// A packet sent after the episode began is acknowledged: it
		// has lasted a packet-timed round trip.
		b.recoveryFullRound = true
	}
	if b.inRecovery && rs.newestSent.After(b.recoveryStart) {
		b.inRecovery = false
		b.recoveryExit = now
		b.restoreCwnd()
	}
	rtt := ev.RTT
	if rtt == nil {
		rtt = b.cfgRTT
	}
	if !b.pacingFromSRTT && rtt != nil && rtt.HasSample() {
		// InitPacingRate uses "the initial C.srtt after the first
		// non-zero RTT sample".
		b.pacingFromSRTT = true
		if b.maxBw == 0 {
			b.initPacingRate()
		}
	}
	var minRTT time.Duration
	if rtt != nil {
		minRTT = rtt.Min()
	}
	b.updateOnACK(minRTT)
	b.onECNAcked()
}

// updateOnACK is UpdateOnACK of Section 5.2.3.
func (b *bbr) updateOnACK(minRTT time.Duration) {
	b.rate.generateRateSample(minRTT)
	b.updateModelAndState()
	b.updateControlParameters()
}

// updateModelAndState is UpdateModelAndState of Section 5.2.3.
func (b *bbr) updateModelAndState() {
	b.updateLatestDeliverySignals()
	b.updateCongestionSignals()
	b.updateACKAggregation()
	b.checkFullBWReached()
	b.checkStartupDone()
	b.checkDrainDone()
	b.updateProbeBWCyclePhase()
	b.updateMinRTT()
	b.checkProbeRTT()
	b.advanceLatestDeliverySignals()
	b.boundBWForModel()
}

// updateControlParameters is UpdateControlParameters of Section 5.2.3.
func (b *bbr) updateControlParameters() {
	b.setPacingRate()
	b.setSendQuantum()
	b.setCwnd()
}

// OnCongestionEvent runs the per-loss steps (Section 5.2.4): "On every
// packet loss event where the transport protocol marks some packet P as
// lost, the BBR algorithm calls HandleLostPacket(P)". A first loss starts
// loss recovery (OnEnterFastRecovery, Section 5.6.4.4); persistent
// congestion is handled as a retransmission timeout (OnEnterRTO).
//
// ECN: "the congestion controller response MUST treat any CE marks as
// congestion" (Section 3.7), but the draft specifies no particular
// response. A CE increase is treated as a loss of no data: it starts
// recovery and is noted as loss in the round (NoteLoss), which makes
// BBR.bw_shortterm and BBR.inflight_shortterm adapt at the end of the
// round outside bandwidth probing (Section 5.5.10.3); during a bandwidth
// probe it ends the probe as excessive loss would (HandleInflightTooHigh,
// Section 5.5.10.2), with the rate sample of the ACK that carried it:
// the connection reports an ACK's congestion event before the ACK
// itself (RFC 9002, Appendix A.7), so that check waits for OnAck
// (ecnPending).
func (b *bbr) OnCongestionEvent(now time.Time, ev *CongestionEvent) {
	b.begin(now)
	b.inflight = int64(ev.BytesInFlight)
	if len(ev.Lost) == 0 && !ev.ECN && !ev.PersistentCongestion {
		return
	}
	// Packets sent before the current or last recovery period began
	// belong to it and start no new one ("If the congestion event was
	// sent before the start of the current recovery period, no reaction",
	// RFC 9002, Appendix B.6 InCongestionRecovery).
	newEpisode := !b.recoveryStarted || ev.SentTime.After(b.recoveryStart)
	switch {
	case ev.PersistentCongestion:
		b.onEnterRTO()
	case newEpisode && !b.inRecovery:
		b.onEnterFastRecovery()
	case newEpisode:
		// A loss of a packet sent during recovery starts a new
		// recovery period; the cwnd saved at entry stays.
		b.recoveryStart = now
	}
	for i := range ev.Lost {
		lp := &ev.Lost[i]
		if lp.PacketNumber != b.lastLostPN+1 && b.lossEventsInRound < math.MaxInt32 {
			b.lossEventsInRound++
		}
		b.lastLostPN = lp.PacketNumber
		p, ok := b.rate.onPacketLost(lp)
		b.handleLostPacket(&p, ok)
	}
	if ev.ECN {
		b.noteLoss()
		b.ecnPending = true
	}
	b.rate.trim(b.inflight)
}

// onECNAcked ends a bandwidth probe whose ACK reported new CE marks, with
// that ACK's rate sample (see OnCongestionEvent).
func (b *bbr) onECNAcked() {
	if !b.ecnPending {
		return
	}
	b.ecnPending = false
	if b.isBwProbeSample && b.rate.rs.hasData {
		b.handleInflightTooHigh()
	}
}

// onEnterFastRecovery is OnEnterFastRecovery of Section 5.6.4.4:
//
//	SaveCwnd()
//	SaveStateUponLoss()
func (b *bbr) onEnterFastRecovery() {
	b.saveCwnd()
	b.saveStateUponLoss()
	b.startRecovery()
}

// onEnterRTO is OnEnterRTO of Section 5.6.4.4, used for persistent
// congestion (RFC 9002, Section 7.6): "Upon a retransmission timeout
// (RTO), BBR conservatively reduces C.cwnd to a value that will allow 1
// C.SMSS to be transmitted."
//
//	SaveCwnd()
//	SaveStateUponLoss()
//	C.cwnd = C.inflight + 1
//
// The cwnd is C.inflight plus one C.SMSS, and at least BBR.MinPipeCwnd.
func (b *bbr) onEnterRTO() {
	b.saveCwnd()
	b.saveStateUponLoss()
	b.cwnd = max(b.inflight+b.smss, b.minPipeCwnd())
	if !b.inRecovery {
		b.startRecovery()
	}
	b.recoveryStart = b.now
}

func (b *bbr) startRecovery() {
	b.inRecovery = true
	b.recoveryStarted = true
	b.recoveryStart = b.now
	if !b.recoveryExit.Equal(b.now) {
		// A new episode, not a recovery period right after another.
		b.recoveryRoundDeliv = b.rate.delivered
		b.recoveryFullRound = false
	}
}

// ReleaseIdle frees the delivery-rate sampler's per-packet records when
// none is in flight (IdleReleaser).
func (b *bbr) ReleaseIdle() { b.rate.packets.release() }

// OnAppLimited marks the connection application-limited
// (MarkConnectionAppLimited, Section 4.1.2.4): the caller found that
// "the congestion window and pacing rate would have allowed the connection
// to send data, and yet the connection is not currently sending data and
// has no data to send".
func (b *bbr) OnAppLimited(now time.Time, bytesInFlight int) {
	b.begin(now)
	b.inflight = int64(bytesInFlight)
	b.rate.markAppLimited(b.inflight)
	b.appLimitedUntilWindow = true
}

// SetMaxDatagramSize sets C.SMSS; the cwnd stays at least 4 of them.
func (b *bbr) SetMaxDatagramSize(n int) {
	b.smss = int64(max(n, 1200))
	b.cwnd = max(b.cwnd, b.minPipeCwnd())
	b.setSendQuantum()
}

// CongestionWindow returns C.cwnd in bytes.
func (b *bbr) CongestionWindow() int { return int(min(b.cwnd, math.MaxInt)) }

// PacingRate returns C.pacing_rate in bytes per second.
func (b *bbr) PacingRate() uint64 { return b.pacingRate }

// SendQuantum returns C.send_quantum (Section 5.6.3), "The maximum size
// of a data aggregate scheduled and transmitted together as a unit", in
// bytes. A sender that batches packets (GSO) may ask for it through an
// interface assertion.
func (b *bbr) SendQuantum() int { return int(b.sendQuantum) }

// OnSpuriousLoss restores the state saved when loss recovery began, when
// the connection finds that recovery was spurious
// (HandleSpuriousLossDetection, Section 5.5.11.2). It is not part of
// Controller; a connection may call it through an interface assertion.
func (b *bbr) OnSpuriousLoss(now time.Time) {
	b.begin(now)
	b.handleSpuriousLossDetection()
	b.inRecovery = false
}

// State describes the controller: Name "bbr" and the Phase of BBR.state.
// InSlowStart reports Startup.
func (b *bbr) State() State {
	return State{
		Name:        "bbr",
		Phase:       b.state.String(),
		InSlowStart: b.state == bbrStartup,
		InRecovery:  b.inRecovery,
		AppLimited:  b.appLimitedUntilWindow,
	}
}

// inRecoveryEpisode reports that loss recovery is going on, or ended on
// the ACK being processed: QUIC's recovery period ends on the ACK of the
// first packet sent after it began, the same ACK that ends the loss round.
func (b *bbr) inRecoveryEpisode() bool {
	return b.inRecovery || (b.recoveryStarted && b.recoveryExit.Equal(b.now))
}

// isCwndLimited is C.is_cwnd_limited.
func (b *bbr) isCwndLimited() bool { return b.cwndLimitedInRound || b.cwndLimitedPrevRound }
