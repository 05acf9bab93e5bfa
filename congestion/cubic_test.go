package congestion

import (
	"math"
	"testing"
	"time"
)

// cubicRFCWindow is Figure 1 of RFC 9438 in floating point, in bytes:
// W_cubic(t) = C*(t-K)^3 + W_max with windows in segments of mds bytes.
func cubicRFCWindow(t, k float64, wMaxBytes, mds int) float64 {
	return (0.4*math.Pow(t-k, 3) + float64(wMaxBytes)/float64(mds)) * float64(mds)
}

func TestCubicK(t *testing.T) {
	// RFC 9438, Section 4.2, Figure 2: K = cubic_root((W_max - cwnd_epoch) /
	// C). With cwnd_epoch = β_cubic * W_max this is the cubic root of
	// W_max * (1 - β_cubic) / C.
	for _, tc := range []struct {
		wMaxSegs, epochSegs float64
		mds                 int
	}{
		{100, 70, 1200},
		{1000, 700, 1200},
		{10, 7, 1500},
		{85, 70, 1200}, // after fast convergence
		{2, 2, 1200},
		{50000, 35000, 1452},
	} {
		wMax := int(tc.wMaxSegs * float64(tc.mds))
		epoch := int(tc.epochSegs * float64(tc.mds))
		want := math.Cbrt((tc.wMaxSegs - tc.epochSegs) / 0.4)
		got := cubicK(wMax, epoch, tc.mds).Seconds()
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("K(W_max=%v, cwnd_epoch=%v) = %v s, want %v s", tc.wMaxSegs, tc.epochSegs, got, want)
		}
		if tc.epochSegs == 0.7*tc.wMaxSegs {
			if alt := math.Cbrt(tc.wMaxSegs * (1 - 0.7) / 0.4); math.Abs(got-alt) > 1e-6 {
				t.Errorf("K = %v, cbrt(W_max*(1-β)/C) = %v", got, alt)
			}
		}
	}
	// K = cbrt(75) for W_max = 100 segments: 4.2172 s.
	if got := cubicK(120000, 84000, 1200); got.Round(time.Millisecond) != 4217*time.Millisecond {
		t.Fatalf("K = %v, want 4.217s", got)
	}
}

func TestCubicWindowFunction(t *testing.T) {
	// RFC 9438, Section 4.2, Figure 1: "W_cubic(t) = C * (t - K)^3 +
	// W_max", computed here in integers and compared with the formula.
	const mds = 1200
	for _, wMaxSegs := range []int{10, 100, 1000, 100000} {
		wMax := wMaxSegs * mds
		epoch := wMax * 7 / 10
		k := cubicK(wMax, epoch, mds)
		for _, ts := range []float64{0, 0.1, 0.5, 1, 2, k.Seconds() / 2, k.Seconds(), k.Seconds() + 0.5, k.Seconds() * 2, k.Seconds() + 10, 60} {
			tt := time.Duration(ts * float64(time.Second))
			got := cubicWindow(tt, k, wMax, mds)
			want := cubicRFCWindow(tt.Seconds(), k.Seconds(), wMax, mds)
			// Microsecond resolution of t-K: the error is below the
			// slope's change over 1µs plus a byte.
			slope := 3 * 0.4 * math.Pow(tt.Seconds()-k.Seconds(), 2) * mds
			if tol := slope*1e-6 + 1; math.Abs(float64(got)-want) > tol {
				t.Errorf("W_max=%d segs t=%.3fs: W_cubic = %d, formula %.1f", wMaxSegs, ts, got, want)
			}
		}
		// "K is the time period that the above function takes to increase
		// the congestion window size at the beginning of the current
		// congestion avoidance stage to W_max": W_cubic(0) = cwnd_epoch,
		// W_cubic(K) = W_max.
		if got := cubicWindow(0, k, wMax, mds); math.Abs(float64(got-epoch)) > 2 {
			t.Errorf("W_max=%d segs: W_cubic(0) = %d, want cwnd_epoch %d", wMaxSegs, got, epoch)
		}
		if got := cubicWindow(k, k, wMax, mds); got != wMax {
			t.Errorf("W_max=%d segs: W_cubic(K) = %d, want %d", wMaxSegs, got, wMax)
		}
	}
	// Far from K the offset is clamped, not overflowed.
	if got := cubicWindow(100*time.Hour, 0, 1200, 1200); got <= 0 {
		t.Fatalf("W_cubic(100h) = %d", got)
	}
}

