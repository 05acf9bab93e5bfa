package linkem

import "time"

// lineEntry is a packet in the delay line, due at at. seq breaks ties so
// that packets due at the same time leave in the order they came.
type lineEntry struct {
	at  time.Time
	seq uint64
	p   *Packet
}

// delayLine is a min-heap of packets by due time. Packets that keep their
// order are pushed in due order, so most pushes cost one comparison.
type delayLine struct {
	h []lineEntry
}

func (d *delayLine) len() int { return len(d.h) }

func (d *delayLine) less(i, j int) bool {
	a, b := &d.h[i], &d.h[j]
	if a.at.Equal(b.at) {
		return a.seq < b.seq
	}
	return a.at.Before(b.at)
}

func (d *delayLine) push(e lineEntry) {
	d.h = append(d.h, e)
	i := len(d.h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !d.less(i, parent) {
			break
		}
		d.h[i], d.h[parent] = d.h[parent], d.h[i]
		i = parent
	}
}

func (d *delayLine) peek() (lineEntry, bool) {
	if len(d.h) == 0 {
		return lineEntry{}, false
	}
	return d.h[0], true
}

func (d *delayLine) pop() {
	n := len(d.h) - 1
	d.h[0] = d.h[n]
	d.h[n] = lineEntry{}
	d.h = d.h[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && d.less(l, m) {
			m = l
		}
		if r < n && d.less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		d.h[i], d.h[m] = d.h[m], d.h[i]
		i = m
	}
}
