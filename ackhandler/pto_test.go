package ackhandler

import (
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// expectDeadline fails unless the loss detection deadline is want.
func expectDeadline(t *testing.T, h *SentPacketHandler, want time.Time) {
	t.Helper()
	if got := h.LossDetectionDeadline(); !got.Equal(want) {
		if want.IsZero() {
			t.Fatalf("deadline = +%v, want none", got.Sub(t0))
		}
		if got.IsZero() {
			t.Fatalf("no deadline, want +%v", want.Sub(t0))
		}
		t.Fatalf("deadline = +%v, want +%v", got.Sub(t0), want.Sub(t0))
	}
}

// RFC 9002, Section 6.2.1: "PTO = smoothed_rtt + max(4*rttvar,
// kGranularity) + max_ack_delay" and "When the PTO is armed for Initial or
// Handshake packet number spaces, the max_ack_delay in the PTO period
// computation is set to 0".
func TestPTOPeriod(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.rtt.SetMaxAckDelay(ms(25))
	now := e.establishRTT(t, t0, ms(100)) // smoothed 100ms, rttvar 50ms
	e.h.SetHandshakeConfirmed(now)
	e.send(now, SpaceApplication)
	expectDeadline(t, e.h, now.Add(ms(100+200+25)))

	e = newEnv(t, wire.RoleServer)
	e.rtt.SetMaxAckDelay(ms(25))
	now = t0
	pn := e.send(now, SpaceInitial)
	now = now.Add(ms(100))
	e.ack(t, now, SpaceInitial, pn, pn)
	e.send(now, SpaceInitial)
	expectDeadline(t, e.h, now.Add(ms(100+200)))
}

// RFC 9002, Section 6.2.1: "The PTO period MUST be at least kGranularity
// to avoid the timer expiring immediately."
func TestPTOGranularity(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	now := e.establishRTT(t, t0, 10*time.Microsecond)
	e.h.SetHandshakeConfirmed(now)
	e.send(now, SpaceApplication)
	expectDeadline(t, e.h, now.Add(10*time.Microsecond+time.Millisecond))
}

// RFC 9002, Section 6.2.2: "When no previous RTT is available, the initial
// RTT SHOULD be set to 333 milliseconds. This results in handshakes
// starting with a PTO of 1 second".
func TestPTOInitialRTT(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceInitial)
	expectDeadline(t, e.h, t0.Add(ms(333+4*166.5)))
}

// RFC 9002, Section 6.2.1: "When a PTO timer expires, the PTO backoff MUST
// be increased, resulting in the PTO period being set to twice its
// current value. The PTO backoff factor is reset when an acknowledgment is
// received".
func TestPTOBackoff(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.rtt.SetMaxAckDelay(ms(25))
	now := e.establishRTT(t, t0, ms(100))
	e.h.SetHandshakeConfirmed(now)
	e.send(now, SpaceApplication)
	for i, period := range []time.Duration{ms(325), ms(650), ms(1300), ms(2600)} {
		expectDeadline(t, e.h, now.Add(period))
		// A call before the deadline does nothing.
		e.h.OnLossDetectionTimeout(now.Add(period - 1))
		if e.h.PTOCount() != i {
			t.Fatalf("early timeout counted")
		}
		now = now.Add(period)
		e.h.OnLossDetectionTimeout(now)
		if e.h.PTOCount() != i+1 {
			t.Fatalf("pto_count = %d, want %d", e.h.PTOCount(), i+1)
		}
		// "A PTO timer expiration event does not indicate packet loss and
		// MUST NOT cause prior unacknowledged packets to be marked as
		// lost."
		if len(e.cc.congs) != 0 || e.h.BytesInFlight() != 1200*(i+1) {
			t.Fatalf("PTO declared packets lost")
		}
		if e.h.ProbesToSend() != 2 || e.h.ProbeSpace() != SpaceApplication {
			t.Fatalf("probes = %d in %v, want 2 in application", e.h.ProbesToSend(), e.h.ProbeSpace())
		}
		// One probe is sent; the timer restarts from it.
		e.send(now, SpaceApplication)
		if e.h.ProbesToSend() != 1 {
			t.Fatalf("probes after one sent = %d", e.h.ProbesToSend())
		}
	}
	pn := e.send(now, SpaceApplication)
	e.ack(t, now.Add(ms(100)), SpaceApplication, pn, pn)
	if e.h.PTOCount() != 0 {
		t.Fatalf("pto_count = %d after an acknowledgment, want 0", e.h.PTOCount())
	}
}