// cubicAt returns a Cubic controller in congestion avoidance with a
// window of cwnd bytes, RTT rtt and the clock at now.
func cubicAt(t *testing.T, cwnd int, rtt time.Duration) (*renoSim, *cubicController) {
	s := renoNewSim(t, NewCubic)
	c := s.c.(*cubicController)
	c.hs.stop()
	c.cwnd = cwnd
	c.ssthresh = cwnd
	s.rtt.Update(rtt, 0, true)
	return s, c
}

// cubicFluid acknowledges, every millisecond for d, bytes sent one RTT
// earlier at the rate of one window per RTT, and calls check after each
// ACK with the time since the first.
func cubicFluid(s *renoSim, d, rtt time.Duration, check func(elapsed time.Duration)) {
	start := s.now
	var pn int64 = 1 << 20
	for s.now.Sub(start) < d {
		s.advance(time.Millisecond)
		b := int(int64(s.c.CongestionWindow()) * int64(time.Millisecond) / int64(rtt))
		s.ack = AckEvent{
			Acked:      []AckedPacket{{PacketNumber: pn, Bytes: b, SentTime: s.now.Add(-rtt)}},
			AckedBytes: b,
			RTT:        s.rtt,
		}
		pn++
		s.c.OnAck(s.now, &s.ack)
		if check != nil {
			check(s.now.Sub(start))
		}
	}
}

func TestCubicMultiplicativeDecrease(t *testing.T) {
	s, c := cubicAt(t, 100*1200, 100*renoMs)
	s.send(1)
	s.advance(100 * renoMs)
	s.loseOldest(1, false)
	// RFC 9438, Section 4.6, Figure 5: "ssthresh = cwnd * β_cubic";
	// "cwnd_prior = cwnd"; "cwnd = max(ssthresh, 2)"; and Section 4.7
	// "W_max = cwnd ... otherwise, remember cwnd before reduction".
	s.wantCwnd(84000)
	if c.ssthresh != 84000 || c.cwndPrior != 120000 || c.wMax != 120000 {
		t.Fatalf("ssthresh %d cwnd_prior %d W_max %d", c.ssthresh, c.cwndPrior, c.wMax)
	}
	s.wantPhase("recovery")
	if st := s.c.State(); st.Name != "cubic" || st.InSlowStart || !st.InRecovery {
		t.Fatalf("state %+v", st)
	}
	// The floor is the minimum window of RFC 9002, Section 7.2.
	s, _ = cubicAt(t, 2*1200, 100*renoMs)
	s.send(1)
	s.advance(100 * renoMs)
	s.loseOldest(1, false)
	s.wantCwnd(2400)
}

