package ackhandler

import (
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// RFC 9002, Section 5.1: "latest_rtt = ack_time -
// send_time_of_largest_acked".
func TestRTTSample(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceApplication)
	e.send(t0.Add(ms(10)), SpaceApplication)
	e.ack(t, t0.Add(ms(110)), SpaceApplication, 0, 1)
	if got := e.rtt.Latest(); got != ms(100) {
		t.Fatalf("latest_rtt = %v, want 100ms (from the largest acknowledged)", got)
	}
	if got := e.rtt.Min(); got != ms(100) {
		t.Fatalf("min_rtt = %v, want 100ms", got)
	}
}

// RFC 9002, Section 5.1: "To avoid generating multiple RTT samples for a
// single packet, an ACK frame SHOULD NOT be used to update RTT estimates
// if it does not newly acknowledge the largest acknowledged packet."
func TestRTTNoSampleWithoutNewLargest(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceApplication)
	e.send(t0, SpaceApplication)
	e.ack(t, t0.Add(ms(50)), SpaceApplication, 1, 1)
	// Packet 0 is newly acknowledged, but the largest (1) is not.
	e.ack(t, t0.Add(ms(500)), SpaceApplication, 0, 1)
	if got := e.rtt.Latest(); got != ms(50) {
		t.Fatalf("latest_rtt = %v, want 50ms: no sample from the second ACK", got)
	}
	if len(e.cc.acks) != 2 || e.cc.acks[1].Acked[0].PacketNumber != 0 {
		t.Fatalf("packet 0 must still be reported acknowledged: %+v", e.cc.acks)
	}
}

// RFC 9002, Section 5.1: "An RTT sample MUST NOT be generated on receiving
// an ACK frame that does not newly acknowledge at least one ack-eliciting
// packet."
func TestRTTNoSampleForNonAckEliciting(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.sendP(t0, SpaceApplication, false, 50) // an ACK-only packet
	e.ack(t, t0.Add(ms(80)), SpaceApplication, 0, 0)
	if e.rtt.HasSample() {
		t.Fatalf("RTT sample from an ACK of a non-ack-eliciting packet: %v", e.rtt.Latest())
	}
	if e.cc.ackCalls != 0 {
		t.Fatalf("OnAck called for a packet not in flight")
	}
}

// RFC 9002, Section 5.3: the ACK delay adjusts samples after the first;
// "an endpoint ... MAY ignore the acknowledgment delay for Initial
// packets".
func TestRTTAckDelay(t *testing.T) {
	for _, tc := range []struct {
		space    Space
		smoothed time.Duration
	}{
		// 7/8*100 + 1/8*(140-40) = 100
		{SpaceApplication, ms(100)},
		// 7/8*100 + 1/8*140 = 105
		{SpaceInitial, ms(105)},
	} {
		e := newEnv(t, wire.RoleServer)
		now := t0
		pn := e.send(now, tc.space)
		now = now.Add(ms(100))
		e.ack(t, now, tc.space, pn, pn)
		pn = e.send(now, tc.space)
		now = now.Add(ms(140))
		f := ackFrame(0, pn)
		f.Delay = wire.AckDelayFromDuration(ms(40), 3)
		if err := e.h.OnAckReceived(now, tc.space, f, 3); err != nil {
			t.Fatal(err)
		}
		if got := e.rtt.Smoothed(); got != tc.smoothed {
			t.Errorf("%v: smoothed_rtt = %v, want %v", tc.space, got, tc.smoothed)
		}
	}
}

// RFC 9000, Section 13.1: "An endpoint SHOULD treat receipt of an
// acknowledgment for a packet it did not send as a connection error of
// type PROTOCOL_VIOLATION, if it is able to detect the condition."
func TestAckForUnsentPacket(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	if err := e.h.OnAckReceived(t0, SpaceHandshake, ackFrame(0, 0), 3); !isProtocolViolation(err) {
		t.Fatalf("ACK before any packet was sent: err = %v, want PROTOCOL_VIOLATION", err)
	}
	e.send(t0, SpaceApplication)
	e.send(t0, SpaceApplication)
	if err := e.h.OnAckReceived(t0, SpaceApplication, ackFrame(0, 2), 3); !isProtocolViolation(err) {
		t.Fatalf("ACK beyond the largest sent: err = %v, want PROTOCOL_VIOLATION", err)
	}
	// A gap the connection left in the packet numbers counts as unsent.
	e.h.OnPacketSent(t0, SpaceApplication, SentPacket{PacketNumber: 5, Size: 100, AckEliciting: true})
	if err := e.h.OnAckReceived(t0, SpaceApplication, ackFrame(3, 5), 3); !isProtocolViolation(err) {
		t.Fatalf("ACK of a packet number in a gap: err = %v, want PROTOCOL_VIOLATION", err)
	}
}

