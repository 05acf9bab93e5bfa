package ackhandler

import (
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// newAllocEnv returns a handler with the defaults a connection uses
// (packet number skipping and ECN on) and non-recording fakes.
func newAllocEnv(tb testing.TB) *testEnv {
	e := newEnv(tb, wire.RoleServer, func(c *Config) {
		c.DisablePacketNumberSkipping = false
		c.DisableECN = false
		c.Seed = 1
	})
	e.cc.record = false
	e.fh.record = false
	e.h.SetHandshakeConfirmed(t0)
	return e
}

// sendWithFrames sends one packet with three frame records.
func (e *testEnv) sendWithFrames(now time.Time) wire.PacketNumber {
	h := e.h
	pn, _ := h.NextPacketNumber(SpaceApplication)
	h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeStream, StreamID: 4, Offset: uint64(pn) * 1000, Length: 1000})
	h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeMaxStreamData, StreamID: 8})
	h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeAck, Extra: uint64(pn)})
	h.OnPacketSent(now, SpaceApplication, SentPacket{
		PacketNumber: pn, Size: 1200, AckEliciting: true, InFlight: true, ECN: h.ECNMarking(),
	})
	return pn
}

// roundTrip sends ten packets with three frames each and processes an ACK
// frame acknowledging them (in two ranges when a number was skipped).
func (e *testEnv) roundTrip(now time.Time, f *wire.AckFrame) time.Time {
	first := wire.InvalidPacketNumber
	var prev wire.PacketNumber
	f.Ranges = f.Ranges[:0]
	for range 10 {
		pn := e.sendWithFrames(now)
		if first == wire.InvalidPacketNumber {
			first = pn
		} else if pn != prev+1 {
			f.Ranges = append(f.Ranges, wire.AckRange{Smallest: first, Largest: prev})
			first = pn
		}
		prev = pn
	}
	f.Ranges = append(f.Ranges, wire.AckRange{Smallest: first, Largest: prev})
	// Descending order.
	if len(f.Ranges) == 2 {
		f.Ranges[0], f.Ranges[1] = f.Ranges[1], f.Ranges[0]
	}
	now = now.Add(ms(20))
	if err := e.h.OnAckReceived(now, SpaceApplication, f, 3); err != nil {
		panic(err)
	}
	return now
}

// Zero allocations for recording a sent packet with three frames and for
// processing an ACK frame that acknowledges ten packets, in the steady
// state.
func TestZeroAllocsSentPacketHandler(t *testing.T) {
	e := newAllocEnv(t)
	f := &wire.AckFrame{Ranges: make([]wire.AckRange, 0, 4)}
	now := t0
	for range 100 { // warm up: rings and event slices reach their size
		now = e.roundTrip(now, f)
	}
	sent := testing.AllocsPerRun(1000, func() {
		e.sendWithFrames(now)
	})
	if sent != 0 {
		t.Errorf("OnPacketSent with 3 frames: %v allocs, want 0", sent)
	}
	// Acknowledge what the measurement sent.
	e.ackOutstanding(t, now, SpaceApplication)
	// The ring may have grown for the 1000 packets above; each round trip
	// is measured from the steady state.
	acked := testing.AllocsPerRun(1000, func() {
		now = e.roundTrip(now, f)
	})
	if acked != 0 {
		t.Errorf("send 10 packets and process their ACK: %v allocs, want 0", acked)
	}
	if e.fh.ackedN < 3*10*1000 || e.cc.ackCalls < 1000 {
		t.Fatalf("frames acked %d, OnAck calls %d", e.fh.ackedN, e.cc.ackCalls)
	}
}

// Zero allocations for losses, persistent congestion and timeouts.
func TestZeroAllocsLossAndTimeout(t *testing.T) {
	e := newAllocEnv(t)
	f := &wire.AckFrame{Ranges: make([]wire.AckRange, 0, 4)}
	now := t0
	for range 50 {
		now = e.roundTrip(now, f)
	}
	allocs := testing.AllocsPerRun(500, func() {
		for range 5 {
			e.sendWithFrames(now)
		}
		last := e.sendWithFrames(now.Add(ms(1)))
		now = now.Add(ms(30))
		f.Ranges = append(f.Ranges[:0], wire.AckRange{Smallest: last, Largest: last})
		if err := e.h.OnAckReceived(now, SpaceApplication, f, 3); err != nil {
			panic(err)
		}
		now = e.h.LossDetectionDeadline()
		e.h.OnLossDetectionTimeout(now)
	})
	if allocs != 0 {
		t.Errorf("loss detection: %v allocs, want 0", allocs)
	}
	if e.cc.congCalls == 0 {
		t.Fatal("no losses")
	}
}

// Zero allocations for recording received packets and writing an ACK
// frame with several ranges.
func TestZeroAllocsReceivedPackets(t *testing.T) {
	r := NewReceivedPackets(SpaceApplication)
	f := &wire.AckFrame{}
	var pn wire.PacketNumber
	now := t0
	step := func() {
		for i := range 20 {
			if i%4 != 3 { // a gap every fourth packet: several ranges
				r.OnPacket(now, pn, true, ECT0)
			}
			pn++
		}
		_ = r.AckDeadline()
		if !r.AppendAck(now, f, 3) || len(f.Ranges) < 5 {
			panic("AppendAck")
		}
		r.OnAckSent()
		r.IgnoreBelow(pn - 40)
		now = now.Add(time.Millisecond)
	}
	step()
	if allocs := testing.AllocsPerRun(1000, step); allocs != 0 {
		t.Errorf("OnPacket + AppendAck: %v allocs, want 0", allocs)
	}
}

// The fakes themselves must not allocate when not recording.
var _ congestion.Controller = (*fakeCC)(nil)
var _ FrameHandler = (*fakeFrames)(nil)