func TestCubicFastConvergence(t *testing.T) {
	s, c := cubicAt(t, 100*1200, 100*renoMs)
	s.send(1)
	s.advance(100 * renoMs)
	s.loseOldest(1, false) // W_max 120000, cwnd 84000
	s.advance(time.Millisecond)
	s.send(1) // sent after recovery started
	s.advance(100 * renoMs)
	s.ackOldest(1)
	s.send(1)
	s.advance(100 * renoMs)
	cw := s.c.CongestionWindow()
	if cw >= 120000 {
		t.Fatalf("cwnd %d reached W_max", cw)
	}
	s.loseOldest(1, false)
	// RFC 9438, Section 4.7: "W_max = cwnd * (1 + β_cubic) / 2 if cwnd <
	// W_max and fast convergence enabled, further reduce W_max".
	if want := cw * 17 / 20; c.wMax != want {
		t.Fatalf("W_max = %d, want %d (cwnd %d * 0.85)", c.wMax, want, cw)
	}
	if want := cw * 7 / 10; s.c.CongestionWindow() != want {
		t.Fatalf("cwnd = %d, want %d", s.c.CongestionWindow(), want)
	}

	// Without fast convergence W_max is the window before the reduction.
	s, c = cubicAt(t, 100*1200, 100*renoMs)
	c.fastConvergence = false
	s.send(1)
	s.advance(100 * renoMs)
	s.loseOldest(1, false)
	s.advance(time.Millisecond)
	s.send(1)
	s.advance(100 * renoMs)
	s.ackOldest(1)
	s.send(1)
	s.advance(100 * renoMs)
	cw = s.c.CongestionWindow()
	s.loseOldest(1, false)
	if c.wMax != cw {
		t.Fatalf("W_max = %d without fast convergence, want %d", c.wMax, cw)
	}
}

func TestCubicCongestionAvoidanceFollowsCubicFunction(t *testing.T) {
	// A large window (1000 segments, 100 ms RTT): the cubic function, not
	// the Reno-friendly estimate, drives the window. RFC 9438, Section 4.2:
	// "Upon receiving a new ACK during congestion avoidance, CUBIC computes
	// the target congestion window size after the next RTT".
	const mds, rtt = 1200, 100 * time.Millisecond
	s, c := cubicAt(t, 1000*mds, rtt)
	s.send(1)
	s.advance(rtt)
	s.loseOldest(1, false)
	s.advance(rtt) // packets sent after the recovery period began are acknowledged
	wMax := 1000 * mds
	kf := math.Cbrt(300 / 0.4) // 9.09 s
	checks := map[time.Duration]bool{}
	for _, ts := range []float64{0.5, 1, 3, 6, kf, kf + 1, kf + 2, kf + 3} {
		checks[time.Duration(ts*1000)*time.Millisecond] = false
	}
	cubicFluid(s, time.Duration((kf+3.05)*float64(time.Second)), rtt, func(el time.Duration) {
		if _, ok := checks[el]; !ok {
			return
		}
		checks[el] = true
		if math.Abs(c.k.Seconds()-kf) > 1e-6 {
			t.Fatalf("K = %v, want %.3fs", c.k, kf)
		}
		// t counts from the start of the congestion avoidance stage, one
		// millisecond before the first ACK here.
		tt := el.Seconds() - 0.001
		lo := cubicRFCWindow(tt, kf, wMax, mds)
		hi := cubicRFCWindow(tt+rtt.Seconds(), kf, wMax, mds)
		got := float64(s.c.CongestionWindow())
		// The window moves toward W_cubic(t+RTT) by (target-cwnd)/cwnd per
		// acknowledged segment: it stays between W_cubic(t) and
		// W_cubic(t+RTT), within 1%.
		if got < lo*0.99 || got > hi*1.01 {
			t.Errorf("t=%.3fs: cwnd %.0f (%.1f segs), W_cubic(t) %.0f, W_cubic(t+RTT) %.0f", tt, got, got/mds, lo, hi)
		}
		if region := c.window(time.Duration(tt*float64(time.Second))) >= c.wEst; !region {
			t.Errorf("t=%.3fs: in the Reno-friendly region with a large window", tt)
		}
	})
	for el, ok := range checks {
		if !ok {
			t.Errorf("check at %v not reached", el)
		}
	}
	// Concave then convex: at K the window is W_max, after it above.
	if s.c.CongestionWindow() <= wMax {
		t.Fatalf("cwnd %d not above W_max %d in the convex region", s.c.CongestionWindow(), wMax)
	}
	s.wantPhase("congestion_avoidance")
}

