package ackhandler

import (
	"slices"
	"testing"

	"github.com/quicstack/quic/wire"
)

// An ACK frame with more ranges than the parser keeps (RFC 9000 sets no
// limit, Section 19.3): the highest wire.DefaultMaxAckRanges are processed
// as if the peer had sent only those, "older ranges (those with the
// smallest packet numbers) are omitted" (Section 13.2.3). Every packet of
// a processed range is acknowledged once, the RTT sample comes from the
// largest, and loss detection declares lost exactly the packets it would
// for the truncated frame (RFC 9002, Section 6.1.1: kPacketThreshold 3);
// a later ACK of a packet in an ignored range is taken as a late
// acknowledgment.
func TestAckFrameBeyondParserBound(t *testing.T) {
	e := newEnv(t, wire.RoleServer)
	const n = 1000
	for range n {
		e.send(t0, SpaceApplication)
	}
	// Every even packet number acknowledged: 500 ranges, encoded and
	// parsed as the connection does.
	src := &wire.AckFrame{}
	for pn := wire.PacketNumber(n - 2); pn >= 0; pn -= 2 {
		src.Ranges = append(src.Ranges, wire.AckRange{Smallest: pn, Largest: pn})
	}
	var f wire.AckFrame
	if _, err := wire.ParseAckFrame(src.Append(nil), &f, 0); err != nil {
		t.Fatal(err)
	}
	if len(f.Ranges) != wire.DefaultMaxAckRanges || f.IgnoredRanges != 500-wire.DefaultMaxAckRanges {
		t.Fatalf("parsed %d ranges, %d ignored", len(f.Ranges), f.IgnoredRanges)
	}
	lowest := f.Ranges[len(f.Ranges)-1].Smallest // 488
	now := t0.Add(ms(40))
	if err := e.h.OnAckReceived(now, SpaceApplication, &f, 3); err != nil {
		t.Fatalf("OnAckReceived: %v", err)
	}
	var acked, wantAcked []int64
	for _, ev := range e.cc.acks {
		for _, p := range ev.Acked {
			acked = append(acked, p.PacketNumber)
		}
	}
	for pn := int64(lowest); pn < n; pn += 2 {
		wantAcked = append(wantAcked, pn)
	}
	if !slices.Equal(acked, wantAcked) {
		t.Fatalf("acknowledged %d packets %v...; want the %d of the processed ranges", len(acked), acked[:min(4, len(acked))], len(wantAcked))
	}
	if e.h.LargestAcked(SpaceApplication) != n-2 || e.rtt.Latest() != ms(40) {
		t.Fatalf("largest acked %d, latest RTT %v", e.h.LargestAcked(SpaceApplication), e.rtt.Latest())
	}
	// Lost: everything not acknowledged at least 3 below the largest
	// acknowledged, 998.
	var wantLost []int64
	for pn := int64(0); pn <= n-2-3; pn++ {
		if pn < int64(lowest) || pn%2 == 1 {
			wantLost = append(wantLost, pn)
		}
	}
	if got := e.cc.lostPNs(); !slices.Equal(got, wantLost) {
		t.Fatalf("declared lost %d packets, want %d", len(got), len(wantLost))
	}
	// The peer's next ACK frame still carries the old ranges: they are
	// late acknowledgments now, not errors, and not acknowledged twice.
	acks := e.cc.ackCalls
	if err := e.h.OnAckReceived(now.Add(ms(1)), SpaceApplication, ackFrame(0, 0), 3); err != nil {
		t.Fatalf("late ACK: %v", err)
	}
	if e.cc.ackCalls != acks {
		t.Fatalf("a late acknowledgment of a packet declared lost was reported to the controller as new")
	}
}
