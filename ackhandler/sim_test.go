package ackhandler

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// simPacket is a packet on the simulated forward link.
type simPacket struct {
	arrive time.Time
	pn     wire.PacketNumber
	ecn    ECNMark
}

// simAck is an ACK frame on the simulated return link.
type simAck struct {
	arrive time.Time
	f      wire.AckFrame
}

// A sender and a receiver exchange packets over a lossy, reordering,
// CE-marking path for ten simulated seconds. The invariants: no ACK frame
// is rejected, every frame is acknowledged at most once, bytes in flight
// match the outstanding records, and everything sent is eventually
// acknowledged or declared lost.
func TestSimulatedTransfer(t *testing.T) {
	for seed := range uint64(5) {
		simulate(t, seed, false)
		simulate(t, seed, true)
	}
}

// simulate runs one transfer; bursty sends a window at once over a path
// that reorders within 5ms, so that many packets are declared lost
// spuriously, otherwise packets are paced and reordered within 2ms.
func simulate(t *testing.T, seed uint64, bursty bool) {
	rng := rand.New(rand.NewPCG(seed, 99))
	e := newEnv(t, wire.RoleServer, func(c *Config) {
		c.DisablePacketNumberSkipping = false
		c.DisableECN = false
		c.Seed = seed
	})
	e.fh.record = false
	e.cc.record = false
	e.rtt.SetMaxAckDelay(ms(25))
	h := e.h
	h.SetHandshakeConfirmed(t0)
	recv := NewReceivedPackets(SpaceApplication)
	recv.SetMaxRanges(16)

	ackedFrames := map[uint64]int{}
	track := &simFrames{acked: ackedFrames}
	h.frames = track

	var (
		fwd  []simPacket
		back []simAck
		id   uint64
		sent int
	)
	const window = 30 * 1200
	now := t0
	end := t0.Add(10 * time.Second)
	sendOne := func() {
		pn, _ := h.NextPacketNumber(SpaceApplication)
		id++
		h.AddFrame(SpaceApplication, FrameRecord{Type: wire.FrameTypeStream, Offset: id})
		mark := h.ECNMarking()
		h.OnPacketSent(now, SpaceApplication, SentPacket{PacketNumber: pn, Size: 1200, AckEliciting: true, InFlight: true, ECN: mark})
		sent++
		if rng.IntN(100) < 5 { // 5% loss
			return
		}
		if mark != NotECT && rng.IntN(100) < 3 {
			mark = CE
		}
		jitter := 2000
		if bursty {
			jitter = 5000
		}
		delay := ms(20) + time.Duration(rng.IntN(jitter))*time.Microsecond
		fwd = append(fwd, simPacket{arrive: now.Add(delay), pn: pn, ecn: mark})
	}
	for now.Before(end) {
		// Deliveries.
		for i := 0; i < len(fwd); {
			if p := fwd[i]; !p.arrive.After(now) {
				recv.OnPacket(now, p.pn, true, p.ecn)
				fwd = append(fwd[:i], fwd[i+1:]...)
				continue
			}
			i++
		}
		if d := recv.AckDeadline(); !d.IsZero() && !d.After(now) {
			var a simAck
			recv.AppendAck(now, &a.f, 3)
			recv.OnAckSent()
			if rng.IntN(100) >= 5 {
				a.arrive = now.Add(ms(20))
				back = append(back, a)
			}
		}
		for i := 0; i < len(back); {
			if a := back[i]; !a.arrive.After(now) {
				if err := h.OnAckReceived(now, SpaceApplication, &a.f, 3); err != nil {
					t.Fatalf("seed %d: OnAckReceived: %v", seed, err)
				}
				back = append(back[:i], back[i+1:]...)
				continue
			}
			i++
		}
		if d := h.LossDetectionDeadline(); !d.IsZero() && !d.After(now) {
			h.OnLossDetectionTimeout(now)
		}
		for h.ProbesToSend() > 0 {
			sendOne()
		}
		// Paced: at most two packets per millisecond.
		for i := 0; (bursty || i < 2) && now.Before(end.Add(-time.Second)) && h.BytesInFlight() < window; i++ {
			sendOne()
		}
		checkInFlight(t, h)
		now = now.Add(time.Millisecond)
	}
	// Drain: no new data in the last second, so every packet is resolved
	// (the last probes may still be outstanding).
	for fid, n := range ackedFrames {
		if n > 1 {
			t.Fatalf("seed %d: frame %d acknowledged %d times", seed, fid, n)
		}
	}
	if resolved := len(ackedFrames) + track.lost; resolved < int(id)-4 {
		t.Fatalf("seed %d: %d frames sent, %d acknowledged, %d lost", seed, id, len(ackedFrames), track.lost)
	}
	if h.ECNState() != ECNCapable {
		t.Fatalf("seed %d: ECN state %v", seed, h.ECNState())
	}
	if e.cc.congCalls == 0 || e.cc.ackCalls == 0 {
		t.Fatalf("seed %d: no events", seed)
	}
	t.Logf("seed %d, bursty %v: %d packets, %d acked frames, %d lost, %d congestion events, srtt %v", seed, bursty, sent, len(ackedFrames), track.lost, e.cc.congCalls, e.rtt.Smoothed())
}

type simFrames struct {
	acked map[uint64]int
	lost  int
}

func (s *simFrames) OnFrameAcked(_ Space, f *FrameRecord) { s.acked[f.Offset]++ }
func (s *simFrames) OnFrameLost(_ Space, f *FrameRecord)  { s.lost++ }

// checkInFlight verifies the byte and packet counters against the
// records.
func checkInFlight(t *testing.T, h *SentPacketHandler) {
	t.Helper()
	total := 0
	for i := range h.spaces {
		s := &h.spaces[i]
		eliciting := 0
		for j := 0; j < s.packets.n; j++ {
			e := s.packets.at(s.packets.headPN + wire.PacketNumber(j))
			if e.state == sentOutstanding && e.InFlight {
				total += e.Size
			}
			if e.state == sentOutstanding && e.AckEliciting {
				eliciting++
			}
		}
		if eliciting != s.ackElicitingInFlight {
			t.Fatalf("space %d: %d ack-eliciting outstanding, counter %d", i, eliciting, s.ackElicitingInFlight)
		}
	}
	if total != h.BytesInFlight() {
		t.Fatalf("bytes in flight %d, records say %d", h.BytesInFlight(), total)
	}
}