func TestCubicTargetBounds(t *testing.T) {
	const mds, rtt = 1200, 100 * time.Millisecond
	s, c := cubicAt(t, 100*mds, rtt)
	s.advance(rtt)
	cubicFluid(s, 10*renoMs, rtt, nil) // the stage begins: K = 0, W_max = cwnd
	if c.k != 0 {
		t.Fatalf("K = %v", c.k)
	}
	// Ten seconds without ACKs (not application limited): W_cubic(t+RTT)
	// is now about 500 segments, far above 1.5 * cwnd. RFC 9438, Section
	// 4.2: target = 1.5 * cwnd "if W_cubic(t + RTT) > 1.5 * cwnd", so one
	// window of ACKs grows the window by half.
	s.advance(10 * time.Second)
	before := s.c.CongestionWindow()
	s.ack = AckEvent{Acked: []AckedPacket{{PacketNumber: 1 << 40, Bytes: before, SentTime: s.now.Add(-rtt)}}, AckedBytes: before, RTT: s.rtt}
	s.c.OnAck(s.now, &s.ack)
	if got := s.c.CongestionWindow(); got != before+before/2 {
		t.Fatalf("one window of ACKs: cwnd %d -> %d, want +50%%", before, got)
	}
	// target = cwnd "if W_cubic(t + RTT) < cwnd": no decrease.
	c.cwnd = 10000 * mds
	s.advance(time.Millisecond)
	s.ack.Acked[0].PacketNumber++
	s.c.OnAck(s.now, &s.ack)
	s.wantCwnd(10000 * mds)
}

func TestCubicRenoFriendlyRegion(t *testing.T) {
	// Small BDP: 10 segments, 10 ms RTT. RFC 9438, Section 4.3: "Reno
	// performs well in certain types of networks, for example, under short
	// RTTs and small bandwidths (or small BDPs). In these networks, CUBIC
	// remains in the Reno-friendly region to achieve at least the same
	// throughput as Reno."
	const mds, rtt = 1200, 10 * time.Millisecond
	s, c := cubicAt(t, 10*mds, rtt)
	s.send(1)
	s.advance(rtt)
	s.loseOldest(1, false) // W_max 10 segs, cwnd 7 segs, K = 1.96 s
	s.ackOldest(len(s.pending))
	s.advance(time.Millisecond)
	start := s.now
	for range 100 { // one second
		s.round(rtt)
		el := s.now.Sub(start)
		// "If so, CUBIC is in the Reno-friendly region and cwnd SHOULD be
		// set to W_est at each reception of a new ACK."
		if c.window(el) >= c.wEst || s.c.CongestionWindow() != c.wEst {
			t.Fatalf("t=%v: W_cubic %d, W_est %d, cwnd %d", el, c.window(el), c.wEst, s.c.CongestionWindow())
		}
	}
	// Figure 4: W_est grows by α_cubic = 9/17 segment per RTT until it
	// reaches cwnd_prior (10 segments, 6 RTTs), then by one segment per
	// RTT: about 7 + 3 + 94 segments after 100 RTTs.
	if got := s.c.CongestionWindow() / mds; got < 95 || got > 110 {
		t.Fatalf("cwnd after 100 RTTs = %d segments, want about 104", got)
	}
	if w := c.window(time.Second) / mds; w >= 10 {
		t.Fatalf("W_cubic(1s) = %d segments", w)
	}
}

