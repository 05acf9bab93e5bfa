package netsim

import "time"

// A Timer calls a function at a simulated time. Unlike At, a Timer can be
// moved and cancelled, and rescheduling it does not allocate, which makes
// it the building block for deadlines that change on every packet. The
// Network uses one per endpoint.
type Timer struct {
	s   *Sim
	fn  func()
	at  int64
	idx int // index in the Sim's heap, -1 when not scheduled
}

// NewTimer returns a Timer that calls fn when it fires. It is not
// scheduled until Reset.
func (s *Sim) NewTimer(fn func()) *Timer {
	return &Timer{s: s, fn: fn, idx: -1}
}

// Reset schedules the timer to fire at t (at Now if t is earlier),
// replacing any earlier schedule. Resetting to the time it is already
// scheduled for keeps its place among events of the same time.
func (t *Timer) Reset(at time.Time) { t.reset(t.s.clamp(at)) }

func (t *Timer) reset(at int64) {
	if t.idx >= 0 {
		if t.at == at {
			return
		}
		e := &t.s.events.h[t.idx]
		e.at = at
		e.seq = t.s.seq
		t.s.seq++
		t.s.events.fix(t.idx)
	} else {
		t.s.push(simEvent{at: at, target: t, idx: &t.idx})
	}
	t.at = at
}

// Stop cancels the timer and reports whether it was scheduled.
func (t *Timer) Stop() bool {
	if t.idx < 0 {
		return false
	}
	t.s.events.remove(t.idx)
	return true
}

// When returns the time the timer is scheduled for, and false if it is
// not scheduled.
func (t *Timer) When() (time.Time, bool) {
	if t.idx < 0 {
		return time.Time{}, false
	}
	return simEpoch.Add(time.Duration(t.at)), true
}

func (t *Timer) simFire(*Datagram) { t.fn() }
