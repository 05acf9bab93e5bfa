package ackhandler

import (
	"testing"

	"github.com/quicstack/quic/wire"
)

// BenchmarkOnPacketSent records one packet with three frames per
// iteration; an ACK every 100 packets keeps the rings at a steady size.
func BenchmarkOnPacketSent(b *testing.B) {
	e := newAllocEnv(b)
	f := &wire.AckFrame{Ranges: make([]wire.AckRange, 0, 4)}
	now := t0
	for range 10 {
		now = e.roundTrip(now, f)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.sendWithFrames(now)
		if i%100 == 99 {
			b.StopTimer()
			now = now.Add(ms(1))
			e.ackOutstanding(b, now, SpaceApplication)
			b.StartTimer()
		}
	}
}

// BenchmarkOnAckReceived10 sends ten packets with three frames each and
// processes the ACK frame that acknowledges them, per iteration.
func BenchmarkOnAckReceived10(b *testing.B) {
	e := newAllocEnv(b)
	f := &wire.AckFrame{Ranges: make([]wire.AckRange, 0, 4)}
	now := t0
	for range 10 {
		now = e.roundTrip(now, f)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		now = e.roundTrip(now, f)
	}
}

// BenchmarkReceivedPacket records one received packet per iteration and
// writes an ACK frame every second packet.
func BenchmarkReceivedPacket(b *testing.B) {
	r := NewReceivedPackets(SpaceApplication)
	f := &wire.AckFrame{}
	now := t0
	b.ReportAllocs()
	for i := range b.N {
		pn := wire.PacketNumber(i)
		r.OnPacket(now, pn, true, ECT0)
		if d := r.AckDeadline(); !d.IsZero() && !d.After(now) {
			r.AppendAck(now, f, 3)
			r.OnAckSent()
			r.IgnoreBelow(pn - 10)
		}
	}
}