func TestCubicRecoveryGating(t *testing.T) {
	s, c := cubicAt(t, 100*1200, 50*renoMs)
	s.send(20)
	s.advance(50 * renoMs)
	s.loseOldest(1, false)
	s.wantCwnd(84000)
	// RFC 9002, Section 7.3.2: "during a recovery period, the congestion
	// window does not change in response to new losses or increases in the
	// ECN-CE count."
	s.loseOldest(2, false)
	s.ecn(s.now.Add(-50 * renoMs))
	s.wantCwnd(84000)
	// Acknowledgments of packets sent before the recovery period began do
	// not grow the window, nor end recovery.
	s.ackOldest(10)
	s.wantCwnd(84000)
	s.wantPhase("recovery")
	s.advance(time.Millisecond)
	s.send(1)
	s.advance(50 * renoMs)
	// "A recovery period ends and the sender enters congestion avoidance
	// when a packet sent during the recovery period is acknowledged."
	s.ackOldest(len(s.pending))
	s.wantPhase("congestion_avoidance")
	if !c.inEpoch {
		t.Fatal("congestion avoidance stage did not begin")
	}
	// A loss of a packet sent after the recovery began reduces again.
	s.send(1)
	s.advance(50 * renoMs)
	cw := s.c.CongestionWindow()
	s.loseOldest(1, false)
	s.wantCwnd(cw * 7 / 10)
}

func TestCubicECN(t *testing.T) {
	s, _ := cubicAt(t, 100*1200, 50*renoMs)
	s.send(10)
	sent := s.now
	s.advance(50 * renoMs)
	s.ackOldest(10)
	cw := s.c.CongestionWindow()
	// RFC 9002, Section 7.1: "QUIC treats a Congestion Experienced (CE)
	// codepoint in the IP header as a signal of congestion."
	s.ecn(sent)
	s.wantCwnd(cw * 7 / 10)
	s.wantPhase("recovery")
}

func TestCubicPersistentCongestion(t *testing.T) {
	s, c := cubicAt(t, 100*1200, 50*renoMs)
	s.fill()
	s.advance(2 * time.Second)
	s.loseOldest(len(s.pending), true)
	// RFC 9002, Section 7.6.2: "the sender's congestion window MUST be
	// reduced to the minimum congestion window (kMinimumWindow)". RFC 9438,
	// Section 4.8: "CUBIC follows Reno to reduce cwnd [RFC5681], but sets
	// ssthresh using β_cubic".
	s.wantCwnd(2400)
	if c.ssthresh != 84000 {
		t.Fatalf("ssthresh = %d, want 84000", c.ssthresh)
	}
	s.wantPhase("slow_start")
	for s.c.State().InSlowStart {
		s.round(50 * renoMs)
	}
	s.wantPhase("congestion_avoidance")
	s.advance(time.Millisecond)
	s.round(50 * renoMs)
	// "During the first congestion avoidance stage after a timeout, CUBIC
	// increases its congestion window size using Figure 1, where t is the
	// elapsed time since the beginning of the current congestion
	// avoidance, K is set to 0, and W_max is set to the congestion window
	// size at the beginning of the current congestion avoidance stage."
	if c.k != 0 || c.wMax < c.ssthresh {
		t.Fatalf("after persistent congestion: K %v W_max %d ssthresh %d", c.k, c.wMax, c.ssthresh)
	}
	// The recovery period was cleared: a new loss reduces the window.
	s.send(1)
	s.advance(50 * renoMs)
	cw := s.c.CongestionWindow()
	s.loseOldest(1, false)
	s.wantCwnd(cw * 7 / 10)
}

// cubicSlowStart runs ack-clocked slow start rounds, acknowledging one
// packet per ACK after rttOf(round) and sending as the window allows.
func cubicSlowStart(s *renoSim, rounds int, rttOf func(int) time.Duration) {
	for r := range rounds {
		s.fill()
		n := len(s.pending)
		for range n {
			p := s.pending[0]
			if at := p.SentTime.Add(rttOf(r)); at.After(s.now) {
				s.now = at
			}
			s.ackOldest(1)
			s.fill()
		}
	}
}

func TestCubicHyStartNoExitWithoutRTTIncrease(t *testing.T) {
	s := renoNewSim(t, NewCubic)
	cubicSlowStart(s, 8, func(int) time.Duration { return 40 * renoMs })
	// Slow start doubles the window every round: 10 * 2^8 packets.
	s.wantCwnd(12000 << 8)
	s.wantPhase("slow_start")
}

