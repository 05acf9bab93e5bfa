package ackhandler

import (
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

func newECNEnv(t *testing.T) *testEnv {
	return newEnv(t, wire.RoleServer, func(c *Config) { c.DisableECN = false })
}

func ecnAck(counts wire.ECNCounts, pairs ...wire.PacketNumber) *wire.AckFrame {
	f := ackFrame(pairs...)
	f.HasECN = true
	f.ECN = counts
	return f
}

// RFC 9000, Section 13.4.2: "The endpoint sets an ECT(0) codepoint in the
// IP header of early outgoing packets sent on a new path to the peer" ...
// "the endpoint could set an ECT codepoint for only the first ten outgoing
// packets on a path"; Appendix A.4: "After the testing period ends, the
// ECN state for the path becomes "unknown". From the "unknown" state,
// successful validation of the ECN counts in an ACK frame ... causes the
// ECN state for the path to become "capable"".
func TestECNValidationSuccess(t *testing.T) {
	e := newECNEnv(t)
	if e.h.ECNState() != ECNTesting || e.h.ECNMarking() != ECT0 {
		t.Fatalf("initial state %v, marking %v", e.h.ECNState(), e.h.ECNMarking())
	}
	for range ECNTestingPackets {
		e.send(t0, SpaceApplication)
	}
	if e.h.ECNState() != ECNUnknown || e.h.ECNMarking() != NotECT {
		t.Fatalf("after the testing period: state %v, marking %v", e.h.ECNState(), e.h.ECNMarking())
	}
	e.send(t0, SpaceApplication) // unmarked
	err := e.h.OnAckReceived(t0.Add(ms(20)), SpaceApplication, ecnAck(wire.ECNCounts{ECT0: 10}, 0, 10), 3)
	if err != nil {
		t.Fatal(err)
	}
	if e.h.ECNState() != ECNCapable || e.h.ECNMarking() != ECT0 {
		t.Fatalf("after validation: state %v, marking %v", e.h.ECNState(), e.h.ECNMarking())
	}
	if len(e.cc.congs) != 0 {
		t.Fatal("congestion event without CE")
	}
}

// RFC 9000, Section 13.4.2.1: "If an ACK frame newly acknowledges a packet
// that the endpoint sent with either the ECT(0) or ECT(1) codepoint set,
// ECN validation fails if the corresponding ECN counts are not present in
// the ACK frame. This check detects a network element that zeroes the ECN
// field or a peer that does not report ECN markings." Section 13.4.2.2:
// "If validation fails, then the endpoint MUST disable ECN."
func TestECNBleached(t *testing.T) {
	e := newECNEnv(t)
	for range 3 {
		e.send(t0, SpaceApplication)
	}
	e.ack(t, t0.Add(ms(20)), SpaceApplication, 0, 2)
	if e.h.ECNState() != ECNFailed || e.h.ECNMarking() != NotECT {
		t.Fatalf("state %v, marking %v; want failed, Not-ECT", e.h.ECNState(), e.h.ECNMarking())
	}
}

// RFC 9000, Section 13.4.2.1: "ECN validation also fails if the sum of the
// increase in ECT(0) and ECN-CE counts is less than the number of newly
// acknowledged packets that were originally sent with an ECT(0) marking."
// ... "ECN validation can fail if the received total count for either
// ECT(0) or ECT(1) exceeds the total number of packets sent with each
// corresponding ECT codepoint." Counts that decrease are inconsistent too.
func TestECNWrongCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  wire.ECNCounts // for packets 0-1
		second wire.ECNCounts // for packets 0-3
	}{
		{"too few", wire.ECNCounts{ECT0: 2}, wire.ECNCounts{ECT0: 2, CE: 1}},
		{"decrease", wire.ECNCounts{ECT0: 1, CE: 1}, wire.ECNCounts{ECT0: 4, CE: 0}},
		{"more than sent", wire.ECNCounts{ECT0: 2}, wire.ECNCounts{ECT0: 5}},
		{"ECT(1) never sent", wire.ECNCounts{ECT0: 2}, wire.ECNCounts{ECT0: 4, ECT1: 1}},
	} {
		e := newECNEnv(t)
		for range 4 {
			e.send(t0, SpaceApplication)
		}
		if err := e.h.OnAckReceived(t0.Add(ms(20)), SpaceApplication, ecnAck(tc.first, 0, 1), 3); err != nil {
			t.Fatal(err)
		}
		if e.h.ECNState() != ECNCapable {
			t.Fatalf("%s: first ACK: state %v, want capable", tc.name, e.h.ECNState())
		}
		if err := e.h.OnAckReceived(t0.Add(ms(21)), SpaceApplication, ecnAck(tc.second, 0, 3), 3); err != nil {
			t.Fatal(err)
		}
		if e.h.ECNState() != ECNFailed {
			t.Errorf("%s: state %v, want failed", tc.name, e.h.ECNState())
		}
	}
}