// RFC 9002, Section 6.2.1: "When ack-eliciting packets in multiple packet
// number spaces are in flight, the timer MUST be set to the earlier value
// of the Initial and Handshake packet number spaces." and "a timeout in
// the Initial packet number space doubles the length of the timeout in the
// Handshake packet number space."
func TestPTOEarliestSpace(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	pto := ms(333 + 4*166.5)
	e.send(t0.Add(ms(10)), SpaceHandshake)
	e.send(t0, SpaceInitial)
	expectDeadline(t, e.h, t0.Add(pto))
	e.h.OnLossDetectionTimeout(t0.Add(pto))
	if e.h.ProbeSpace() != SpaceInitial {
		t.Fatalf("probe space %v, want initial", e.h.ProbeSpace())
	}
	e.send(t0.Add(pto), SpaceInitial)
	e.send(t0.Add(pto), SpaceInitial)
	// Initial at pto + 2*pto comes after Handshake at 10ms + 2*pto.
	expectDeadline(t, e.h, t0.Add(ms(10)+2*pto))
	e.h.OnLossDetectionTimeout(t0.Add(ms(10) + 2*pto))
	if e.h.ProbeSpace() != SpaceHandshake {
		t.Fatalf("probe space %v, want handshake", e.h.ProbeSpace())
	}
}

// RFC 9002, Section 6.2.1: "An endpoint MUST NOT set its PTO timer for the
// Application Data packet number space until the handshake is confirmed."
func TestNoApplicationPTOBeforeConfirmed(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceApplication)
	expectDeadline(t, e.h, time.Time{})
	e.send(t0, SpaceHandshake)
	expectDeadline(t, e.h, t0.Add(ms(999)))
	e.h.DropSpace(t0.Add(ms(5)), SpaceHandshake)
	expectDeadline(t, e.h, time.Time{})
	e.h.SetHandshakeConfirmed(t0.Add(ms(5)))
	expectDeadline(t, e.h, t0.Add(ms(999))) // max_ack_delay is 0 here
}

// RFC 9002, Section 6.2.2.1: "the client MUST set the PTO timer if the
// client has not received an acknowledgment for any of its Handshake
// packets and the handshake is not confirmed ..., even if there are no
// packets in flight. When the PTO fires, the client MUST send a Handshake
// packet if it has Handshake keys, otherwise it MUST send an Initial
// packet in a UDP datagram with a payload of at least 1200 bytes."
func TestClientAntiDeadlock(t *testing.T) {
	e := newEnv(t, wire.RoleClient)
	pn := e.send(t0, SpaceInitial)
	now := t0.Add(ms(100))
	e.ack(t, now, SpaceInitial, pn, pn)
	if e.h.BytesInFlight() != 0 {
		t.Fatal("packets in flight")
	}
	// "Anti-deadlock PTO starts from the current time": now + 100 + 200.
	expectDeadline(t, e.h, now.Add(ms(300)))
	now = now.Add(ms(300))
	e.h.OnLossDetectionTimeout(now)
	if e.h.ProbesToSend() != 1 || e.h.ProbeSpace() != SpaceInitial || e.h.PTOCount() != 1 {
		t.Fatalf("probes %d in %v, pto_count %d; want 1 Initial probe, 1", e.h.ProbesToSend(), e.h.ProbeSpace(), e.h.PTOCount())
	}
	pn = e.send(now, SpaceInitial)
	now = now.Add(ms(100))
	e.ack(t, now, SpaceInitial, pn, pn)
	// RFC 9002, Section 6.2.1: "a client does not reset the PTO backoff
	// factor on receiving acknowledgments in Initial packets."
	if e.h.PTOCount() != 1 {
		t.Fatalf("pto_count = %d after an Initial ACK, want 1", e.h.PTOCount())
	}
	expectDeadline(t, e.h, now.Add(2*e.rtt.PTO(false)))
	// The client gets Handshake keys and acknowledges the server's
	// Handshake packets with an ACK-only packet: the probe is a
	// Handshake packet.
	e.sendP(now, SpaceHandshake, false, 50)
	now = e.h.LossDetectionDeadline()
	e.h.OnLossDetectionTimeout(now)
	if e.h.ProbesToSend() != 1 || e.h.ProbeSpace() != SpaceHandshake {
		t.Fatalf("probes %d in %v; want 1 Handshake probe", e.h.ProbesToSend(), e.h.ProbeSpace())
	}
	pn = e.send(now, SpaceHandshake)
	// An acknowledgment of a Handshake packet completes address
	// validation: the backoff is reset and no timer remains.
	e.ack(t, now.Add(ms(100)), SpaceHandshake, pn-1, pn)
	if e.h.PTOCount() != 0 {
		t.Fatalf("pto_count = %d after a Handshake ACK, want 0", e.h.PTOCount())
	}
	expectDeadline(t, e.h, time.Time{})
}

