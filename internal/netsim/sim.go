package netsim

import (
	"fmt"
	"time"
)

// simEpoch is the simulated time at which every Sim starts.
var simEpoch = time.Unix(0, 0).UTC()

// Epoch returns the simulated time at which every Sim starts: the Unix
// epoch, 1970-01-01 00:00:00 UTC. It is not the zero time.Time, so a zero
// time can keep meaning "no deadline".
func Epoch() time.Time { return simEpoch }

// simMaxEventsPerInstant bounds the number of events processed without the
// clock advancing. Reaching it means an endpoint keeps asking to be woken
// at a deadline that has already passed; the Sim panics rather than spin.
const simMaxEventsPerInstant = 1 << 24

// A Sim is a simulated clock and a discrete-event scheduler. Events are
// processed in order of their time and, for equal times, in the order they
// were scheduled, so every run with the same inputs is identical.
//
// Nothing in a Sim reads the real clock or starts goroutines. A Sim, and
// the Network, Links and endpoints driven by it, must be used from one
// goroutine only.
type Sim struct {
	now       int64 // nanoseconds since Epoch
	seq       uint64
	events    simHeap
	stopped   bool
	running   bool
	processed uint64
	instant   int // events processed at the current now
}

// NewSim returns a Sim whose clock reads Epoch() and that has nothing
// scheduled.
func NewSim() *Sim { return &Sim{} }

// Now returns the current simulated time.
func (s *Sim) Now() time.Time { return simEpoch.Add(time.Duration(s.now)) }

// Elapsed returns the simulated time passed since Epoch().
func (s *Sim) Elapsed() time.Duration { return time.Duration(s.now) }

// Processed returns the number of events processed so far.
func (s *Sim) Processed() uint64 { return s.processed }

// Pending returns the number of scheduled events.
func (s *Sim) Pending() int { return len(s.events.h) }

// At schedules fn to run at simulated time t; a t before Now runs fn at
// Now, after the events already scheduled for Now. fn may schedule events,
// change links and routes, and wake endpoints.
func (s *Sim) At(t time.Time, fn func()) {
	s.push(simEvent{at: s.clamp(t), target: simFunc(fn)})
}

// After schedules fn to run d after Now (at Now if d <= 0).
func (s *Sim) After(d time.Duration, fn func()) {
	s.push(simEvent{at: s.now + max(int64(d), 0), target: simFunc(fn)})
}

// Run processes the events scheduled at or before until, in order, then
// sets the clock to until. It returns early, with the clock at the time
// of the last processed event, when an event calls Stop. A until before
// Now processes nothing and leaves the clock alone. Run, RunFor and
// RunUntil must not be called from an event; they panic if they are.
func (s *Sim) Run(until time.Time) {
	s.run(s.ns(until), nil)
}

// RunFor runs the simulation for d of simulated time: Run(Now().Add(d)).
func (s *Sim) RunFor(d time.Duration) {
	s.run(s.now+max(int64(d), 0), nil)
}

// RunUntil runs the simulation until done returns true or the clock
// reaches limit, whichever comes first, and reports whether done returned
// true. done is called before the first event and after every event; when
// it returns true the clock stays at the time of the last event.
func (s *Sim) RunUntil(done func() bool, limit time.Time) bool {
	if done() {
		return true
	}
	return s.run(s.ns(limit), done)
}

// Stop makes the running Run, RunFor or RunUntil return after the current
// event. It has no effect on later calls.
func (s *Sim) Stop() { s.stopped = true }

func (s *Sim) run(limit int64, done func() bool) bool {
	if s.running {
		panic("netsim: Run called from an event")
	}
	s.running = true
	defer func() { s.running = false }()
	s.stopped = false
	for len(s.events.h) > 0 && !s.stopped && s.events.h[0].at <= limit {
		e := s.events.pop()
		if e.at != s.now {
			s.now = e.at
			s.instant = 0
		} else if s.instant++; s.instant > simMaxEventsPerInstant {
			panic(fmt.Sprintf("netsim: more than %d events at %v without the clock advancing (an endpoint's NextDeadline stays in the past?)", simMaxEventsPerInstant, time.Duration(s.now)))
		}
		s.processed++
		e.target.simFire(e.d)
		if done != nil && done() {
			return true
		}
	}
	if !s.stopped && limit > s.now {
		s.now = limit
	}
	return false
}

// push schedules e, giving it the next insertion sequence number.
func (s *Sim) push(e simEvent) {
	e.seq = s.seq
	s.seq++
	s.events.push(e)
}

// ns converts t to nanoseconds since Epoch, saturating at the limits of
// time.Duration.
func (s *Sim) ns(t time.Time) int64 { return int64(t.Sub(simEpoch)) }

// clamp converts t like ns, but never earlier than now.
func (s *Sim) clamp(t time.Time) int64 { return max(s.ns(t), s.now) }