// RFC 9000, Section 21.4: "An endpoint MAY skip packet numbers when
// sending packets to detect this behavior. An endpoint can then
// immediately close the connection with a connection error of type
// PROTOCOL_VIOLATION".
func TestOptimisticAckDefence(t *testing.T) {
	e := newEnv(t, wire.RoleServer, func(c *Config) {
		c.DisablePacketNumberSkipping = false
		c.Seed = 42
	})
	var skipped []wire.PacketNumber
	prev := wire.InvalidPacketNumber
	now := t0
	for range 2000 {
		pn := e.send(now, SpaceApplication)
		if pn != prev+1 {
			if pn != prev+2 {
				t.Fatalf("packet number jumped from %d to %d", prev, pn)
			}
			skipped = append(skipped, prev+1)
		}
		prev = pn
	}
	// "every 256-512 packets at random"
	if len(skipped) < 3 || len(skipped) > 8 {
		t.Fatalf("skipped %d packet numbers in 2000 packets: %v", len(skipped), skipped)
	}
	for i := 1; i < len(skipped); i++ {
		if d := skipped[i] - skipped[i-1]; d < skipMin || d > skipMax+1 {
			t.Fatalf("skip distance %d outside [%d, %d]", d, skipMin, skipMax)
		}
	}
	s := skipped[0]
	// An honest ACK around the skipped number is fine.
	e.ack(t, now, SpaceApplication, s+1, s+10, 0, s-1)
	// One that covers it is a PROTOCOL_VIOLATION.
	err := e.h.OnAckReceived(now, SpaceApplication, ackFrame(0, s+20), 3)
	if !isProtocolViolation(err) {
		t.Fatalf("ACK of skipped packet %d: err = %v, want PROTOCOL_VIOLATION", s, err)
	}
}

// The skipped numbers are remembered after the packets around them left
// the sent-packet ring, and the sequence is the same for the same seed.
func TestSkippedPacketNumbersRememberedAndDeterministic(t *testing.T) {
	run := func() ([]wire.PacketNumber, error) {
		e := newEnv(t, wire.RoleServer, func(c *Config) {
			c.DisablePacketNumberSkipping = false
			c.Seed = 7
		})
		var pns []wire.PacketNumber
		for range 600 {
			pns = append(pns, e.send(t0, SpaceApplication))
		}
		last := pns[len(pns)-1]
		// Acknowledge everything sent, honestly, range by range.
		f := &wire.AckFrame{}
		hi := last
		for i := len(pns) - 1; i > 0; i-- {
			if pns[i-1] != pns[i]-1 {
				f.Ranges = append(f.Ranges, wire.AckRange{Smallest: pns[i], Largest: hi})
				hi = pns[i-1]
			}
		}
		f.Ranges = append(f.Ranges, wire.AckRange{Smallest: 0, Largest: hi})
		if err := e.h.OnAckReceived(t0.Add(ms(10)), SpaceApplication, f, 3); err != nil {
			t.Fatal(err)
		}
		if e.h.spaces[SpaceApplication].packets.n != 0 {
			t.Fatalf("ring not empty after everything was acknowledged")
		}
		return pns, e.h.OnAckReceived(t0.Add(ms(20)), SpaceApplication, ackFrame(0, last), 3)
	}
	a, err := run()
	if !isProtocolViolation(err) {
		t.Fatalf("late ACK covering a skipped number: err = %v, want PROTOCOL_VIOLATION", err)
	}
	b, _ := run()
	if len(a) != len(b) {
		t.Fatal("different lengths")
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("packet numbers differ at %d with the same seed: %d vs %d", i, a[i], b[i])
		}
	}
}

// RFC 9000, Section 17.1: "the sender MUST use a packet number size able
// to represent more than twice as large a range as the difference between
// the largest acknowledged packet number and the packet number being
// sent."
func TestNextPacketNumberLength(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	for range 200 {
		e.send(t0, SpaceApplication)
	}
	if pn, n := e.h.NextPacketNumber(SpaceApplication); pn != 200 || n != 2 {
		t.Fatalf("NextPacketNumber = %d, %d; want 200, 2 (nothing acknowledged)", pn, n)
	}
	e.ack(t, t0.Add(ms(10)), SpaceApplication, 190, 199)
	if pn, n := e.h.NextPacketNumber(SpaceApplication); pn != 200 || n != 1 {
		t.Fatalf("NextPacketNumber = %d, %d; want 200, 1", pn, n)
	}
	if e.h.LargestAcked(SpaceApplication) != 199 {
		t.Fatalf("LargestAcked = %d", e.h.LargestAcked(SpaceApplication))
	}
}