// A client whose only ack-eliciting packets in flight are 0-RTT packets
// before the handshake is confirmed keeps an anti-deadlock timer
// (refinement of RFC 9002, Appendix A.8, which would arm none).
func TestClientAntiDeadlockWithZeroRTTInFlight(t *testing.T) {
	e := newEnv(t, wire.RoleClient)
	pn := e.send(t0, SpaceInitial)
	e.send(t0, SpaceApplication) // 0-RTT
	now := t0.Add(ms(100))
	e.ack(t, now, SpaceInitial, pn, pn)
	expectDeadline(t, e.h, now.Add(ms(300)))
	e.h.OnLossDetectionTimeout(now.Add(ms(300)))
	if e.h.ProbesToSend() != 1 || e.h.ProbeSpace() != SpaceInitial {
		t.Fatalf("probes %d in %v", e.h.ProbesToSend(), e.h.ProbeSpace())
	}
	// Once the server is known to have validated the address, the 0-RTT
	// packets alone arm nothing until the handshake is confirmed.
	e.h.SetPeerCompletedAddressValidation(now)
	expectDeadline(t, e.h, time.Time{})
}

// RFC 9002, Section 6.2.2.1: "If no additional data can be sent, the
// server's PTO timer MUST NOT be armed until datagrams have been received
// from the client" ... "If the PTO timer is then set to a time in the
// past, it is executed immediately."
func TestServerAmplificationLimit(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceInitial)
	e.h.SetAmplificationLimited(t0, true)
	expectDeadline(t, e.h, time.Time{})
	e.send(t0, SpaceInitial)
	expectDeadline(t, e.h, time.Time{})
	now := t0.Add(2 * time.Second)
	e.h.SetAmplificationLimited(now, false)
	if d := e.h.LossDetectionDeadline(); d.IsZero() || d.After(now) {
		t.Fatalf("deadline = %v, want one in the past", d.Sub(t0))
	}
	e.h.OnLossDetectionTimeout(now)
	if e.h.ProbesToSend() != 2 || e.h.ProbeSpace() != SpaceInitial {
		t.Fatalf("probes %d in %v", e.h.ProbesToSend(), e.h.ProbeSpace())
	}
}

