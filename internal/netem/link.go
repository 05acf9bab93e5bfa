package netem

import "time"

// link models one direction of the emulated link: a serialiser at
// cfg.Bandwidth fed by a tail-drop FIFO of cfg.Queue datagrams, then a
// propagation delay. It is pure: callers pass the time.
type link struct {
	cfg LinkConfig
	// departures holds, in order, the times at which the datagrams still
	// in the queue or on the serialiser finish serialising.
	departures []time.Time
	// busyUntil is when the serialiser finishes the last admitted
	// datagram.
	busyUntil time.Time
}

// admit decides the fate of a datagram of size bytes arriving at now. It
// returns when the datagram leaves the far end of the link (before
// jitter), or ok false if the queue is full (tail drop).
func (l *link) admit(now time.Time, size int) (deliverAt time.Time, ok bool) {
	if l.cfg.Bandwidth <= 0 {
		return now.Add(l.cfg.Delay), true
	}
	// Datagrams whose serialisation has ended have left the queue.
	n := 0
	for n < len(l.departures) && !l.departures[n].After(now) {
		n++
	}
	l.departures = append(l.departures[:0], l.departures[n:]...)
	// The datagram on the serialiser (the first one still departing)
	// does not count against the queue, like the simulator's one-packet
	// device queue behind its 25-packet queue discipline.
	if l.cfg.Queue > 0 && len(l.departures) > l.cfg.Queue {
		return time.Time{}, false
	}
	start := now
	if l.busyUntil.After(start) {
		start = l.busyUntil
	}
	tx := time.Duration(int64(size) * 8 * int64(time.Second) / l.cfg.Bandwidth)
	l.busyUntil = start.Add(tx)
	l.departures = append(l.departures, l.busyUntil)
	return l.busyUntil.Add(l.cfg.Delay), true
}

// queued returns how many datagrams are waiting or serialising at now.
func (l *link) queued(now time.Time) int {
	n := 0
	for _, d := range l.departures {
		if d.After(now) {
			n++
		}
	}
	return n
}
