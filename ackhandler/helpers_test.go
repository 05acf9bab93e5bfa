package ackhandler

import (
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

var t0 = time.Unix(0, 0)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// fakeCC is a congestion.Controller that records what it is told. With
// record unset it only counts, so that it does not allocate.
type fakeCC struct {
	record      bool
	sentCalls   int
	lastInFight int
	acks        []congestion.AckEvent
	congs       []congestion.CongestionEvent
	ackCalls    int
	congCalls   int
	// calls counts both kinds; ackSeq and congSeq record its value at
	// each recorded call, to check their order.
	calls           int
	ackSeq, congSeq []int
}

func (c *fakeCC) OnPacketSent(now time.Time, pn int64, bytes int, bytesInFlight int) {
	c.sentCalls++
	c.lastInFight = bytesInFlight
}

func (c *fakeCC) OnAck(now time.Time, ev *congestion.AckEvent) {
	c.ackCalls++
	c.calls++
	if c.record {
		c.ackSeq = append(c.ackSeq, c.calls)
		e := *ev
		e.Acked = append([]congestion.AckedPacket(nil), ev.Acked...)
		c.acks = append(c.acks, e)
	}
}

func (c *fakeCC) OnCongestionEvent(now time.Time, ev *congestion.CongestionEvent) {
	c.congCalls++
	c.calls++
	if c.record {
		c.congSeq = append(c.congSeq, c.calls)
		e := *ev
		e.Lost = append([]congestion.LostPacket(nil), ev.Lost...)
		c.congs = append(c.congs, e)
	}
}

func (c *fakeCC) OnAppLimited(time.Time, int)          {}
func (c *fakeCC) SetMaxDatagramSize(int)               {}
func (c *fakeCC) CongestionWindow() int                { return 1 << 30 }
func (c *fakeCC) PacingRate() uint64                   { return 1 << 40 }
func (c *fakeCC) State() congestion.State              { return congestion.State{Name: "fake"} }
func (c *fakeCC) lastCong() congestion.CongestionEvent { return c.congs[len(c.congs)-1] }

// lostPNs returns the packet numbers of all recorded lost packets.
func (c *fakeCC) lostPNs() []int64 {
	var pns []int64
	for _, e := range c.congs {
		for _, p := range e.Lost {
			pns = append(pns, p.PacketNumber)
		}
	}
	return pns
}

// fakeFrames is a FrameHandler recording frames, or only counting them.
type fakeFrames struct {
	record        bool
	acked, lost   []FrameRecord
	ackedSpaces   []Space
	ackedN, lostN int
}

func (f *fakeFrames) OnFrameAcked(space Space, r *FrameRecord) {
	f.ackedN++
	if f.record {
		f.acked = append(f.acked, *r)
		f.ackedSpaces = append(f.ackedSpaces, space)
	}
}

func (f *fakeFrames) OnFrameLost(space Space, r *FrameRecord) {
	f.lostN++
	if f.record {
		f.lost = append(f.lost, *r)
	}
}

type testEnv struct {
	h   *SentPacketHandler
	cc  *fakeCC
	fh  *fakeFrames
	rtt *congestion.RTTStats
}

// newEnv returns a handler with consecutive packet numbers (no skipping)
// and ECN disabled, unless cfg says otherwise through mod.
func newEnv(t testing.TB, role wire.Role, mod ...func(*Config)) *testEnv {
	t.Helper()
	env := &testEnv{cc: &fakeCC{record: true}, fh: &fakeFrames{record: true}, rtt: congestion.NewRTTStats()}
	cfg := Config{
		Role:                        role,
		RTT:                         env.rtt,
		Controller:                  env.cc,
		Frames:                      env.fh,
		DisablePacketNumberSkipping: true,
		DisableECN:                  true,
	}
	for _, m := range mod {
		m(&cfg)
	}
	env.h = New(cfg)
	return env
}

// send sends the next packet of space, ack-eliciting and in flight, of
// 1200 bytes, and returns its packet number.
func (e *testEnv) send(now time.Time, space Space) wire.PacketNumber {
	return e.sendP(now, space, true, 1200)
}

func (e *testEnv) sendP(now time.Time, space Space, ackEliciting bool, size int) wire.PacketNumber {
	pn, _ := e.h.NextPacketNumber(space)
	e.h.OnPacketSent(now, space, SentPacket{
		PacketNumber: pn, Size: size, AckEliciting: ackEliciting, InFlight: ackEliciting,
		ECN: e.h.ECNMarking(),
	})
	return pn
}

// ackFrame builds an ACK frame from (smallest, largest) pairs given in
// descending order.
func ackFrame(pairs ...wire.PacketNumber) *wire.AckFrame {
	f := &wire.AckFrame{}
	for i := 0; i < len(pairs); i += 2 {
		f.Ranges = append(f.Ranges, wire.AckRange{Smallest: pairs[i], Largest: pairs[i+1]})
	}
	return f
}

func (e *testEnv) ack(t testing.TB, now time.Time, space Space, pairs ...wire.PacketNumber) {
	t.Helper()
	if err := e.h.OnAckReceived(now, space, ackFrame(pairs...), 3); err != nil {
		t.Fatalf("OnAckReceived: %v", err)
	}
}

func isProtocolViolation(err error) bool {
	var te *wire.TransportError
	return errors.As(err, &te) && te.Code == wire.ProtocolViolation
}

// confirm makes a server-side handler with confirmed handshake and the
// given RTT sample taken in the application space, leaving nothing in
// flight. It returns the time after the sample.
func (e *testEnv) establishRTT(t testing.TB, now time.Time, rtt time.Duration) time.Time {
	t.Helper()
	pn := e.send(now, SpaceApplication)
	now = now.Add(rtt)
	e.ack(t, now, SpaceApplication, pn, pn)
	return now
}

// ackOutstanding acknowledges every outstanding packet of space, in
// ranges that leave out the never-sent (skipped) packet numbers.
func (e *testEnv) ackOutstanding(t testing.TB, now time.Time, space Space) {
	t.Helper()
	s := &e.h.spaces[space]
	f := &wire.AckFrame{}
	in := false
	for pn := s.lastSent; pn >= s.packets.headPN && s.packets.n > 0; pn-- {
		sent := s.packets.at(pn).state != sentUnsent
		switch {
		case sent && !in:
			f.Ranges = append(f.Ranges, wire.AckRange{Smallest: pn, Largest: pn})
			in = true
		case sent:
			f.Ranges[len(f.Ranges)-1].Smallest = pn
		default:
			in = false
		}
	}
	if len(f.Ranges) == 0 {
		return
	}
	if err := e.h.OnAckReceived(now, space, f, 3); err != nil {
		t.Fatalf("OnAckReceived: %v", err)
	}
}
