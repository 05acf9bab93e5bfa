package ackhandler

import (
	"testing"
	"time"

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

// BenchmarkOnAckReceivedWithLoss processes, per iteration, the ACK frame
// of ten packets sent one RTT (20 ms) earlier at 100,000 packets per
// second, with one packet in 100 lost: the lost packets' records stay for
// two PTO periods, about 4,000 packets behind the newest. The cost per
// ACK must follow what the ACK changed, not that distance.
func BenchmarkOnAckReceivedWithLoss(b *testing.B) {
	e := newEnv(b, wire.RoleServer)
	e.cc.record = false
	e.fh.record = false
	e.h.SetHandshakeConfirmed(t0)
	const (
		batch = 10
		step  = 100 * time.Microsecond // one batch per step
		delay = 200                    // batches in flight: 20 ms
	)
	now := e.establishRTT(b, t0, 20*time.Millisecond)
	f := &wire.AckFrame{Ranges: make([]wire.AckRange, 0, 2)}
	var firsts [delay]wire.PacketNumber
	i := 0
	iter := func() {
		slot := i % delay
		if i >= delay {
			first := firsts[slot]
			f.Ranges = f.Ranges[:0]
			if i%10 == 0 { // the batch's first packet is lost
				f.Ranges = append(f.Ranges, wire.AckRange{Smallest: first + 1, Largest: first + batch - 1})
			} else {
				f.Ranges = append(f.Ranges, wire.AckRange{Smallest: first, Largest: first + batch - 1})
			}
			if err := e.h.OnAckReceived(now, SpaceApplication, f, 3); err != nil {
				b.Fatal(err)
			}
		}
		firsts[slot] = e.send(now, SpaceApplication)
		for range batch - 1 {
			e.send(now, SpaceApplication)
		}
		now = now.Add(step)
		i++
	}
	for range 4000 { // rings at their steady size
		iter()
	}
	if n := e.h.spaces[SpaceApplication].packets.n; n < 2000 {
		b.Fatalf("%d packet records kept; the benchmark wants thousands", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		iter()
	}
}