// RFC 9002, Section 6.4: "The sender MUST discard all recovery state
// associated with those packets and MUST remove them from the count of
// bytes in flight." Section 6.2.2: "When Initial or Handshake keys are
// discarded, the PTO and loss detection timers MUST be reset".
func TestDropSpace(t *testing.T) {
	e := newEnv(t, wire.RoleClient, func(c *Config) { c.DisableECN = false })
	e.h.AddFrame(SpaceInitial, FrameRecord{Type: wire.FrameTypeCrypto, Length: 1000})
	e.send(t0, SpaceInitial)
	e.send(t0, SpaceInitial)
	e.send(t0.Add(ms(50)), SpaceHandshake)
	e.h.OnLossDetectionTimeout(e.h.LossDetectionDeadline())
	if e.h.PTOCount() != 1 || e.h.ProbeSpace() != SpaceInitial {
		t.Fatalf("pto_count %d, probe space %v", e.h.PTOCount(), e.h.ProbeSpace())
	}
	now := t0.Add(ms(1200))
	e.h.DropSpace(now, SpaceInitial)
	if e.h.BytesInFlight() != 1200 {
		t.Fatalf("BytesInFlight = %d, want 1200", e.h.BytesInFlight())
	}
	if len(e.cc.congs) != 0 || len(e.fh.lost) != 0 || len(e.fh.acked) != 0 {
		t.Fatalf("discarded packets were reported: %d congestion events, %d lost frames", len(e.cc.congs), len(e.fh.lost))
	}
	if e.h.PTOCount() != 0 || e.h.ProbesToSend() != 0 {
		t.Fatalf("pto_count %d, probes %d after DropSpace", e.h.PTOCount(), e.h.ProbesToSend())
	}
	// The timer now runs for the Handshake packet, without backoff.
	expectDeadline(t, e.h, t0.Add(ms(50+999)))
	// Discarded marked packets do not make ECN validation fail.
	if e.h.ECNState() == ECNFailed {
		t.Fatal("ECN failed by discarding")
	}
	// ACK frames for the dropped space are ignored.
	if err := e.h.OnAckReceived(now, SpaceInitial, ackFrame(0, 1), 3); err != nil || e.cc.ackCalls != 0 {
		t.Fatalf("ACK in a dropped space: err %v, %d OnAck", err, e.cc.ackCalls)
	}
	e.h.DropSpace(now, SpaceInitial) // idempotent
	defer func() {
		if recover() == nil {
			t.Fatal("sending in a dropped space did not panic")
		}
	}()
	e.send(now, SpaceInitial)
}

// Requeue serves Retry (RFC 9002, Section 6.3) and rejected 0-RTT
// (Section 6.4): the frames come back as lost, without a congestion
// event.
func TestRequeue(t *testing.T) {
	e := newEnv(t, wire.RoleClient)
	e.h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeStream, StreamID: 0, Length: 500})
	e.send(t0, SpaceApplication)
	e.h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeStream, StreamID: 0, Offset: 500, Length: 500})
	e.send(t0, SpaceApplication)
	e.send(t0, SpaceInitial)
	e.h.Requeue(t0.Add(ms(10)), SpaceApplication)
	if len(e.fh.lost) != 2 || e.fh.lost[1].Offset != 500 {
		t.Fatalf("requeued frames: %+v", e.fh.lost)
	}
	if e.h.BytesInFlight() != 1200 || len(e.cc.congs) != 0 {
		t.Fatalf("bytes in flight %d, congestion events %d", e.h.BytesInFlight(), len(e.cc.congs))
	}
	// The space stays usable and numbering continues.
	if pn := e.send(t0.Add(ms(20)), SpaceApplication); pn != 2 {
		t.Fatalf("next packet number %d, want 2", pn)
	}
}

// Probes are counted only for ack-eliciting packets in the probe space.
func TestProbesConsumed(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceHandshake)
	e.h.OnLossDetectionTimeout(e.h.LossDetectionDeadline())
	if e.h.ProbesToSend() != 2 || e.h.ProbeSpace() != SpaceHandshake {
		t.Fatalf("probes %d in %v", e.h.ProbesToSend(), e.h.ProbeSpace())
	}
	now := t0.Add(time.Second)
	e.sendP(now, SpaceHandshake, false, 40)
	e.send(now, SpaceApplication)
	if e.h.ProbesToSend() != 2 {
		t.Fatalf("probes %d after non-probe packets", e.h.ProbesToSend())
	}
	e.send(now, SpaceHandshake)
	e.send(now, SpaceHandshake)
	e.send(now, SpaceHandshake)
	if e.h.ProbesToSend() != 0 {
		t.Fatalf("probes %d after two probes", e.h.ProbesToSend())
	}
}

