package congestion

import (
	"testing"
	"time"
)

func TestNewRenoInitialState(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	// RFC 9002, Appendix B.3: "congestion_window = kInitialWindow";
	// "ssthresh = infinite". Section 7.3.1: "A sender begins in slow start
	// because the slow start threshold is initialized to an infinite
	// value."
	s.wantCwnd(12000)
	st := s.c.State()
	if st.Name != "newreno" || st.Phase != "slow_start" || !st.InSlowStart || st.InRecovery || st.AppLimited {
		t.Fatalf("initial state %+v", st)
	}
	// Section 7.2: "limiting the window to the larger of 14,720 bytes or
	// twice the maximum datagram size".
	c := NewNewReno(ControllerConfig{MaxDatagramSize: 1500})
	if c.CongestionWindow() != 14720 {
		t.Fatalf("cwnd for 1500-byte datagrams = %d, want 14720", c.CongestionWindow())
	}
	c = NewNewReno(ControllerConfig{MaxDatagramSize: 1200, InitialWindowPackets: 32})
	if c.CongestionWindow() != 32*1200 {
		t.Fatalf("cwnd for 32 initial packets = %d", c.CongestionWindow())
	}
	c = NewNewReno(ControllerConfig{})
	if c.CongestionWindow() != 12000 || c.PacingRate() == 0 {
		t.Fatalf("defaults: cwnd %d rate %d", c.CongestionWindow(), c.PacingRate())
	}
}

func TestNewRenoSlowStart(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	// RFC 9002, Appendix B.5: "if (congestion_window < ssthresh): // Slow
	// start. congestion_window += acked_packet.sent_bytes"
	s.send(10)
	s.advance(50 * renoMs)
	s.ackOldest(4)
	s.wantCwnd(12000 + 4*1200)
	s.ackOldest(6)
	s.wantCwnd(24000)
	// Section 7.3.1: "This results in exponential growth of the congestion
	// window."
	s.round(50 * renoMs)
	s.wantCwnd(48000)
	s.wantPhase("slow_start")
}

func TestNewRenoEnterRecovery(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	s.round(50 * renoMs) // cwnd 24000
	s.fill()             // 20 packets in flight
	s.advance(50 * renoMs)
	// RFC 9002, Section 7.3.1: "The sender MUST exit slow start and enter
	// a recovery period when a packet is lost". Appendix B.6:
	// "ssthresh = congestion_window * kLossReductionFactor;
	// congestion_window = max(ssthresh, kMinimumWindow)"
	s.loseOldest(1, false)
	s.wantCwnd(12000)
	s.wantPhase("recovery")
	st := s.c.State()
	if st.InSlowStart || !st.InRecovery {
		t.Fatalf("state after loss %+v", st)
	}
	// Section 7.3.2: "A sender that is already in a recovery period stays
	// in it and does not reenter it." Appendix B.6: "No reaction if already
	// in a recovery period." (the packet was sent before recovery began)
	s.loseOldest(1, false)
	s.wantCwnd(12000)
	// Appendix B.5: "Do not increase congestion window in recovery
	// period." Acknowledging packets sent before the recovery period began
	// neither grows the window nor ends recovery.
	s.ackOldest(5)
	s.wantCwnd(12000)
	s.wantPhase("recovery")
}

func TestNewRenoRecoveryEndsOnAckOfPacketSentDuringRecovery(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	s.round(50 * renoMs)
	s.fill()
	s.advance(50 * renoMs)
	s.loseOldest(1, false) // recovery starts now; cwnd 12000
	s.ackOldest(len(s.pending))
	s.advance(time.Millisecond)
	s.send(1) // sent during the recovery period
	s.advance(50 * renoMs)
	// RFC 9002, Section 7.3.2: "A recovery period ends and the sender
	// enters congestion avoidance when a packet sent during the recovery
	// period is acknowledged."
	s.ackOldest(1)
	s.wantPhase("congestion_avoidance")
	// Appendix B.5, congestion avoidance: "congestion_window +=
	// max_datagram_size * acked_packet.sent_bytes / congestion_window",
	// counted in whole bytes: 1200 of 12000 acknowledged so far.
	s.wantCwnd(12000)
	// A new loss of a packet sent after the recovery period began starts a
	// new one: B.2, congestion_recovery_start_time: "When a packet sent
	// after this time is acknowledged, QUIC exits congestion recovery."
	s.send(4)
	s.advance(50 * renoMs)
	s.loseOldest(1, false)
	s.wantCwnd(6000)
	s.wantPhase("recovery")
}

