package congestion

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BBR.max_bw covers "the past two ProbeBW cycles": a sample stays while
// the cycle count advances by one and leaves when it advances by two.
func TestFilterMaxCycles(t *testing.T) {
	var f filterMax
	steps := []struct{ v, t, want uint64 }{
		{100, 0, 100},
		{90, 0, 100},
		{80, 1, 100}, // previous cycle still counts
		{70, 1, 100},
		{60, 2, 80}, // cycle 0 aged out; best of cycle 1
		{65, 2, 80},
		{50, 3, 65}, // cycle 1 aged out
		{200, 3, 200},
		{10, 5, 10}, // everything aged out
	}
	for i, s := range steps {
		if got := f.update(s.v, s.t, bbrMaxBwFilterLen); got != s.want {
			t.Fatalf("step %d: update(%d, t=%d) = %d, want %d", i, s.v, s.t, got, s.want)
		}
	}
}

// With a window of one round ("in Startup, just remember 1 round") only
// the current round's samples count.
func TestFilterMaxOneRound(t *testing.T) {
	var f filterMax
	f.update(500, 1, 1)
	if got := f.update(100, 1, 1); got != 500 {
		t.Fatalf("same round: %d", got)
	}
	if got := f.update(100, 2, 1); got != 100 {
		t.Fatalf("next round: %d, want 100", got)
	}
}

// Against a brute-force windowed maximum: the estimate is always a sample
// from the window, at least the newest sample, and for the short windows
// BBR uses (2 cycles, 10 rounds) with several samples per time unit it is
// the exact maximum in the vast majority of steps.
func TestFilterMaxBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, window := range []uint64{1, 2, 10} {
		var f filterMax
		type sample struct{ t, v uint64 }
		var hist []sample
		var tm uint64
		exact, steps := 0, 0
		for range 20000 {
			if rng.IntN(4) == 0 {
				tm += uint64(rng.IntN(3))
			}
			v := uint64(rng.IntN(1000))
			for len(hist) > 0 && tm-hist[0].t >= window {
				hist = hist[1:]
			}
			hist = append(hist, sample{tm, v})
			got := f.update(v, tm, window)
			var best uint64
			inWindow := false
			for _, s := range hist {
				if tm-s.t < window {
					best = max(best, s.v)
					if s.v == got {
						inWindow = true
					}
				}
			}
			if got < v || got > best || !inWindow {
				t.Fatalf("window %d t=%d: got %d, sample %d, window max %d (in window: %v)", window, tm, got, v, best, inWindow)
			}
			steps++
			if got == best {
				exact++
			}
		}
		if exact*100 < steps*90 {
			t.Errorf("window %d: exact in %d of %d steps", window, exact, steps)
		}
	}
}

// Section 5.3.4.3: BBR.probe_rtt_min_delay takes lower samples, or any
// sample once BBR.ProbeRTTInterval (5 s) expired; BBR.min_rtt follows it
// when lower or after BBR.MinRTTFilterLen (10 s).
func TestFilterMinRTT(t *testing.T) {
	t0 := time.Unix(0, 0)
	var f filterMinRTT
	f.init(t0, 0)
	if f.minRTT != filterInfiniteRTT {
		t.Fatal("min_rtt not infinite without C.srtt")
	}
	f.update(t0.Add(time.Second), -1) // no RS.rtt
	if f.minRTT != filterInfiniteRTT {
		t.Fatal("min_rtt from no sample")
	}
	f.update(t0.Add(time.Second), 50*time.Millisecond)
	f.update(t0.Add(2*time.Second), 60*time.Millisecond)
	if f.minRTT != 50*time.Millisecond || f.probeRTTMinDelay != 50*time.Millisecond {
		t.Fatalf("min_rtt %v probe_rtt_min_delay %v, want 50ms", f.minRTT, f.probeRTTMinDelay)
	}
	f.update(t0.Add(6*time.Second), 60*time.Millisecond)
	if f.probeRTTExpired {
		t.Fatal("expired at exactly 5 s: the draft uses Now() > stamp + interval")
	}
	f.update(t0.Add(6*time.Second+1), 70*time.Millisecond)
	if !f.probeRTTExpired || f.probeRTTMinDelay != 70*time.Millisecond {
		t.Fatalf("after 5 s: expired %v delay %v, want true 70ms", f.probeRTTExpired, f.probeRTTMinDelay)
	}
	if f.minRTT != 50*time.Millisecond {
		t.Fatalf("min_rtt %v changed before 10 s", f.minRTT)
	}
	f.update(t0.Add(11*time.Second+1), 80*time.Millisecond)
	// min_rtt expired: it takes probe_rtt_min_delay (70ms, stamped at 6 s).
	if f.minRTT != 70*time.Millisecond || !f.minRTTStamp.Equal(t0.Add(6*time.Second+1)) {
		t.Fatalf("after 10 s: min_rtt %v stamp %v", f.minRTT, f.minRTTStamp.Sub(t0))
	}
}