func TestHasAckElicitingInFlight(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.sendP(t0, SpaceHandshake, false, 40)
	if e.h.HasAckElicitingInFlight(SpaceHandshake) {
		t.Fatal("ACK-only packet counted as ack-eliciting")
	}
	pn := e.send(t0, SpaceHandshake)
	if !e.h.HasAckElicitingInFlight(SpaceHandshake) {
		t.Fatal("ack-eliciting packet not counted")
	}
	e.ack(t, t0.Add(ms(5)), SpaceHandshake, pn, pn)
	if e.h.HasAckElicitingInFlight(SpaceHandshake) {
		t.Fatal("acknowledged packet still counted")
	}
}

// OutstandingFrames lists the frames of packets neither acknowledged nor
// lost, oldest first, and changes nothing.
func TestOutstandingFrames(t *testing.T) {
	e := newEnv(t, wire.RoleClient)
	for i := range 3 {
		e.h.AddFrame(SpaceInitial, FrameRecord{Type: wire.FrameTypeCrypto, Offset: uint64(i * 100), Length: 100})
		e.send(t0, SpaceInitial)
	}
	if err := e.h.OnAckReceived(t0.Add(ms(10)), SpaceInitial, ackFrame(1, 1), 3); err != nil {
		t.Fatal(err)
	}
	var offs []uint64
	e.h.OutstandingFrames(SpaceInitial, func(f *FrameRecord) { offs = append(offs, f.Offset) })
	if len(offs) != 2 || offs[0] != 0 || offs[1] != 200 {
		t.Fatalf("outstanding CRYPTO offsets %v, want [0 200]", offs)
	}
	if len(e.fh.lost) != 0 || e.h.BytesInFlight() != 2400 {
		t.Fatalf("state changed: %d lost frames, %d bytes in flight", len(e.fh.lost), e.h.BytesInFlight())
	}
}

// RFC 9002, Section 6.2.3: an endpoint "MAY, for a limited number of times
// per connection, send a packet containing unacknowledged CRYPTO data
// earlier than the PTO expiry". ProbeEarly owes one probe in the space,
// leaves the backoff and the deadline alone, and stops after
// maxEarlyProbes.
func TestProbeEarly(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	if e.h.ProbeEarly(SpaceInitial) {
		t.Fatal("a probe owed with nothing in flight")
	}
	e.send(t0, SpaceInitial)
	deadline := e.h.LossDetectionDeadline()
	for i := 0; i < maxEarlyProbes; i++ {
		if !e.h.ProbeEarly(SpaceInitial) {
			t.Fatalf("early probe %d refused", i)
		}
		if e.h.ProbesToSend() != 1 || e.h.ProbeSpace() != SpaceInitial || e.h.PTOCount() != 0 {
			t.Fatalf("early probe %d: %d probes in %v, PTO count %d; want 1 in Initial, 0", i, e.h.ProbesToSend(), e.h.ProbeSpace(), e.h.PTOCount())
		}
		if e.h.ProbeEarly(SpaceInitial) {
			t.Fatalf("early probe %d owed twice", i)
		}
		e.send(t0, SpaceInitial) // the probe
		if e.h.ProbesToSend() != 0 {
			t.Fatalf("early probe %d still owed after it was sent", i)
		}
	}
	if e.h.ProbeEarly(SpaceInitial) {
		t.Fatalf("more than %d early probes", maxEarlyProbes)
	}
	if got := e.h.LossDetectionDeadline(); !got.Equal(deadline) {
		t.Fatalf("deadline moved from +%v to +%v", deadline.Sub(t0), got.Sub(t0))
	}
}
