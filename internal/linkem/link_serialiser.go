package linkem

import "time"

// serialiser is the rate limiter of a link: a FIFO queue of bytes in front
// of a transmitter that sends Rate bits per second. Since the queue is
// FIFO and the rate known when a packet arrives, the time each packet
// finishes serialising is fixed at arrival; the serialiser keeps those
// times to know, at each arrival, how many bytes still wait.
type serialiser struct {
	busyUntil time.Time // when the last admitted packet finishes
	carry     int64     // bit-nanoseconds of rounding carried over
	ring      []serEntry
	head, n   int // the queue: n entries from ring[head]
	bytes     int // bytes of the n entries
	max       int // most entries at once
}

// serEntry is one packet in the queue or on the transmitter.
type serEntry struct {
	start, finish time.Time
	size          int
}

// init sizes the queue for at most max packets.
func (s *serialiser) init(max int) {
	s.ring = make([]serEntry, 0, min(max, 1024))
	s.ring = s.ring[:cap(s.ring)]
	s.max = max
}

// admit decides the fate of a packet of size bytes arriving at now on a
// link of rate bits per second with a queue of queue bytes. It returns
// when the packet has left the transmitter, or ok false if it was dropped:
// full reports that the serialiser holds its maximum number of packets,
// otherwise the queue had no room for size more bytes.
func (s *serialiser) admit(now time.Time, size int, rate int64, queue int) (leave time.Time, ok, full bool) {
	// Packets that have finished have left.
	for s.n > 0 && !s.ring[s.head].finish.After(now) {
		s.bytes -= s.ring[s.head].size
		s.head = (s.head + 1) % len(s.ring)
		s.n--
	}
	// The packet on the transmitter does not count against the queue.
	waiting := s.bytes
	if s.n > 0 && !s.ring[s.head].start.After(now) {
		waiting -= s.ring[s.head].size
	}
	if waiting+size > queue {
		return time.Time{}, false, false
	}
	if s.n == s.max {
		return time.Time{}, false, true
	}
	start := now
	if s.busyUntil.After(start) {
		start = s.busyUntil
	}
	var tx time.Duration
	tx, s.carry = txTime(size, rate, s.carry)
	s.busyUntil = start.Add(tx)
	s.push(serEntry{start: start, finish: s.busyUntil, size: size})
	return s.busyUntil, true, false
}

// push appends e to the queue, growing the ring when it is full.
func (s *serialiser) push(e serEntry) {
	if s.n == len(s.ring) {
		grown := make([]serEntry, max(2*len(s.ring), 16))
		for i := range s.n {
			grown[i] = s.ring[(s.head+i)%len(s.ring)]
		}
		s.ring, s.head = grown, 0
	}
	s.ring[(s.head+s.n)%len(s.ring)] = e
	s.n++
	s.bytes += e.size
}
