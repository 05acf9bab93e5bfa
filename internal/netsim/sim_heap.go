package netsim

// A simTarget is something an event is delivered to: a Link (a datagram
// arriving at its far end), a Timer, or a function scheduled with At.
type simTarget interface {
	simFire(d *Datagram)
}

// simFunc makes a function scheduled with At a simTarget. A func value is
// pointer-shaped, so the conversion to an interface does not allocate.
type simFunc func()

func (f simFunc) simFire(*Datagram) { f() }

// A simEvent is one scheduled event. Events are ordered by at, then by seq
// (the order of scheduling), which makes ties deterministic.
type simEvent struct {
	at     int64 // nanoseconds since Epoch
	seq    uint64
	target simTarget
	d      *Datagram // passed to target
	idx    *int      // if non-nil, kept equal to the event's index in the heap, -1 once removed
}

func simLess(a, b *simEvent) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// simHeap is a binary min-heap of events by value: no per-event allocation
// once the slice has grown to the largest number of pending events.
type simHeap struct {
	h []simEvent
}

func (q *simHeap) push(e simEvent) {
	q.h = append(q.h, e)
	q.up(len(q.h) - 1)
}

// pop removes and returns the earliest event. The heap must not be empty.
func (q *simHeap) pop() simEvent {
	return q.remove(0)
}

// remove removes and returns the event at index i.
func (q *simHeap) remove(i int) simEvent {
	h := q.h
	e := h[i]
	n := len(h) - 1
	if i != n {
		h[i] = h[n]
	}
	h[n] = simEvent{}
	q.h = h[:n]
	if i != n {
		q.fix(i)
	}
	if e.idx != nil {
		*e.idx = -1
	}
	return e
}

// fix restores the heap order after the event at index i changed.
func (q *simHeap) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

func (q *simHeap) up(i int) {
	h := q.h
	e := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !simLess(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		if h[i].idx != nil {
			*h[i].idx = i
		}
		i = p
	}
	h[i] = e
	if e.idx != nil {
		*e.idx = i
	}
}

// down moves the event at i toward the leaves and reports whether it moved.
func (q *simHeap) down(i0 int) bool {
	h := q.h
	n := len(h)
	i := i0
	e := h[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && simLess(&h[r], &h[c]) {
			c = r
		}
		if !simLess(&h[c], &e) {
			break
		}
		h[i] = h[c]
		if h[i].idx != nil {
			*h[i].idx = i
		}
		i = c
	}
	h[i] = e
	if e.idx != nil {
		*e.idx = i
	}
	return i > i0
}
