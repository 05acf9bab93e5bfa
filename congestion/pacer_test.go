package congestion

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// pacerRate is 1200 bytes per millisecond: one full-size datagram per ms.
const pacerRate = 1_200_000

func TestPacerBurstAllowance(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := NewPacer(1200)
	// RFC 9002, Section 7.7: "Senders SHOULD limit bursts to the initial
	// congestion window". A full bucket releases ten datagrams at once.
	if got := p.Budget(t0, pacerRate); got != 12000 {
		t.Fatalf("initial Budget = %d, want 12000", got)
	}
	for i := range PacerBurstPackets {
		if at := p.TimeUntilSend(t0, pacerRate); at.After(t0) {
			t.Fatalf("packet %d of the burst delayed until %v", i, at.Sub(t0))
		}
		p.OnPacketSent(t0, 1200, pacerRate)
	}
	if got := p.Budget(t0, pacerRate); got != 0 {
		t.Fatalf("Budget after the burst = %d", got)
	}
	if at := p.TimeUntilSend(t0, pacerRate); at.Sub(t0) != time.Millisecond {
		t.Fatalf("11th packet at %v, want 1ms", at.Sub(t0))
	}
}

func TestPacerSteadyRate(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := NewPacer(1200)
	for range PacerBurstPackets {
		p.OnPacketSent(t0, 1200, pacerRate)
	}
	// RFC 9002, Section 7.7: "A perfectly paced sender spreads packets
	// exactly evenly over time": interval = packet_size / rate = 1 ms.
	now := t0
	for i := 1; i <= 100; i++ {
		at := p.TimeUntilSend(now, pacerRate)
		if want := t0.Add(time.Duration(i) * time.Millisecond); !at.Equal(want) {
			t.Fatalf("packet %d at %v, want %v", i, at.Sub(t0), want.Sub(t0))
		}
		// Asking early does not change the answer.
		if again := p.TimeUntilSend(now.Add(time.Microsecond), pacerRate); !again.Equal(at) {
			t.Fatalf("asking again gives %v, want %v", again.Sub(t0), at.Sub(t0))
		}
		now = at
		if at2 := p.TimeUntilSend(now, pacerRate); at2.After(now) {
			t.Fatalf("not allowed at its own release time")
		}
		p.OnPacketSent(now, 1200, pacerRate)
	}
}

func TestPacerIdleRefillCapped(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := NewPacer(1200)
	for range 15 {
		p.OnPacketSent(t0, 1200, pacerRate) // 5 datagrams in debt
	}
	if at := p.TimeUntilSend(t0, pacerRate); at.Sub(t0) != 6*time.Millisecond {
		t.Fatalf("after debt: next at %v, want 6ms", at.Sub(t0))
	}
	// A long idle period refills at most one burst.
	now := t0.Add(time.Hour)
	if got := p.Budget(now, pacerRate); got != 12000 {
		t.Fatalf("Budget after an hour idle = %d, want 12000", got)
	}
	for range PacerBurstPackets {
		if at := p.TimeUntilSend(now, pacerRate); at.After(now) {
			t.Fatal("burst after idle delayed")
		}
		p.OnPacketSent(now, 1200, pacerRate)
	}
	if at := p.TimeUntilSend(now, pacerRate); at.Sub(now) != time.Millisecond {
		t.Fatalf("after the idle burst: next at %v, want 1ms", at.Sub(now))
	}
	// Partial refill: 3.5 ms gives 4200 bytes.
	if got := p.Budget(now.Add(3500*time.Microsecond), pacerRate); got != 4200 {
		t.Fatalf("Budget after 3.5ms = %d, want 4200", got)
	}
}

