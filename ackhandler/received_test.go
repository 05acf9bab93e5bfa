package ackhandler

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// due reports whether an ACK is due at now.
func due(r *ReceivedPackets, now time.Time) bool {
	d := r.AckDeadline()
	return !d.IsZero() && !d.After(now)
}

// sendAck writes and "sends" an ACK frame and returns it.
func sendAck(t *testing.T, r *ReceivedPackets, now time.Time) *wire.AckFrame {
	t.Helper()
	f := &wire.AckFrame{}
	if !r.AppendAck(now, f, 3) {
		t.Fatal("AppendAck: nothing to acknowledge")
	}
	r.OnAckSent()
	return f
}

// RFC 9000, Section 13.2.2: "A receiver SHOULD send an ACK frame after
// receiving at least two ack-eliciting packets."
func TestAckEverySecondAckElicitingPacket(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	now := t0
	for pn := wire.PacketNumber(0); pn < 10; pn += 2 {
		r.OnPacket(now, pn, true, NotECT)
		if due(r, now) {
			t.Fatalf("ACK due after one packet (%d)", pn)
		}
		r.OnPacket(now, pn+1, true, NotECT)
		if !due(r, now) {
			t.Fatalf("ACK not due after two packets (%d)", pn+1)
		}
		sendAck(t, r, now)
		if !r.AckDeadline().IsZero() || r.AckPending() {
			t.Fatal("ACK still due after OnAckSent")
		}
	}
}

// RFC 9000, Section 13.2.1: "ack-eliciting packets MUST be acknowledged at
// least once within the maximum delay an endpoint communicated using the
// max_ack_delay transport parameter". The deadline runs from the first
// unacknowledged ack-eliciting packet.
func TestDelayedAckDeadline(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	r.SetMaxAckDelay(ms(20))
	r.OnPacket(t0, 0, false, NotECT)
	if !r.AckDeadline().IsZero() {
		t.Fatal("deadline for a non-ack-eliciting packet")
	}
	if !r.AckPending() {
		t.Fatal("a non-ack-eliciting packet can ride along")
	}
	r.OnPacket(t0.Add(ms(5)), 1, true, NotECT)
	if got, want := r.AckDeadline(), t0.Add(ms(25)); !got.Equal(want) {
		t.Fatalf("deadline %v, want %v", got.Sub(t0), want.Sub(t0))
	}
	f := sendAck(t, r, t0.Add(ms(25)))
	// RFC 9000, Section 13.2.5: the ACK Delay is the time since the
	// largest packet arrived.
	if got := wire.AckDelayToDuration(f.Delay, 3); got != ms(20) {
		t.Fatalf("ACK delay %v, want 20ms", got)
	}
}

// RFC 9000, Section 13.2.1: "An endpoint MUST acknowledge all
// ack-eliciting Initial and Handshake packets immediately".
func TestAckImmediatelyInHandshakeSpaces(t *testing.T) {
	for _, sp := range []Space{SpaceInitial, SpaceHandshake} {
		r := NewReceivedPackets(sp)
		r.OnPacket(t0, 0, true, NotECT)
		if !due(r, t0) {
			t.Errorf("%v: ACK not due immediately", sp)
		}
	}
}

// RFC 9000, Section 13.2.1: "an endpoint SHOULD generate and send an ACK
// frame without delay when it receives an ack-eliciting packet either:
// when the received packet has a packet number less than another
// ack-eliciting packet that has been received, or when the packet has a
// packet number larger than the highest-numbered ack-eliciting packet that
// has been received and there are missing packets between that packet and
// this packet."
func TestAckImmediatelyOnReordering(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	r.OnPacket(t0, 0, true, NotECT)
	r.OnPacket(t0, 1, true, NotECT)
	sendAck(t, r, t0)
	r.OnPacket(t0, 3, true, NotECT) // gap: 2 is missing
	if !due(r, t0) {
		t.Fatal("no immediate ACK for a gap")
	}
	sendAck(t, r, t0)
	r.OnPacket(t0, 2, true, NotECT) // less than 3
	if !due(r, t0) {
		t.Fatal("no immediate ACK for an out-of-order packet")
	}
	sendAck(t, r, t0)
	// Non-ack-eliciting packets fill the space between: no gap.
	r.OnPacket(t0, 4, false, NotECT)
	r.OnPacket(t0, 5, true, NotECT)
	if due(r, t0) {
		t.Fatal("immediate ACK without a gap")
	}
	// A gap filled only by a non-ack-eliciting packet elicits nothing:
	// "An endpoint MUST NOT send a non-ack-eliciting packet in response
	// to a non-ack-eliciting packet".
	r.OnAckSent()
	r.OnPacket(t0, 9, false, NotECT)
	if !r.AckDeadline().IsZero() {
		t.Fatal("deadline for a non-ack-eliciting packet after a gap")
	}
}