func TestNewRenoCongestionAvoidance(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	s.round(50 * renoMs)
	s.fill()
	s.advance(50 * renoMs)
	s.loseOldest(1, false)
	s.ackOldest(len(s.pending))
	s.advance(time.Millisecond)
	s.wantCwnd(12000)
	// RFC 9002, Section 7.3.3: "A sender in congestion avoidance uses an
	// Additive Increase Multiplicative Decrease (AIMD) approach that MUST
	// limit the increase to the congestion window to at most one maximum
	// datagram size for each congestion window that is acknowledged."
	for i, want := range []int{13200, 14400, 15600, 16800} {
		s.round(50 * renoMs)
		s.wantCwnd(want)
		s.wantPhase("congestion_avoidance")
		if i == 0 && s.c.State().InSlowStart {
			t.Fatal("in slow start in congestion avoidance")
		}
	}
	// Partial windows accumulate: half a window gives nothing yet, the
	// other half one datagram.
	s.fill()
	s.advance(50 * renoMs)
	s.ackOldest(len(s.pending) / 2)
	s.wantCwnd(16800)
	s.ackOldest(len(s.pending))
	s.wantCwnd(18000)
}

func TestNewRenoMinimumWindow(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	// RFC 9002, Section 7.2: "The minimum congestion window is the smallest
	// value the congestion window can attain in response to loss, an
	// increase in the peer-reported ECN-CE count, or persistent
	// congestion. The RECOMMENDED value is 2 * max_datagram_size."
	for range 6 {
		s.fill()
		s.advance(10 * renoMs)
		s.loseOldest(1, false)
		s.ackOldest(len(s.pending))
		s.advance(10 * renoMs)
	}
	s.wantCwnd(2 * 1200)
}

func TestNewRenoECN(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	s.round(50 * renoMs) // 24000
	s.fill()
	sent := s.now
	s.advance(50 * renoMs)
	// RFC 9002, Section 7.3.2: "A NewReno sender enters a recovery period
	// when it detects the loss of a packet or when the ECN-CE count
	// reported by its peer increases." Appendix B.7: "sent_time =
	// sent_packets[ack.largest_acked].time_sent; OnCongestionEvent(sent_time)"
	s.ackOldest(len(s.pending)) // slow start: 48000
	s.ecn(sent)
	s.wantCwnd(24000)
	s.wantPhase("recovery")
	s.ecn(sent) // same round: no further reduction
	s.wantCwnd(24000)
}

func TestNewRenoPersistentCongestion(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	s.round(50 * renoMs)
	s.round(50 * renoMs) // 48000
	s.fill()
	s.advance(time.Second)
	// RFC 9002, Appendix B.8: "if (InPersistentCongestion(pc_lost)):
	// congestion_window = kMinimumWindow; congestion_recovery_start_time =
	// 0". OnCongestionEvent ran first and halved ssthresh.
	s.loseOldest(len(s.pending), true)
	s.wantCwnd(2400)
	// Section 7.3.1: "A sender reenters slow start any time the congestion
	// window is less than the slow start threshold, which only occurs
	// after persistent congestion is declared."
	s.wantPhase("slow_start")
	if st := s.c.State(); !st.InSlowStart || st.InRecovery {
		t.Fatalf("state after persistent congestion %+v", st)
	}
	s.round(50 * renoMs)
	s.wantCwnd(4800) // slow start: doubled
	// congestion_recovery_start_time = 0: the next loss starts a recovery
	// period even for a packet sent before the persistent congestion.
	s.fill()
	s.advance(50 * renoMs)
	s.loseOldest(1, false)
	s.wantCwnd(2400)
	s.wantPhase("recovery")
}