func TestPacerRateChange(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := NewPacer(1200)
	for range PacerBurstPackets {
		p.OnPacketSent(t0, 1200, pacerRate)
	}
	now := p.TimeUntilSend(t0, pacerRate)
	p.OnPacketSent(now, 1200, pacerRate)
	// Doubling the rate halves the interval.
	if at := p.TimeUntilSend(now, 2*pacerRate); at.Sub(now) != 500*time.Microsecond {
		t.Fatalf("at twice the rate: next in %v, want 500µs", at.Sub(now))
	}
	now = now.Add(500 * time.Microsecond)
	p.OnPacketSent(now, 1200, 2*pacerRate)
	// Quartering it makes the next interval 4 ms.
	if at := p.TimeUntilSend(now, pacerRate/2); at.Sub(now) != 2*time.Millisecond {
		t.Fatalf("at half the rate: next in %v, want 2ms", at.Sub(now))
	}
	// Rate 0 is unpaced: always now, unlimited budget, and the bucket is
	// full again when pacing resumes.
	if at := p.TimeUntilSend(now, 0); !at.Equal(now) {
		t.Fatalf("unpaced TimeUntilSend = %v", at.Sub(now))
	}
	if got := p.Budget(now, 0); got != math.MaxInt {
		t.Fatalf("unpaced Budget = %d", got)
	}
	for range 50 {
		p.OnPacketSent(now, 1200, 0)
	}
	if got := p.Budget(now, pacerRate); got != 12000 {
		t.Fatalf("Budget after unpaced sends = %d, want 12000", got)
	}
}

func TestPacerNoRoundingLoss(t *testing.T) {
	// Asked every nanosecond at a low rate, the bucket still fills: the
	// tokens keep fractions of bytes.
	t0 := time.Unix(0, 0)
	p := NewPacer(1200)
	for range PacerBurstPackets {
		p.OnPacketSent(t0, 1200, 1000)
	}
	now := t0
	for range 1000 {
		now = now.Add(time.Nanosecond)
		p.OnPacketSent(now, 0, 1000)
	}
	// 1200 bytes at 1000 B/s take 1.2 s from t0.
	if at := p.TimeUntilSend(now, 1000); at.Sub(t0) != 1200*time.Millisecond {
		t.Fatalf("next at %v, want 1.2s", at.Sub(t0))
	}
}

func TestPacerSmallPacketsAndDatagramSize(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := NewPacer(0)
	if got := p.Budget(t0, pacerRate); got != 12000 {
		t.Fatalf("default size Budget = %d", got)
	}
	p.OnPacketSent(t0, 100, pacerRate)
	if got := p.Budget(t0, pacerRate); got != 11900 {
		t.Fatalf("Budget after 100 bytes = %d", got)
	}
	// A larger datagram size raises the burst allowance; the bucket fills
	// up to it.
	p.SetMaxDatagramSize(1500)
	if got := p.Budget(t0.Add(time.Second), pacerRate); got != 15000 {
		t.Fatalf("Budget with 1500-byte datagrams = %d, want 15000", got)
	}
	// A smaller one caps the content.
	p.SetMaxDatagramSize(1200)
	if got := p.Budget(t0, pacerRate); got != 11900 {
		t.Fatalf("Budget = %d, want 11900", got)
	}
	p.OnPacketSent(t0.Add(time.Second), 0, pacerRate)
	p.SetMaxDatagramSize(1200)
	if got := p.Budget(t0.Add(time.Second), pacerRate); got != 12000 {
		t.Fatalf("Budget = %d, want 12000", got)
	}
}

func TestPacerClockBackwards(t *testing.T) {
	t0 := time.Unix(100, 0)
	p := NewPacer(1200)
	for range 11 {
		p.OnPacketSent(t0, 1200, pacerRate)
	}
	early := t0.Add(-time.Second)
	if at := p.TimeUntilSend(early, pacerRate); at.Sub(t0) != 2*time.Millisecond {
		t.Fatalf("TimeUntilSend before the last send = %v after it, want 2ms", at.Sub(t0))
	}
	if got := p.Budget(early, pacerRate); got != 0 {
		t.Fatalf("Budget before the last send = %d", got)
	}
}

func TestPacerDebtBounded(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := NewPacer(1200)
	for range 1000 {
		p.OnPacketSent(t0, 1200, pacerRate)
	}
	// The debt is at most one burst: ten packets in debt plus one to send.
	if at := p.TimeUntilSend(t0, pacerRate); at.Sub(t0) != 11*time.Millisecond {
		t.Fatalf("next at %v, want 11ms", at.Sub(t0))
	}
	// A huge rate is clamped, not overflowed.
	if at := p.TimeUntilSend(t0.Add(time.Hour), math.MaxUint64); at.After(t0.Add(time.Hour)) {
		t.Fatal("huge rate delayed")
	}
}

func TestPacerAllocs(t *testing.T) {
	p := NewPacer(1200)
	now := time.Unix(0, 0)
	n := testing.AllocsPerRun(1000, func() {
		now = p.TimeUntilSend(now, pacerRate)
		_ = p.Budget(now, pacerRate)
		p.OnPacketSent(now, 1200, pacerRate)
	})
	if n != 0 {
		t.Fatalf("%v allocs per packet", n)
	}
}