// RFC 9000, Section 13.2.1: "packets marked with the ECN Congestion
// Experienced (CE) codepoint in the IP header SHOULD be acknowledged
// immediately".
func TestAckImmediatelyOnCE(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	r.OnPacket(t0, 0, true, ECT0)
	if due(r, t0) {
		t.Fatal("ACK due for an ECT(0) packet")
	}
	r.OnAckSent()
	r.OnPacket(t0, 1, true, CE)
	if !due(r, t0) {
		t.Fatal("no immediate ACK for CE")
	}
	f := sendAck(t, r, t0)
	if !f.HasECN || f.ECN != (wire.ECNCounts{ECT0: 1, CE: 1}) {
		t.Fatalf("ECN counts %+v (HasECN %v)", f.ECN, f.HasECN)
	}
	if r.ECNCounts() != f.ECN {
		t.Fatal("ECNCounts")
	}
}

// draft-ietf-quic-ack-frequency, Section 6.3: "If the Ack-Eliciting
// Threshold is larger than 1, an endpoint SHOULD send an immediate
// acknowledgement when a packet marked with the ECN Congestion Experienced
// (CE) codepoint in the IP header is received and the previously received
// packet was not marked CE."
func TestAckCETransitionWithHighThreshold(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	r.SetAckFrequency(10, ms(25), 1)
	r.OnPacket(t0, 0, true, ECT0)
	r.OnPacket(t0, 1, true, CE)
	if !due(r, t0) {
		t.Fatal("no immediate ACK on the transition to CE")
	}
	sendAck(t, r, t0)
	r.OnPacket(t0, 2, true, CE)
	if due(r, t0) {
		t.Fatal("immediate ACK for a second consecutive CE packet")
	}
}

// draft-ietf-quic-ack-frequency, Section 5: "An endpoint SHOULD send a
// packet containing an ACK frame immediately upon receiving an
// IMMEDIATE_ACK frame."
func TestImmediateAckFrame(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	now := t0.Add(ms(3))
	r.OnImmediateAck(now)
	r.OnPacket(now, 0, true, NotECT)
	if got := r.AckDeadline(); !got.Equal(now) {
		t.Fatalf("deadline %v, want now", got)
	}
}

// draft-ietf-quic-ack-frequency, Section 4: "A receiving endpoint SHOULD
// send at least one ACK frame after receiving more than this many
// ack-eliciting packets. A value of 0 results in a receiver immediately
// acknowledging every ack-eliciting packet."
func TestAckFrequencyThreshold(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	r.SetAckFrequency(3, ms(100), 1)
	for pn := range wire.PacketNumber(3) {
		r.OnPacket(t0, pn, true, NotECT)
		if due(r, t0) {
			t.Fatalf("ACK due after %d packets with threshold 3", pn+1)
		}
	}
	if got := r.AckDeadline(); !got.Equal(t0.Add(ms(100))) {
		t.Fatalf("deadline %v, want the requested max ack delay", got.Sub(t0))
	}
	r.OnPacket(t0, 3, true, NotECT)
	if !due(r, t0) {
		t.Fatal("ACK not due after 4 packets with threshold 3")
	}
	r.OnAckSent()
	r.SetAckFrequency(0, ms(100), 1)
	r.OnPacket(t0, 4, true, NotECT)
	if !due(r, t0) {
		t.Fatal("ACK not due with threshold 0")
	}
}

// draft-ietf-quic-ack-frequency, Section 6.2: "If the most recent
// ACK_FREQUENCY frame received from the peer has a Reordering Threshold
// value of 0, the endpoint SHOULD NOT send an immediate acknowledgment in
// response to packets received out of order".
func TestReorderThresholdZero(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	r.SetAckFrequency(10, ms(25), 0)
	r.OnPacket(t0, 5, true, NotECT)
	r.OnPacket(t0, 1, true, NotECT)
	r.OnPacket(t0, 9, true, NotECT)
	if due(r, t0) {
		t.Fatal("immediate ACK for reordering with threshold 0")
	}
}

