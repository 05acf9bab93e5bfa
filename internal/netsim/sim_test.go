package netsim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestSimStartsAtEpoch(t *testing.T) {
	s := NewSim()
	if !s.Now().Equal(time.Unix(0, 0)) || s.Elapsed() != 0 {
		t.Fatalf("Now = %v, Elapsed = %v", s.Now(), s.Elapsed())
	}
	if Epoch().IsZero() {
		t.Fatal("Epoch is the zero time")
	}
}

func TestSimOrdersByTimeThenScheduling(t *testing.T) {
	s := NewSim()
	var got []string
	at := func(ms int, name string) {
		s.At(Epoch().Add(time.Duration(ms)*time.Millisecond), func() { got = append(got, name) })
	}
	at(20, "c1")
	at(10, "a1")
	at(20, "c2")
	at(10, "a2")
	at(15, "b")
	at(10, "a3")
	s.At(Epoch().Add(10*time.Millisecond), func() {
		got = append(got, "a4")
		// Scheduled for now, from an event at now: runs after the
		// events already scheduled for now.
		s.After(0, func() { got = append(got, "a6") })
		at(0, "a7") // in the past: runs at now
	})
	at(10, "a5")
	s.Run(Epoch().Add(time.Second))
	want := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "b", "c1", "c2"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestSimRunAdvancesClock(t *testing.T) {
	s := NewSim()
	var when []time.Duration
	for _, ms := range []int{5, 10, 15} {
		s.After(time.Duration(ms)*time.Millisecond, func() { when = append(when, s.Elapsed()) })
	}
	s.Run(Epoch().Add(10 * time.Millisecond))
	if !slices.Equal(when, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond}) {
		t.Fatalf("ran at %v", when)
	}
	if s.Elapsed() != 10*time.Millisecond || s.Pending() != 1 {
		t.Fatalf("Elapsed %v Pending %d", s.Elapsed(), s.Pending())
	}
	s.Run(Epoch()) // in the past: nothing happens
	if s.Elapsed() != 10*time.Millisecond {
		t.Fatalf("Run into the past moved the clock to %v", s.Elapsed())
	}
	s.RunFor(time.Hour)
	if s.Elapsed() != time.Hour+10*time.Millisecond || len(when) != 3 || s.Processed() != 3 {
		t.Fatalf("Elapsed %v, ran %v, processed %d", s.Elapsed(), when, s.Processed())
	}
}

func TestSimStop(t *testing.T) {
	s := NewSim()
	n := 0
	for i := 1; i <= 10; i++ {
		s.After(time.Duration(i)*time.Second, func() {
			n++
			if n == 3 {
				s.Stop()
			}
		})
	}
	s.RunFor(time.Minute)
	if n != 3 || s.Elapsed() != 3*time.Second {
		t.Fatalf("stopped after %d events at %v", n, s.Elapsed())
	}
	s.RunFor(time.Minute) // Stop does not stick
	if n != 10 || s.Elapsed() != 63*time.Second {
		t.Fatalf("%d events, clock %v", n, s.Elapsed())
	}
}

func TestSimRunUntil(t *testing.T) {
	s := NewSim()
	n := 0
	tick := s.NewTimer(nil)
	tick.fn = func() { n++; tick.Reset(s.Now().Add(time.Second)) }
	tick.Reset(s.Now())
	if !s.RunUntil(func() bool { return n == 5 }, Epoch().Add(time.Hour)) {
		t.Fatal("RunUntil reported false")
	}
	if s.Elapsed() != 4*time.Second {
		t.Fatalf("done at %v, want 4s", s.Elapsed())
	}
	if s.RunUntil(func() bool { return n == 100 }, Epoch().Add(10*time.Second)) {
		t.Fatal("RunUntil reported true at the limit")
	}
	if s.Elapsed() != 10*time.Second || n != 11 {
		t.Fatalf("at %v after %d ticks", s.Elapsed(), n)
	}
}

func TestTimerResetStop(t *testing.T) {
	s := NewSim()
	var fired []time.Duration
	tm := s.NewTimer(func() { fired = append(fired, s.Elapsed()) })
	if _, ok := tm.When(); ok || tm.Stop() {
		t.Fatal("new timer is scheduled")
	}
	tm.Reset(Epoch().Add(5 * time.Second))
	tm.Reset(Epoch().Add(2 * time.Second)) // earlier
	if w, ok := tm.When(); !ok || !w.Equal(Epoch().Add(2*time.Second)) {
		t.Fatalf("When = %v, %v", w, ok)
	}
	s.RunFor(3 * time.Second)
	tm.Reset(Epoch().Add(10 * time.Second))
	tm.Reset(Epoch().Add(20 * time.Second)) // later
	s.RunFor(15 * time.Second)
	if !tm.Stop() || tm.Stop() {
		t.Fatal("Stop of a scheduled timer")
	}
	s.RunFor(time.Minute)
	if !slices.Equal(fired, []time.Duration{2 * time.Second}) {
		t.Fatalf("fired at %v", fired)
	}
	tm.Reset(Epoch()) // in the past: fires now
	s.RunFor(0)
	if len(fired) != 2 || fired[1] != s.Elapsed() {
		t.Fatalf("fired at %v, now %v", fired, s.Elapsed())
	}
}

// TestTimerHeapRandomized moves and cancels many timers at random and
// checks that they fire in (time, last reset) order, each at its time.
func TestTimerHeapRandomized(t *testing.T) {
	s := NewSim()
	rng := rand.New(rand.NewPCG(1, 2))
	type rec struct {
		id int
		at time.Duration
	}
	var fired []rec
	timers := make([]*Timer, 200)
	want := make(map[int]time.Duration)
	order := make(map[int]int) // id -> sequence of its last reset
	seq := 0
	for i := range timers {
		timers[i] = s.NewTimer(func() { fired = append(fired, rec{i, s.Elapsed()}) })
	}
	for range 5000 {
		i := rng.IntN(len(timers))
		if rng.IntN(4) == 0 {
			timers[i].Stop()
			delete(want, i)
			continue
		}
		at := time.Duration(rng.IntN(50)) * time.Millisecond
		if old, ok := want[i]; !ok || old != at {
			order[i] = seq
			seq++
		}
		timers[i].Reset(Epoch().Add(at))
		want[i] = at
	}
	s.RunFor(time.Second)
	if len(fired) != len(want) {
		t.Fatalf("%d fired, want %d", len(fired), len(want))
	}
	for k, f := range fired {
		if want[f.id] != f.at {
			t.Fatalf("timer %d fired at %v, want %v", f.id, f.at, want[f.id])
		}
		if k > 0 {
			p := fired[k-1]
			if p.at > f.at || (p.at == f.at && order[p.id] > order[f.id]) {
				t.Fatalf("timer %d (%v) fired before %d (%v)", p.id, p.at, f.id, f.at)
			}
		}
	}
}

func TestSimNestedRunPanics(t *testing.T) {
	s := NewSim()
	var got any
	s.After(time.Second, func() {
		defer func() { got = recover() }()
		s.RunFor(time.Second)
	})
	s.RunFor(time.Minute)
	if got == nil {
		t.Fatal("Run from an event did not panic")
	}
	if s.Elapsed() != time.Minute {
		t.Fatalf("clock %v", s.Elapsed())
	}
}