func BenchmarkPacer(b *testing.B) {
	p := NewPacer(1200)
	now := time.Unix(0, 0)
	b.ReportAllocs()
	for b.Loop() {
		now = p.TimeUntilSend(now, pacerRate)
		p.OnPacketSent(now, 1200, pacerRate)
	}
}

// TestPacerBurstAtHighRate checks the burst allowance above the rate at
// which PacerBurstInterval of it is more than PacerBurstPackets datagrams:
// 1 ms of the rate, at most 64 KiB (BBR's send quantum), so that a sender
// at Gbit/s rates with 1,452-byte datagrams fills a GSO run (45
// datagrams) per wakeup rather than ten.
func TestPacerBurstAtHighRate(t *testing.T) {
	const mds = 1452
	for _, tc := range []struct {
		name string
		rate uint64 // bytes per second
		want int    // burst in bytes after an idle period
	}{
		{"100 Mbit/s: ten datagrams", 12_500_000, PacerBurstPackets * mds},
		{"500 Mbit/s: 1 ms of the rate", 62_500_000, 62_500},
		{"10 Gbit/s: capped at 64 KiB", 1_250_000_000, 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Unix(0, 0)
			p := NewPacer(mds)
			p.OnPacketSent(t0, 0, tc.rate)
			now := t0.Add(time.Second) // idle: the bucket refills to its capacity
			if got := p.Budget(now, tc.rate); got != tc.want {
				t.Fatalf("Budget after idle = %d, want %d", got, tc.want)
			}
			sent := 0
			for p.TimeUntilSend(now, tc.rate).Equal(now) {
				p.OnPacketSent(now, mds, tc.rate)
				sent++
			}
			// A packet may leave while the bucket holds one full-size
			// datagram: want/mds of them, rounded down.
			if want := tc.want / mds; sent != want {
				t.Fatalf("%d datagrams back to back, want %d", sent, want)
			}
		})
	}
	// A bucket filled at a high rate holds no more than the lower rate's
	// capacity once the rate drops.
	t0 := time.Unix(0, 0)
	p := NewPacer(mds)
	p.OnPacketSent(t0, 0, 1_250_000_000)
	now := t0.Add(time.Second)
	if got := p.Budget(now, 1_250_000_000); got != PacerMaxBurstBytes {
		t.Fatalf("Budget at 10 Gbit/s = %d", got)
	}
	if got := p.Budget(now, 12_500_000); got != PacerBurstPackets*mds {
		t.Fatalf("Budget at 100 Mbit/s after idling at 10 Gbit/s = %d, want %d", got, PacerBurstPackets*mds)
	}
}

// TestPacerTimeUntilSendAgreesWithBudget drives a pacer through random
// sends, clock steps, rate changes and datagram sizes and checks that
// TimeUntilSend lets a packet go now exactly when the tokens (Budget) hold
// a full-size datagram: its shortcut on the stored tokens must never
// differ from the clock arithmetic it skips.
func TestPacerTimeUntilSendAgreesWithBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rates := []uint64{1, 1000, pacerRate, 125_000_000, 1_250_000_000, pacerMaxRate, math.MaxUint64}
	sizes := []int{1200, 1252, 1452, 1500, 9000}
	for seq := range 200 {
		now := time.Unix(0, 0)
		mds := sizes[rng.IntN(len(sizes))]
		p := NewPacer(mds)
		for step := range 300 {
			rate := rates[rng.IntN(len(rates))]
			switch rng.IntN(10) {
			case 0:
				mds = sizes[rng.IntN(len(sizes))]
				p.SetMaxDatagramSize(mds)
			case 1, 2, 3:
				now = now.Add(time.Duration(rng.IntN(2_000_000)))
			default:
				p.OnPacketSent(now, 1+rng.IntN(mds), rate)
			}
			at := p.TimeUntilSend(now, rate)
			mayGo := p.Budget(now, rate) >= mds
			if !at.After(now) != mayGo {
				t.Fatalf("sequence %d step %d: TimeUntilSend in %v, Budget %d bytes for %d-byte datagrams",
					seq, step, at.Sub(now), p.Budget(now, rate), mds)
			}
		}
	}
}
