package ackhandler

import (
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// RFC 9002, Section 6.1.1: "The RECOMMENDED initial value for the packet
// reordering threshold (kPacketThreshold) is 3"; a packet is lost if "The
// packet was sent kPacketThreshold packets before an acknowledged packet".
func TestPacketThresholdLoss(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	for range 6 {
		e.send(t0, SpaceApplication)
	}
	e.ack(t, t0.Add(ms(10)), SpaceApplication, 3, 3)
	if got := e.cc.lostPNs(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("lost = %v, want [0] (3 >= 0+3, but not 3 >= 1+3)", got)
	}
	e.ack(t, t0.Add(ms(11)), SpaceApplication, 5, 5, 3, 3)
	if got := e.cc.lostPNs(); len(got) != 3 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("lost = %v, want [0 1 2]", got)
	}
	if e.h.BytesInFlight() != 1200 {
		t.Fatalf("BytesInFlight = %d, want 1200 (packet 4)", e.h.BytesInFlight())
	}
}

// RFC 9002, Section 6.1.2: "The time threshold is: max(kTimeThreshold *
// max(smoothed_rtt, latest_rtt), kGranularity)" ... "If packets sent prior
// to the largest acknowledged packet cannot yet be declared lost, then a
// timer SHOULD be set for the remaining time."
func TestTimeThresholdLoss(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceApplication)            // 0
	e.send(t0.Add(ms(8)), SpaceApplication) // 1
	now := t0.Add(ms(108))
	e.ack(t, now, SpaceApplication, 1, 1) // RTT 100ms
	if len(e.cc.congs) != 0 {
		t.Fatalf("packet 0 declared lost too early")
	}
	// loss_delay = 9/8 * 100ms = 112.5ms after packet 0 was sent.
	want := t0.Add(ms(112.5))
	if got := e.h.LossDetectionDeadline(); !got.Equal(want) {
		t.Fatalf("loss detection deadline = %v, want %v", got.Sub(t0), want.Sub(t0))
	}
	e.h.OnLossDetectionTimeout(want.Add(-1))
	if len(e.cc.congs) != 0 {
		t.Fatalf("lost before the deadline")
	}
	e.h.OnLossDetectionTimeout(want)
	if got := e.cc.lostPNs(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("lost = %v, want [0]", got)
	}
	if e.h.PTOCount() != 0 || e.h.ProbesToSend() != 0 {
		t.Fatalf("a loss timeout is not a PTO: pto_count %d, probes %d", e.h.PTOCount(), e.h.ProbesToSend())
	}
	if !e.h.LossDetectionDeadline().IsZero() {
		t.Fatalf("timer still armed with nothing in flight: %v", e.h.LossDetectionDeadline())
	}
}

// RFC 9002, Section 6.1.2: the threshold uses max(smoothed_rtt,
// latest_rtt): "the latest RTT sample is higher than the smoothed RTT,
// perhaps due to a sustained increase in the actual RTT".
func TestTimeThresholdUsesLatestRTT(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	now := e.establishRTT(t, t0, ms(100))
	sent0 := now
	e.send(now, SpaceApplication)
	e.send(now, SpaceApplication)
	now = now.Add(ms(300)) // latest_rtt 300ms, smoothed 125ms
	e.ack(t, now, SpaceApplication, 2, 2)
	want := sent0.Add(ms(337.5))
	if got := e.h.LossDetectionDeadline(); !got.Equal(want) {
		t.Fatalf("deadline = +%v, want +%v (9/8 * latest_rtt)", got.Sub(sent0), want.Sub(sent0))
	}
}

// RFC 9002, Section 6.1.2: "To avoid declaring packets as lost too early,
// this time threshold MUST be set to at least the local timer
// granularity, as indicated by the kGranularity constant." "The
// RECOMMENDED value of the timer granularity (kGranularity) is 1
// millisecond."
func TestTimeThresholdGranularity(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceApplication)
	e.send(t0.Add(10*time.Microsecond), SpaceApplication)
	e.ack(t, t0.Add(110*time.Microsecond), SpaceApplication, 1, 1) // RTT 100µs
	if got, want := e.h.LossDetectionDeadline(), t0.Add(time.Millisecond); !got.Equal(want) {
		t.Fatalf("deadline = %v, want %v (kGranularity)", got.Sub(t0), want.Sub(t0))
	}
	e.h.OnLossDetectionTimeout(t0.Add(time.Millisecond))
	if got := e.cc.lostPNs(); len(got) != 1 {
		t.Fatalf("lost = %v", got)
	}
}