// RFC 9000, Section 13.4.2.1: "An endpoint MUST NOT fail ECN validation as
// a result of processing an ACK frame that does not increase the largest
// acknowledged packet number."
func TestECNReorderedAck(t *testing.T) {
	e := newECNEnv(t)
	for range 3 {
		e.send(t0, SpaceApplication)
	}
	if err := e.h.OnAckReceived(t0.Add(ms(20)), SpaceApplication, ecnAck(wire.ECNCounts{ECT0: 1}, 2, 2), 3); err != nil {
		t.Fatal(err)
	}
	// An older ACK frame, arriving late, without the counts.
	e.ack(t, t0.Add(ms(21)), SpaceApplication, 0, 1)
	if e.h.ECNState() != ECNCapable {
		t.Fatalf("state %v, want capable", e.h.ECNState())
	}
}

// RFC 9000, Appendix A.4: "An endpoint can also mark the ECN state for a
// path as "failed" if marked packets are all declared lost". A loss
// counts once the record of the lost packet expires, two PTO periods
// after it was sent.
func TestECNAllMarkedLost(t *testing.T) {
	e := newECNEnv(t)
	for range ECNTestingPackets + 4 {
		e.send(t0, SpaceApplication)
	}
	if err := e.h.OnAckReceived(t0.Add(ms(20)), SpaceApplication, ecnAck(wire.ECNCounts{}, 13, 13), 3); err != nil {
		t.Fatal(err)
	}
	if got := len(e.cc.lostPNs()); got != 11 {
		t.Fatalf("%d packets lost, want 11", got)
	}
	if e.h.ECNState() != ECNUnknown {
		t.Fatalf("state %v before the lost records expired, want unknown", e.h.ECNState())
	}
	now := t0.Add(ms(20) + 2*e.rtt.PTO(true))
	if err := e.h.OnAckReceived(now, SpaceApplication, ecnAck(wire.ECNCounts{}, 11, 13), 3); err != nil {
		t.Fatal(err)
	}
	if e.h.ECNState() != ECNFailed {
		t.Fatalf("state %v, want failed", e.h.ECNState())
	}
}

// Marked packets declared lost because of reordering and acknowledged
// late do not fail validation: "After a packet is declared lost, the
// endpoint can still maintain state for it for an amount of time to allow
// for packet reordering" (RFC 9002, Appendix A.1).
func TestECNLateAckOfLostPackets(t *testing.T) {
	e := newECNEnv(t)
	for range ECNTestingPackets + 4 {
		e.send(t0, SpaceApplication)
	}
	if err := e.h.OnAckReceived(t0.Add(ms(20)), SpaceApplication, ecnAck(wire.ECNCounts{}, 13, 13), 3); err != nil {
		t.Fatal(err)
	}
	if err := e.h.OnAckReceived(t0.Add(ms(22)), SpaceApplication, ecnAck(wire.ECNCounts{ECT0: 10}, 0, 13), 3); err != nil {
		t.Fatal(err)
	}
	// Much later, the records are gone.
	e.send(t0.Add(time.Hour), SpaceApplication)
	e.ack(t, t0.Add(time.Hour+ms(20)), SpaceApplication, 14, 14)
	if e.h.ECNState() == ECNFailed {
		t.Fatalf("state %v after late acknowledgments", e.h.ECNState())
	}
}

// RFC 9002, Section 7.1: "If a path has been validated to support Explicit
// Congestion Notification (ECN) ..., QUIC treats a Congestion Experienced
// (CE) codepoint in the IP header as a signal of congestion." Appendix
// B.7: the event uses "sent_packets[ack.largest_acked].time_sent".
func TestECNCongestionEvent(t *testing.T) {
	e := newECNEnv(t)
	e.send(t0, SpaceApplication)
	e.send(t0.Add(ms(1)), SpaceApplication)
	e.send(t0.Add(ms(2)), SpaceApplication)
	if err := e.h.OnAckReceived(t0.Add(ms(30)), SpaceApplication, ecnAck(wire.ECNCounts{ECT0: 1, CE: 1}, 0, 1), 3); err != nil {
		t.Fatal(err)
	}
	if len(e.cc.congs) != 1 {
		t.Fatalf("%d congestion events, want 1", len(e.cc.congs))
	}
	c := e.cc.congs[0]
	if !c.ECN || len(c.Lost) != 0 || !c.SentTime.Equal(t0.Add(ms(1))) || c.PersistentCongestion {
		t.Fatalf("event %+v", c)
	}
	// The same CE count again is no new signal.
	if err := e.h.OnAckReceived(t0.Add(ms(31)), SpaceApplication, ecnAck(wire.ECNCounts{ECT0: 2, CE: 1}, 0, 2), 3); err != nil {
		t.Fatal(err)
	}
	if len(e.cc.congs) != 1 {
		t.Fatalf("%d congestion events, want 1", len(e.cc.congs))
	}
	if e.h.ECNState() != ECNCapable {
		t.Fatalf("state %v", e.h.ECNState())
	}
}