// The FrameHandler hears about each frame of an acknowledged or lost
// packet, in order, and frames added for a packet that is not sent are
// discarded.
func TestFrameRecords(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	h := e.h
	stream := func(off uint64) FrameRecord {
		return FrameRecord{Type: wire.FrameTypeStream, StreamID: 4, Offset: off, Length: 100}
	}
	// Packet 0: two frames; packet 1: one; then an abandoned packet.
	h.AddFrame(SpaceApplication, stream(0))
	h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeMaxData})
	e.send(t0, SpaceApplication)
	h.AddFrame(SpaceApplication, stream(100))
	e.send(t0, SpaceApplication)
	h.AddFrame(SpaceApplication, stream(999))
	h.DiscardFrames(SpaceApplication)
	for range 3 {
		h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypePing})
		e.send(t0, SpaceApplication) // 2, 3, 4
	}
	// Acknowledging 1 and 4 declares 0 lost (4 >= 0 + kPacketThreshold).
	e.ack(t, t0.Add(ms(10)), SpaceApplication, 4, 4, 1, 1)
	if len(e.fh.acked) != 2 || e.fh.acked[0] != stream(100) || e.fh.acked[1].Type != wire.FrameTypePing {
		t.Fatalf("acked frames = %+v", e.fh.acked)
	}
	if len(e.fh.lost) != 2 || e.fh.lost[0] != stream(0) || e.fh.lost[1].Type != wire.FrameTypeMaxData {
		t.Fatalf("lost frames = %+v", e.fh.lost)
	}
	if e.fh.ackedSpaces[0] != SpaceApplication {
		t.Fatalf("space = %v", e.fh.ackedSpaces[0])
	}
}

// The ring buffers grow with the packets in flight, keep the records
// intact across growth and wrap-around, and give memory back to reuse.
func TestRingsGrowAndWrap(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.fh.record = false
	h := e.h
	now := t0
	var next wire.PacketNumber
	for round := range 20 {
		n := 1 + round*37%150
		first := next
		for range n {
			h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeStream, Offset: uint64(next)})
			h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeStream, Offset: uint64(next) + 1})
			next = e.send(now, SpaceApplication) + 1
		}
		before := e.fh.ackedN
		e.ack(t, now, SpaceApplication, first, next-1)
		if got := e.fh.ackedN - before; got != 2*n {
			t.Fatalf("round %d: %d frames acknowledged, want %d", round, got, 2*n)
		}
		if e.h.BytesInFlight() != 0 {
			t.Fatalf("bytes in flight %d", e.h.BytesInFlight())
		}
	}
	s := &h.spaces[SpaceApplication]
	if len(s.packets.buf) > 256 || len(s.frames.buf) > 512 {
		t.Fatalf("rings grew beyond the working size: %d packets, %d frames", len(s.packets.buf), len(s.frames.buf))
	}
}

// The controller hears about sent packets with bytes in flight, and about
// acknowledged packets in ascending order with the bytes in flight before
// and after (congestion.Controller contract).
func TestControllerAckEvent(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	for i := range 6 {
		e.sendP(t0, SpaceApplication, true, 1000+i)
	}
	if e.cc.sentCalls != 6 || e.cc.lastInFight != 6*1000+15 {
		t.Fatalf("OnPacketSent calls %d, in flight %d", e.cc.sentCalls, e.cc.lastInFight)
	}
	e.ack(t, t0.Add(ms(30)), SpaceApplication, 4, 5, 1, 2)
	ev := e.cc.acks[0]
	var pns []int64
	for _, p := range ev.Acked {
		pns = append(pns, p.PacketNumber)
	}
	if len(pns) != 4 || pns[0] != 1 || pns[1] != 2 || pns[2] != 4 || pns[3] != 5 {
		t.Fatalf("acked = %v, want [1 2 4 5]", pns)
	}
	// The losses are reported first (RFC 9002, Appendix A.7), with the
	// acknowledged packets still in flight; then the acknowledgments.
	if ev.AckedBytes != 1001+1002+1004+1005 || ev.PriorInFlight != 6015-1000 || ev.BytesInFlight != 6015-1000-ev.AckedBytes {
		t.Fatalf("ack event bytes: %+v", ev)
	}
	if e.cc.congSeq[0] > e.cc.ackSeq[0] {
		t.Fatal("OnAck was called before OnCongestionEvent")
	}
	if ev.RTT != e.rtt {
		t.Fatal("AckEvent.RTT is not the connection's estimator")
	}
	// Packet 0 is lost: 5 >= 0 + kPacketThreshold; packet 3 is not.
	if got := e.cc.lostPNs(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("lost = %v, want [0]", got)
	}
	c := e.cc.lastCong()
	if c.PriorInFlight != 6015 || c.BytesInFlight != 6015-1000 || c.LostBytes != 1000 {
		t.Fatalf("congestion event bytes: %+v", c)
	}
	if e.h.BytesInFlight() != 1003 {
		t.Fatalf("BytesInFlight = %d, want 1003 (packet 3)", e.h.BytesInFlight())
	}
}