// RFC 9002, Section 6.2.1: "The PTO timer MUST NOT be set if a timer is
// set for time threshold loss detection".
func TestLossTimerReplacesPTO(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	now := e.establishRTT(t, t0, ms(100))
	e.h.SetHandshakeConfirmed(now)
	e.send(now, SpaceApplication)             // 1
	e.send(now.Add(ms(50)), SpaceApplication) // 2
	e.send(now.Add(ms(60)), SpaceApplication) // 3
	e.ack(t, now.Add(ms(100)), SpaceApplication, 2, 2)
	lossDelay := 9 * max(e.rtt.Latest(), e.rtt.Smoothed()) / 8
	if got, want := e.h.LossDetectionDeadline(), now.Add(lossDelay); !got.Equal(want) {
		t.Fatalf("deadline = %v, want the loss time of packet 1 %v", got.Sub(now), want.Sub(now))
	}
	e.h.OnLossDetectionTimeout(now.Add(lossDelay))
	// Now the PTO for packet 3 is armed.
	pto := e.rtt.PTO(true)
	if got, want := e.h.LossDetectionDeadline(), now.Add(ms(60)+pto); !got.Equal(want) {
		t.Fatalf("deadline = %v, want the PTO %v", got.Sub(now), want.Sub(now))
	}
}

// RFC 9002, Section 6.1: a packet is lost only if it "is unacknowledged,
// in flight, and was sent prior to an acknowledged packet": packets
// after the largest acknowledged stay outstanding however old.
func TestNoLossAboveLargestAcked(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	for range 5 {
		e.send(t0, SpaceApplication)
	}
	e.ack(t, t0.Add(ms(10)), SpaceApplication, 1, 1)
	e.h.OnLossDetectionTimeout(t0.Add(time.Hour))
	if got := e.cc.lostPNs(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("lost = %v, want [0] only", got)
	}
}

// setupPersistent returns an env with an RTT sample of 100ms taken in the
// application space (no max_ack_delay), so that the persistent congestion
// duration is (100 + 4*50 + 0) * 3 = 900ms.
func setupPersistent(t *testing.T) (*testEnv, time.Time) {
	e := newEnv(t, wire.RoleServer)
	now := e.establishRTT(t, t0, ms(100))
	if got := e.rtt.PTO(true) * 3; got != ms(900) {
		t.Fatalf("persistent congestion duration = %v", got)
	}
	return e, now
}

// RFC 9002, Section 7.6.2: "A sender establishes persistent congestion
// after the receipt of an acknowledgment if two packets that are
// ack-eliciting are declared lost, and: across all packet number spaces,
// none of the packets sent between the send times of these two packets
// are acknowledged; the duration between the send times of these two
// packets exceeds the persistent congestion duration (Section 7.6.1); and
// a prior RTT sample existed when these two packets were sent."
func TestPersistentCongestion(t *testing.T) {
	e, now := setupPersistent(t)
	start := now
	for i := range 6 { // packets 1..6, 200ms apart: 1000ms from first to last
		e.send(start.Add(time.Duration(i)*ms(200)), SpaceApplication)
	}
	last := e.send(start.Add(ms(1100)), SpaceApplication) // 7
	now = start.Add(ms(1250))                             // latest_rtt 150ms
	minBefore := e.rtt.Min()
	e.ack(t, now, SpaceApplication, last, last)
	c := e.cc.lastCong()
	if len(c.Lost) != 6 || !c.PersistentCongestion {
		t.Fatalf("lost %d packets, persistent congestion %v; want 6, true", len(c.Lost), c.PersistentCongestion)
	}
	// RFC 9002, Section 5.2: "Endpoints SHOULD set the min_rtt to the
	// newest RTT sample after persistent congestion is established."
	if e.rtt.Min() != e.rtt.Latest() || e.rtt.Min() == minBefore {
		t.Fatalf("min_rtt = %v, latest %v", e.rtt.Min(), e.rtt.Latest())
	}
}