func TestNewRenoPersistentCongestionDuringRecovery(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	s.round(50 * renoMs)
	s.fill()
	s.advance(50 * renoMs)
	s.loseOldest(1, false) // recovery: cwnd 12000, ssthresh 12000
	s.advance(time.Second)
	s.loseOldest(len(s.pending), true)
	// RFC 9002, Section 7.6.2: "When persistent congestion is declared, the
	// sender's congestion window MUST be reduced to the minimum congestion
	// window (kMinimumWindow)".
	s.wantCwnd(2400)
	s.wantPhase("slow_start")
}

func TestNewRenoAppLimited(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	s.send(3) // the application has only 3 packets
	s.c.OnAppLimited(s.now, s.inFlight)
	s.wantPhase("application_limited")
	if !s.c.State().AppLimited {
		t.Fatal("AppLimited = false")
	}
	s.advance(50 * renoMs)
	// RFC 9002, Section 7.8: "When this occurs, the congestion window
	// SHOULD NOT be increased in either slow start or congestion
	// avoidance." Appendix B.5: "Do not increase congestion_window if
	// application limited or flow control limited."
	s.ackOldest(3)
	s.wantCwnd(12000)
	// A send that uses the window up ends the application-limited period.
	s.fill()
	if s.c.State().AppLimited {
		t.Fatal("AppLimited after filling the window")
	}
	s.advance(50 * renoMs)
	s.ackOldest(len(s.pending))
	s.wantCwnd(24000)

	// The same in congestion avoidance.
	s.fill()
	s.advance(50 * renoMs)
	s.loseOldest(1, false)
	s.ackOldest(len(s.pending))
	s.advance(time.Millisecond)
	s.round(50 * renoMs)
	s.wantPhase("congestion_avoidance")
	cw := s.c.CongestionWindow()
	for range 3 {
		s.send(2)
		s.c.OnAppLimited(s.now, s.inFlight)
		s.advance(50 * renoMs)
		s.ackOldest(len(s.pending))
	}
	s.wantCwnd(cw)
	// OnAppLimited with the window used up is not application limited.
	s.fill()
	s.c.OnAppLimited(s.now, s.inFlight)
	if s.c.State().AppLimited {
		t.Fatal("AppLimited with a full window")
	}
}

func TestNewRenoPacingRate(t *testing.T) {
	s := renoNewSim(t, NewNewReno)
	s.send(1)
	s.advance(100 * renoMs)
	s.ackOldest(1) // srtt 100ms, cwnd 13200
	// RFC 9002, Section 7.7: "rate = N * congestion_window / smoothed_rtt";
	// "Using a value for N that is small, but at least 1 (for example,
	// 1.25)".
	if got, want := s.c.PacingRate(), uint64(13200*5/4*10); got != want {
		t.Fatalf("PacingRate = %d, want %d", got, want)
	}
	if got := renoPacingRate(1<<62, time.Nanosecond); got != ^uint64(0) {
		t.Fatalf("saturating rate = %d", got)
	}
	if got := renoPacingRate(0, time.Second); got != 0 {
		t.Fatalf("rate of an empty window = %d", got)
	}
}

func TestNewRenoSetMaxDatagramSize(t *testing.T) {
	c := NewNewReno(ControllerConfig{MaxDatagramSize: 1200})
	// RFC 9002, Section 7.2: "If the maximum datagram size changes during
	// the connection, the initial congestion window SHOULD be recalculated
	// with the new size."
	c.SetMaxDatagramSize(1400)
	if c.CongestionWindow() != 14000 {
		t.Fatalf("cwnd = %d after SetMaxDatagramSize(1400), want 14000", c.CongestionWindow())
	}
	c.SetMaxDatagramSize(1200)
	if c.CongestionWindow() != 12000 {
		t.Fatalf("cwnd = %d after SetMaxDatagramSize(1200), want 12000", c.CongestionWindow())
	}
	// Once the window has moved, only the minimum window follows the size.
	s := renoNewSim(t, NewNewReno)
	for range 6 {
		s.fill()
		s.advance(10 * renoMs)
		s.loseOldest(1, false)
		s.ackOldest(len(s.pending))
		s.advance(10 * renoMs)
	}
	s.c.SetMaxDatagramSize(1500)
	s.wantCwnd(3000)
}