// draft-ietf-quic-ack-frequency, Section 6.2.1, Tables 1 and 2: "If the
// reordering theshold is 3 and acknowledgements are only sent due to
// reordering, the sequence in Table 1 would occur".
func TestReorderThresholdDraftTables(t *testing.T) {
	for _, tc := range []struct {
		threshold uint64
		received  []wire.PacketNumber
		send      []bool
	}{
		{3, []wire.PacketNumber{0, 1, 3, 4, 5, 8, 9, 10}, []bool{false, false, false, false, true, false, true, true}},
		{5, []wire.PacketNumber{0, 1, 3, 5, 6, 7, 8, 9}, []bool{false, false, false, false, false, true, false, true}},
	} {
		r := NewReceivedPackets(SpaceApplication)
		r.SetAckFrequency(100, time.Second, tc.threshold)
		for i, pn := range tc.received {
			r.OnPacket(t0, pn, true, NotECT)
			if got := due(r, t0); got != tc.send[i] {
				t.Fatalf("threshold %d, packet %d: send = %v, want %v", tc.threshold, pn, got, tc.send[i])
			}
			if tc.send[i] {
				sendAck(t, r, t0)
			}
		}
	}
}

// The second condition of draft-ietf-quic-ack-frequency, Section 6.2:
// "the received packet number is less than or equal to Largest Acked -
// Reordering Threshold."
func TestReorderThresholdLatePacket(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	r.SetAckFrequency(100, time.Second, 3)
	for _, pn := range []wire.PacketNumber{0, 1, 2, 4, 5, 6} {
		r.OnPacket(t0, pn, true, NotECT)
	}
	sendAck(t, r, t0) // Largest Acked 6
	r.OnPacket(t0, 3, true, NotECT)
	if !due(r, t0) {
		t.Fatal("no immediate ACK for a packet at or below Largest Acked - threshold")
	}
}

// RFC 9000, Section 13.2.3: "A receiver limits the number of ACK Ranges
// (Section 19.3.1) it remembers and sends in ACK frames" ... "A receiver
// MUST retain an ACK Range unless it can ensure that it will not
// subsequently accept packets with numbers in that range."
func TestRangeBound(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	r.SetMaxRanges(4)
	for pn := wire.PacketNumber(0); pn < 10; pn += 2 { // 5 ranges
		r.OnPacket(t0, pn, false, NotECT)
	}
	f := sendAck(t, r, t0)
	if len(f.Ranges) != 4 || f.Ranges[0].Largest != 8 || f.Ranges[3].Smallest != 2 {
		t.Fatalf("ranges %+v, want 8, 6, 4, 2", f.Ranges)
	}
	// The dropped range, and the gap below the lowest range kept, are
	// duplicates now; gaps above it are not.
	if !r.IsDuplicate(0) || !r.IsDuplicate(1) || r.IsDuplicate(3) {
		t.Fatalf("IsDuplicate(0, 1, 3) = %v, %v, %v; want true, true, false", r.IsDuplicate(0), r.IsDuplicate(1), r.IsDuplicate(3))
	}
	if !r.OnPacket(t0, 1, true, NotECT) {
		t.Fatal("packet below the window accepted")
	}
	if r.LargestReceived() != 8 {
		t.Fatalf("LargestReceived = %d", r.LargestReceived())
	}
	// Lowering the bound drops more.
	r.SetMaxRanges(2)
	if !r.IsDuplicate(4) || r.IsDuplicate(7) {
		t.Fatal("SetMaxRanges(2)")
	}
}

// RFC 9000, Section 13.2.4: "When a packet containing an ACK frame is
// acknowledged, the receiver can stop acknowledging packets less than or
// equal to the Largest Acknowledged field in the sent ACK frame."
func TestIgnoreBelow(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	for _, pn := range []wire.PacketNumber{0, 1, 2, 5, 6, 9} {
		r.OnPacket(t0, pn, true, NotECT)
	}
	r.IgnoreBelow(6)
	f := sendAck(t, r, t0)
	if len(f.Ranges) != 2 || f.Ranges[0] != (wire.AckRange{Smallest: 9, Largest: 9}) || f.Ranges[1] != (wire.AckRange{Smallest: 6, Largest: 6}) {
		t.Fatalf("ranges %+v, want [9-9 6-6]", f.Ranges)
	}
	if !r.IsDuplicate(3) || !r.IsDuplicate(5) || r.IsDuplicate(7) {
		t.Fatal("IsDuplicate below/above the ignore point")
	}
	r.IgnoreBelow(2) // never lowers
	if !r.IsDuplicate(3) {
		t.Fatal("IgnoreBelow lowered the window")
	}
	r.IgnoreBelow(10)
	if r.AppendAck(t0, f, 3) || r.AckPending() {
		t.Fatal("ACK with every range ignored")
	}
	if r.LargestReceived() != 9 {
		t.Fatal("largest received forgotten")
	}
}