// The same losses with an acknowledged packet in between: "none of the
// packets sent between the send times of these two packets are
// acknowledged".
func TestPersistentCongestionInterveningAck(t *testing.T) {
	e, now := setupPersistent(t)
	start := now
	var pns []wire.PacketNumber
	for i := range 6 {
		pns = append(pns, e.send(start.Add(time.Duration(i)*ms(200)), SpaceApplication))
	}
	last := e.send(start.Add(ms(1100)), SpaceApplication)
	// Packet pns[3] (sent at +600ms) is acknowledged: the runs of lost
	// packets before and after it span 400ms and 200ms.
	e.ack(t, start.Add(ms(1200)), SpaceApplication, last, last, pns[3], pns[3])
	c := e.cc.lastCong()
	if len(c.Lost) != 5 || c.PersistentCongestion {
		t.Fatalf("lost %d, persistent congestion %v; want 5, false", len(c.Lost), c.PersistentCongestion)
	}
}

// "The persistent congestion period SHOULD NOT start until there is at
// least one RTT sample."
func TestPersistentCongestionNeedsPriorRTTSample(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	for i := range 6 {
		e.send(t0.Add(time.Duration(i)*ms(500)), SpaceApplication)
	}
	last := e.send(t0.Add(ms(3000)), SpaceApplication)
	e.ack(t, t0.Add(ms(3100)), SpaceApplication, last, last)
	c := e.cc.lastCong()
	if len(c.Lost) != 6 || c.PersistentCongestion {
		t.Fatalf("lost %d, persistent congestion %v; want 6, false (no prior RTT sample)", len(c.Lost), c.PersistentCongestion)
	}
}

// Losses spanning less than the duration, or only non-ack-eliciting
// packets ("These two packets MUST be ack-eliciting"), establish nothing.
func TestPersistentCongestionDurationAndAckEliciting(t *testing.T) {
	e, now := setupPersistent(t)
	start := now
	// The duration is computed after this ACK's sample: smoothed_rtt
	// 100ms, rttvar 37.5ms, so (100 + 150) * 3 = 750ms.
	for i := range 4 { // 0..600ms
		e.send(start.Add(time.Duration(i)*ms(200)), SpaceApplication)
	}
	last := e.send(start.Add(ms(650)), SpaceApplication)
	e.ack(t, start.Add(ms(750)), SpaceApplication, last, last)
	if c := e.cc.lastCong(); len(c.Lost) != 4 || c.PersistentCongestion {
		t.Fatalf("lost %d, persistent %v; want 4, false", len(c.Lost), c.PersistentCongestion)
	}

	e, now = setupPersistent(t)
	start = now
	e.send(start, SpaceApplication)
	e.sendP(start.Add(ms(1000)), SpaceApplication, false, 1200) // padding only: in flight, not ack-eliciting
	e.h.OnPacketSent(start.Add(ms(1000)), SpaceApplication, SentPacket{PacketNumber: 3, Size: 1200, InFlight: true})
	for range 3 {
		e.send(start.Add(ms(1001)), SpaceApplication)
	}
	e.ack(t, start.Add(ms(1100)), SpaceApplication, 6, 6)
	if c := e.cc.lastCong(); c.PersistentCongestion {
		t.Fatalf("persistent congestion from a span ending in non-ack-eliciting packets: %+v", c)
	}
}

// Persistent congestion is also established by time threshold loss on
// the timer, from packets declared lost by different detection passes:
// packet 1 (at +0) is lost by the ACK at once, packet 2 (at +1000ms) by
// the timer a little later, and nothing sent between them was
// acknowledged. "A sender establishes persistent congestion after the
// receipt of an acknowledgment if two packets that are ack-eliciting are
// declared lost" (RFC 9002, Section 7.6.2): the two need not be declared
// by the same pass, and only one pass ever sees them both when the first
// was lost by the packet threshold and the second waits for the time
// threshold. Packet 1's record is gone by then (kept two PTOs after it
// was sent, compact).
func TestPersistentCongestionOnLossTimer(t *testing.T) {
	e, now := setupPersistent(t)
	start := now
	e.send(start, SpaceApplication)
	e.send(start.Add(ms(1000)), SpaceApplication)
	last := e.send(start.Add(ms(1000)), SpaceApplication)
	e.ack(t, start.Add(ms(1100)), SpaceApplication, last, last)
	if c := e.cc.lastCong(); len(c.Lost) != 1 || c.PersistentCongestion {
		t.Fatalf("ACK's loss: %+v", c)
	}
	e.h.OnLossDetectionTimeout(e.h.LossDetectionDeadline())
	c := e.cc.lastCong()
	if len(c.Lost) != 1 || !c.PersistentCongestion {
		t.Fatalf("timer loss: lost %d, persistent congestion %v; want 1, true", len(c.Lost), c.PersistentCongestion)
	}
}

