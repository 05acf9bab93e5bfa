package ackhandler

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// TestLossScanCursorMatchesFullWalk drives two handlers with the same
// random sends, ACK frames (gaps, reordering, late acknowledgments of
// packets declared lost) and loss timeouts: one starts each loss-detection
// pass at its scan cursor, the other walks from the first record kept, as
// before the cursor. They must declare the same packets lost in the same
// congestion events (persistent congestion included) and arm the same
// timers.
func TestLossScanCursorMatchesFullWalk(t *testing.T) {
	persistent := 0
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		a, b := newEnv(t, wire.RoleServer), newEnv(t, wire.RoleServer)
		b.h.fullScan = true
		a.h.SetHandshakeConfirmed(t0)
		b.h.SetHandshakeConfirmed(t0)
		now := t0
		ackWeight := 2 + int(seed%6) // of 10: some scenarios starve of ACKs
		var sent []wire.PacketNumber
		for step := range 600 {
			switch r := rng.IntN(5 + ackWeight + 1); {
			case r < 5: // send a few packets
				for range 1 + rng.IntN(4) {
					ackEliciting := rng.IntN(8) != 0
					pa := a.sendP(now, SpaceApplication, ackEliciting, 1200)
					pb := b.sendP(now, SpaceApplication, ackEliciting, 1200)
					if pa != pb {
						t.Fatalf("seed %d: packet numbers %d and %d", seed, pa, pb)
					}
					sent = append(sent, pa)
				}
			case r < 5+ackWeight && len(sent) > 0: // an ACK frame of random ranges
				hi := sent[len(sent)-1-rng.IntN(min(len(sent), 6))]
				if rng.IntN(4) == 0 { // late: an older packet, maybe lost
					hi = sent[rng.IntN(len(sent))]
				}
				f := &wire.AckFrame{}
				for pn := hi; pn >= sent[0] && len(f.Ranges) < 4; {
					lo := max(sent[0], pn-wire.PacketNumber(rng.IntN(5)))
					f.Ranges = append(f.Ranges, wire.AckRange{Smallest: lo, Largest: pn})
					pn = lo - 2 - wire.PacketNumber(rng.IntN(4))
				}
				ea := a.h.OnAckReceived(now, SpaceApplication, f, 3)
				eb := b.h.OnAckReceived(now, SpaceApplication, f, 3)
				if (ea == nil) != (eb == nil) {
					t.Fatalf("seed %d step %d: errors %v and %v", seed, step, ea, eb)
				}
			default: // the loss-detection timer fires, if armed
				if d := a.h.LossDetectionDeadline(); !d.IsZero() && rng.IntN(2) == 0 {
					if d.After(now) {
						now = d
					}
					a.h.OnLossDetectionTimeout(now)
					b.h.OnLossDetectionTimeout(now)
				}
			}
			now = now.Add(time.Duration(rng.IntN(8)) * time.Millisecond)
			checkScanCursor(t, a.h)
			if !reflect.DeepEqual(a.cc.congs, b.cc.congs) {
				t.Fatalf("seed %d step %d: congestion events differ:\ncursor %+v\nfull   %+v", seed, step, a.cc.congs, b.cc.congs)
			}
			if da, db := a.h.LossDetectionDeadline(), b.h.LossDetectionDeadline(); !da.Equal(db) {
				t.Fatalf("seed %d step %d: loss deadlines %v and %v", seed, step, da, db)
			}
			if a.h.BytesInFlight() != b.h.BytesInFlight() {
				t.Fatalf("seed %d step %d: bytes in flight %d and %d", seed, step, a.h.BytesInFlight(), b.h.BytesInFlight())
			}
		}
		for _, c := range a.cc.congs {
			if c.PersistentCongestion {
				persistent++
			}
		}
		if len(a.cc.lostPNs()) == 0 {
			t.Fatalf("seed %d: no packet declared lost; the scenario tests nothing", seed)
		}
	}
	if persistent == 0 {
		t.Fatal("no persistent congestion in any scenario; the run state is not tested")
	}
	t.Logf("%d persistent congestion events", persistent)
}

// checkScanCursor checks the cursor's invariant: no packet below it is
// outstanding, and its run of lost packets is the one the records from the
// ring's first give, starting from the run compaction carried.
func checkScanCursor(t *testing.T, h *SentPacketHandler) {
	t.Helper()
	s := &h.spaces[SpaceApplication]
	if !s.scan.valid || s.scan.pn < s.packets.headPN || s.packets.n == 0 {
		return
	}
	run := lostRun{in: !s.lostRunStart.IsZero(), start: s.lostRunStart}
	for pn := s.packets.headPN; pn < s.scan.pn && pn <= s.lastSent; pn++ {
		e := s.packets.at(pn)
		switch e.state {
		case sentOutstanding:
			t.Fatalf("packet %d below the scan cursor %d is outstanding", pn, s.scan.pn)
		case sentAcked:
			run.in = false
		case sentLost:
			if !run.in && h.countsForPersistentCongestion(e) {
				run = lostRun{true, e.SentTime}
			}
		}
	}
	if run.in != s.scan.run.in || (run.in && !run.start.Equal(s.scan.run.start)) {
		t.Fatalf("scan cursor %d keeps the run %+v; the records give %+v", s.scan.pn, s.scan.run, run)
	}
}