// RFC 9000, Section 13.4.1: "duplicate QUIC packets are not processed and
// do not increase ECN counts".
func TestDuplicatePackets(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	if r.OnPacket(t0, 4, true, ECT0) {
		t.Fatal("first packet reported duplicate")
	}
	if !r.OnPacket(t0, 4, true, ECT0) {
		t.Fatal("duplicate not detected")
	}
	if r.ECNCounts().ECT0 != 1 {
		t.Fatalf("ECT(0) count %d, want 1", r.ECNCounts().ECT0)
	}
	if !r.OnPacket(t0, -1, true, NotECT) {
		t.Fatal("negative packet number accepted")
	}
}

// AppendAck reports the ranges in descending order, merged, reusing the
// frame's slice.
func TestAppendAckRanges(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	for _, pn := range []wire.PacketNumber{10, 2, 3, 7, 5, 6, 0, 12, 4} {
		r.OnPacket(t0, pn, true, NotECT)
	}
	f := &wire.AckFrame{Ranges: make([]wire.AckRange, 0, 8)}
	r.AppendAck(t0.Add(ms(1)), f, 3)
	want := []wire.AckRange{{Smallest: 12, Largest: 12}, {Smallest: 10, Largest: 10}, {Smallest: 2, Largest: 7}, {Smallest: 0, Largest: 0}}
	if len(f.Ranges) != len(want) {
		t.Fatalf("ranges %+v, want %+v", f.Ranges, want)
	}
	for i := range want {
		if f.Ranges[i] != want[i] {
			t.Fatalf("ranges %+v, want %+v", f.Ranges, want)
		}
	}
	if f.HasECN {
		t.Fatal("ECN counts without ECN marks")
	}
	// The frame encodes: the ranges are valid for wire.
	if b := f.Append(nil); len(b) != f.EncodedLen() {
		t.Fatal("encoding")
	}
}

// A random arrival order gives the same set as a simple model.
func TestReceivedRangesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 200 {
		r := NewReceivedPackets(SpaceApplication)
		r.SetMaxRanges(1000)
		seen := map[wire.PacketNumber]bool{}
		for range 100 {
			pn := wire.PacketNumber(rng.IntN(150))
			dup := r.OnPacket(t0, pn, rng.IntN(2) == 0, NotECT)
			if dup != seen[pn] {
				t.Fatalf("iter %d: OnPacket(%d) duplicate = %v, want %v", iter, pn, dup, seen[pn])
			}
			seen[pn] = true
		}
		f := &wire.AckFrame{}
		r.AppendAck(t0, f, 3)
		for pn := wire.PacketNumber(0); pn < 150; pn++ {
			if f.AcksPacket(pn) != seen[pn] {
				t.Fatalf("iter %d: packet %d acked %v, want %v (ranges %+v)", iter, pn, f.AcksPacket(pn), seen[pn], f.Ranges)
			}
		}
		f.Append(nil) // panics on invalid ranges
	}
}

// draft-ietf-quic-ack-frequency, Section 4: "A receiving endpoint MUST
// ignore a received ACK_FREQUENCY frame unless the Sequence Number value
// in the frame is greater than the largest processed value." A frame
// reordered behind a newer one, or repeated, changes nothing.
func TestAckFrequencySequenceNumber(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	if !r.OnAckFrequency(5, 10, ms(50), 3) {
		t.Fatal("the first ACK_FREQUENCY frame was ignored")
	}
	for _, seq := range []uint64{3, 5} {
		if r.OnAckFrequency(seq, 0, ms(1), 0) {
			t.Errorf("ACK_FREQUENCY with sequence number %d applied after 5", seq)
		}
	}
	if r.threshold != 10 || r.maxAckDelay != ms(50) || r.reorderThreshold != 3 {
		t.Fatalf("policy %d %v %d, want that of frame 5", r.threshold, r.maxAckDelay, r.reorderThreshold)
	}
	if !r.OnAckFrequency(6, 2, ms(20), 1) || r.threshold != 2 || r.maxAckDelay != ms(20) || r.reorderThreshold != 1 {
		t.Fatalf("frame 6 not applied: %d %v %d", r.threshold, r.maxAckDelay, r.reorderThreshold)
	}
	// Sequence number 0 is a valid first value.
	r = NewReceivedPackets(SpaceApplication)
	if !r.OnAckFrequency(0, 4, ms(30), 1) || r.threshold != 4 {
		t.Fatal("a first frame with sequence number 0 was ignored")
	}
}