// The same across passes with a packet sent between the two lost ones,
// declared lost by the first pass and then acknowledged late: "none of
// the packets sent between the send times of these two packets are
// acknowledged" no longer holds.
func TestPersistentCongestionAcrossPassesBrokenByAck(t *testing.T) {
	e, now := setupPersistent(t)
	start := now
	e.send(start, SpaceApplication)                     // 1, lost by the first ACK
	mid := e.send(start.Add(ms(500)), SpaceApplication) // 2, lost by it too, acknowledged later
	e.send(start.Add(ms(1000)), SpaceApplication)       // 3, lost by the timer
	e.send(start.Add(ms(1000)), SpaceApplication)       // 4, lost by the timer
	last := e.send(start.Add(ms(1001)), SpaceApplication)
	e.ack(t, start.Add(ms(1100)), SpaceApplication, last, last)
	if c := e.cc.lastCong(); len(c.Lost) != 2 || c.PersistentCongestion {
		t.Fatalf("ACK's loss: %+v", c)
	}
	e.ack(t, start.Add(ms(1105)), SpaceApplication, mid, mid, last, last)
	e.h.OnLossDetectionTimeout(e.h.LossDetectionDeadline())
	if c := e.cc.lastCong(); len(c.Lost) != 2 || c.PersistentCongestion {
		t.Fatalf("timer loss: lost %d, persistent congestion %v; want 2, false (packet 2 acknowledged)", len(c.Lost), c.PersistentCongestion)
	}
}

// RFC 9002, Section 7.6.2: "across all packet number spaces, none of the
// packets sent between the send times of these two packets are
// acknowledged".
func TestPersistentCongestionAckInOtherSpace(t *testing.T) {
	e, now := setupPersistent(t)
	start := now
	for i := range 6 {
		e.send(start.Add(time.Duration(i)*ms(200)), SpaceApplication)
		if i == 2 {
			pn := e.send(start.Add(ms(450)), SpaceHandshake)
			e.ack(t, start.Add(ms(550)), SpaceHandshake, pn, pn)
		}
	}
	last := e.send(start.Add(ms(1100)), SpaceApplication)
	e.ack(t, start.Add(ms(1250)), SpaceApplication, last, last)
	if c := e.cc.lastCong(); len(c.Lost) != 6 || c.PersistentCongestion {
		t.Fatalf("lost %d, persistent congestion %v; want 6, false (Handshake packet acknowledged in between)", len(c.Lost), c.PersistentCongestion)
	}
}

// RFC 9002, Appendix A.7: an ACK frame's losses are processed before its
// newly acknowledged packets,
//
//	lost_packets = DetectAndRemoveLostPackets(pn_space)
//	if (!lost_packets.empty()):
//	  OnPacketsLost(lost_packets)
//	OnPacketsAcked(newly_acked_packets)
//
// so the ACK that starts a recovery period does not first grow the window
// that the recovery period then reduces: its packets were sent before the
// period began ("Do not increase congestion window in recovery period",
// Appendix B.5). Ten packets of 1,200 bytes fill the initial window of
// 12,000 bytes; an ACK of the last six declares the first four lost.
func TestAckLossesBeforeGrowth(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    congestion.ControllerFactory
		want int
	}{
		// kLossReductionFactor 0.5 (RFC 9002, Section 7.3.2).
		{"newreno", congestion.NewNewReno, 6000},
		// β_cubic 0.7 (RFC 9438, Section 4.6).
		{"cubic", congestion.NewCubic, 8400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rtt := congestion.NewRTTStats()
			cc := tc.f(congestion.ControllerConfig{RTT: rtt, MaxDatagramSize: 1200})
			e := &testEnv{rtt: rtt, fh: &fakeFrames{}}
			e.h = New(Config{Role: wire.RoleServer, RTT: rtt, Controller: cc, Frames: e.fh,
				DisablePacketNumberSkipping: true, DisableECN: true})
			if w := cc.CongestionWindow(); w != 12000 {
				t.Fatalf("initial window %d", w)
			}
			for range 10 {
				e.send(t0, SpaceApplication)
			}
			e.ack(t, t0.Add(ms(50)), SpaceApplication, 4, 9)
			if n := e.h.LostPackets(); n != 4 {
				t.Fatalf("%d packets lost, want 4", n)
			}
			if w := cc.CongestionWindow(); w != tc.want {
				t.Errorf("window %d after the ACK that started recovery, want %d", w, tc.want)
			}
		})
	}
}