// A duplicate or reordered ACK frame changes nothing.
func TestDuplicateAck(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceApplication)
	e.send(t0, SpaceApplication)
	e.ack(t, t0.Add(ms(10)), SpaceApplication, 0, 1)
	e.ack(t, t0.Add(ms(20)), SpaceApplication, 0, 1)
	if e.cc.ackCalls != 1 || e.rtt.Latest() != ms(10) {
		t.Fatalf("duplicate ACK processed: %d OnAck calls, latest %v", e.cc.ackCalls, e.rtt.Latest())
	}
}

func TestNewPanicsWithoutRequiredFields(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	New(Config{RTT: congestion.NewRTTStats()})
}

func TestOnPacketSentPanicsOnNonIncreasingPacketNumber(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.send(t0, SpaceApplication)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	e.h.OnPacketSent(t0, SpaceApplication, SentPacket{PacketNumber: 0, Size: 1})
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{SpaceInitial.String(), "initial"},
		{SpaceHandshake.String(), "handshake"},
		{SpaceApplication.String(), "application_data"},
		{Space(9).String(), "invalid"},
		{NotECT.String(), "Not-ECT"},
		{ECT0.String(), "ECT(0)"},
		{ECT1.String(), "ECT(1)"},
		{CE.String(), "CE"},
		{ECNMark(7).String(), "invalid"},
		{ECNTesting.String(), "testing"},
		{ECNUnknown.String(), "unknown"},
		{ECNCapable.String(), "capable"},
		{ECNFailed.String(), "failed"},
		{ECNState(9).String(), "invalid"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// Records of ACK-only packets, which the peer may never acknowledge, do
// not pile up: they expire after three PTO periods.
func TestNotInFlightRecordsExpire(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	e.fh.record = false
	now := t0
	for range 10000 {
		e.h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeAck})
		e.sendP(now, SpaceApplication, false, 40)
		now = now.Add(ms(10))
	}
	s := &e.h.spaces[SpaceApplication]
	// 3 * PTO = 3 * (333 + 666) ms: about 300 packets 10ms apart.
	if s.packets.n > 310 || len(s.packets.buf) > 512 || len(s.frames.buf) > 512 {
		t.Fatalf("%d records kept (ring %d, frames %d)", s.packets.n, len(s.packets.buf), len(s.frames.buf))
	}
	if e.fh.lostN < 9000 || len(e.cc.congs) != 0 || e.h.BytesInFlight() != 0 {
		t.Fatalf("expired frames %d, congestion events %d", e.fh.lostN, len(e.cc.congs))
	}
	// A late ACK for an expired packet is harmless.
	e.ack(t, now, SpaceApplication, 0, 9999)
}

// ReleaseIdle frees the rings of an idle handler, expiring the records of
// old ACK-only packets first, and the handler works on as before.
func TestReleaseIdle(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	now := e.establishRTT(t, t0, ms(10))
	pn := e.send(now, SpaceApplication)
	e.h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeAck})
	e.sendP(now, SpaceApplication, false, 40) // ACK-only, never acknowledged
	now = now.Add(ms(10))
	e.ack(t, now, SpaceApplication, pn, pn)

	s := &e.h.spaces[SpaceApplication]
	e.h.ReleaseIdle(now) // the ACK-only packet is younger than 3 PTO
	if s.packets.buf == nil || s.packets.n != 1 {
		t.Fatalf("released a ring with a record (n %d)", s.packets.n)
	}
	lost := e.fh.lostN
	e.h.ReleaseIdle(now.Add(time.Second))
	if s.packets.buf != nil || s.frames.buf != nil || s.packets.n != 0 {
		t.Fatalf("rings kept: %d packet slots, %d frame slots, %d records", len(s.packets.buf), len(s.frames.buf), s.packets.n)
	}
	if e.fh.lostN != lost+1 {
		t.Fatalf("the expired ACK-only packet's frame was reported lost %d times", e.fh.lostN-lost)
	}

	// Sending and acknowledging after the release.
	now = now.Add(time.Second)
	a := e.send(now, SpaceApplication)
	e.h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypePing})
	b := e.send(now, SpaceApplication)
	if b != a+1 || e.h.BytesInFlight() != 2400 {
		t.Fatalf("after release: packets %d, %d, %d bytes in flight", a, b, e.h.BytesInFlight())
	}
	acked := e.fh.ackedN
	e.ack(t, now.Add(ms(10)), SpaceApplication, a, b)
	if e.h.BytesInFlight() != 0 || e.fh.ackedN != acked+1 {
		t.Fatalf("after release: %d bytes in flight, %d frames acknowledged", e.h.BytesInFlight(), e.fh.ackedN-acked)
	}
}