// Losses and a CE increase in the same ACK frame make one congestion
// event, after OnAck.
func TestECNAndLossOneEvent(t *testing.T) {
	e := newECNEnv(t)
	for range 5 {
		e.send(t0, SpaceApplication)
	}
	if err := e.h.OnAckReceived(t0.Add(ms(30)), SpaceApplication, ecnAck(wire.ECNCounts{ECT0: 1, CE: 1}, 3, 4), 3); err != nil {
		t.Fatal(err)
	}
	if len(e.cc.congs) != 1 || e.cc.ackCalls != 1 {
		t.Fatalf("%d congestion events, %d acks", len(e.cc.congs), e.cc.ackCalls)
	}
	if c := e.cc.congs[0]; !c.ECN || len(c.Lost) != 2 {
		t.Fatalf("event %+v", c)
	}
}

func TestECNDisabled(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	if e.h.ECNState() != ECNFailed || e.h.ECNMarking() != NotECT {
		t.Fatalf("state %v, marking %v", e.h.ECNState(), e.h.ECNMarking())
	}
	e.send(t0, SpaceApplication)
	if err := e.h.OnAckReceived(t0.Add(ms(20)), SpaceApplication, ecnAck(wire.ECNCounts{CE: 1}, 0, 0), 3); err != nil {
		t.Fatal(err)
	}
	if len(e.cc.congs) != 0 {
		t.Fatal("CE counted with ECN disabled")
	}
	e.h.RestartECNValidation()
	if e.h.ECNState() != ECNTesting || e.h.ECNMarking() != ECT0 {
		t.Fatalf("after restart: state %v, marking %v", e.h.ECNState(), e.h.ECNMarking())
	}
}

// A probe timeout before any marked packet was acknowledged ends the
// testing period: the probes go unmarked, so that a path that drops
// ECT(0) packets costs one PTO rather than the ten testing packets sent
// one or two per doubling PTO. The marked packets, lost, then fail
// validation; acknowledged late, they make it capable. A PTO after a
// marked packet was acknowledged changes nothing.
func TestECNTestingEndsAtPTO(t *testing.T) {
	e := newECNEnv(t)
	e.h.SetHandshakeConfirmed(t0)
	e.send(t0, SpaceApplication)
	e.send(t0, SpaceApplication)
	e.h.OnLossDetectionTimeout(e.h.LossDetectionDeadline())
	if e.h.ECNState() != ECNUnknown || e.h.ECNMarking() != NotECT {
		t.Fatalf("after a PTO with nothing acknowledged: state %v, marking %v", e.h.ECNState(), e.h.ECNMarking())
	}
	now := e.h.LossDetectionDeadline()
	if err := e.h.OnAckReceived(now, SpaceApplication, ecnAck(wire.ECNCounts{ECT0: 2}, 0, 1), 3); err != nil {
		t.Fatal(err)
	}
	if e.h.ECNState() != ECNCapable {
		t.Fatalf("state %v after the marked packets were acknowledged, want capable", e.h.ECNState())
	}

	e = newECNEnv(t)
	e.h.SetHandshakeConfirmed(t0)
	e.send(t0, SpaceApplication)
	if err := e.h.OnAckReceived(t0.Add(ms(20)), SpaceApplication, ecnAck(wire.ECNCounts{ECT0: 1}, 0, 0), 3); err != nil {
		t.Fatal(err)
	}
	e.send(t0.Add(ms(21)), SpaceApplication)
	e.h.OnLossDetectionTimeout(e.h.LossDetectionDeadline())
	if e.h.ECNState() != ECNCapable || e.h.ECNMarking() != ECT0 {
		t.Fatalf("state %v, marking %v after a PTO once a marked packet was acknowledged", e.h.ECNState(), e.h.ECNMarking())
	}
}