func TestCubicHyStartExitOnRTTIncrease(t *testing.T) {
	s := renoNewSim(t, NewCubic)
	c := s.c.(*cubicController)
	// RFC 9406, Section 1: "HyStart++ uses increase in round-trip delay as
	// a heuristic to find an exit point before possible overshoot."
	cubicSlowStart(s, 4, func(int) time.Duration { return 40 * renoMs })
	cw := s.c.CongestionWindow()
	cubicSlowStart(s, 2, func(int) time.Duration { return 60 * renoMs })
	if !c.hs.inCSS {
		t.Fatal("not in Conservative Slow Start after an RTT increase")
	}
	if got := s.c.CongestionWindow(); got >= 4*cw {
		t.Fatalf("cwnd %d grew like slow start from %d", got, cw)
	}
	s.wantPhase("slow_start")
	// "If CSS_ROUNDS rounds are complete, enter congestion avoidance by
	// setting the ssthresh to the current cwnd." RFC 9438, Section 4.10:
	// "CUBIC sets cwnd_prior = cwnd and switches to congestion
	// avoidance."
	cubicSlowStart(s, hystartCSSRounds, func(int) time.Duration { return 60 * renoMs })
	s.wantPhase("congestion_avoidance")
	if c.ssthresh == math.MaxInt || c.cwndPrior != c.ssthresh {
		t.Fatalf("ssthresh %d cwnd_prior %d", c.ssthresh, c.cwndPrior)
	}
	s.round(60 * renoMs)
	// "K is set to 0, and W_max is set to the congestion window size at
	// the beginning of the current congestion avoidance stage."
	if c.k != 0 || c.wMax != c.ssthresh {
		t.Fatalf("K %v W_max %d ssthresh %d", c.k, c.wMax, c.ssthresh)
	}
}

func TestCubicAppLimited(t *testing.T) {
	const rtt = 100 * time.Millisecond
	s, c := cubicAt(t, 100*1200, rtt)
	s.send(1)
	s.advance(rtt)
	s.loseOldest(1, false)
	s.advance(rtt)
	cubicFluid(s, time.Second, rtt, nil)
	epoch := c.epochStart
	cw := s.c.CongestionWindow()
	// RFC 9438, Section 5.8: "CUBIC does not increase its congestion window
	// if a flow is application-limited."
	s.c.OnAppLimited(s.now, 0)
	s.wantPhase("application_limited")
	cubicFluid(s, 2*time.Second, rtt, nil)
	s.wantCwnd(cw)
	// "Section 4.2 requires that t in Figure 1 does not include
	// application-limited periods, such as idle periods". The period ends
	// with a send that fills the window; t_epoch moves by its length.
	limitedFor := 2 * time.Second
	s.fill()
	if s.c.State().AppLimited {
		t.Fatal("still application limited")
	}
	if got := c.epochStart.Sub(epoch); got != limitedFor {
		t.Fatalf("t_epoch moved by %v, want %v", got, limitedFor)
	}
	cubicFluid(s, 10*renoMs, rtt, nil)
	if got := s.c.CongestionWindow(); got <= cw || got > cw+cw/50 {
		t.Fatalf("cwnd %d after resuming from %d", got, cw)
	}
	// Also in slow start.
	s = renoNewSim(t, NewCubic)
	s.send(2)
	s.c.OnAppLimited(s.now, s.inFlight)
	s.advance(rtt)
	s.ackOldest(2)
	s.wantCwnd(12000)
}

func TestCubicSetMaxDatagramSize(t *testing.T) {
	c := NewCubic(ControllerConfig{MaxDatagramSize: 1200})
	c.SetMaxDatagramSize(1452)
	if c.CongestionWindow() != 14520 {
		t.Fatalf("cwnd = %d, want 14520", c.CongestionWindow())
	}
	if c.PacingRate() == 0 {
		t.Fatal("PacingRate = 0")
	}
}
