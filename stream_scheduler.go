package quic

import "math/bits"

// incrementalQuantum is how many bytes (of STREAM frames) an incremental
// stream sends in its turn before the next stream of its urgency takes
// over; also the turn of the non-incremental and the incremental streams
// of one urgency when both kinds are present. RFC 9218, Section 10: "a
// client might benefit more from receiving a portion of all these
// resources rather than the entirety of a single resource"; 16 KiB is a
// dozen packets, small against a window, large enough that switching
// costs nothing measurable.
const incrementalQuantum = 16 << 10

// The lists a stream can be on besides its place among the sendable
// streams, each linked through schedNode.links.
const (
	listRing       = iota // the incremental streams of one urgency, in turn order
	listRetransmit        // streams with lost data to send again
	listControl           // streams with control frames that may be due
	listConnBlock         // sendable streams whose new data waits for MAX_DATA
	numStreamLists
)

// Where a sendable stream waits (schedNode.where).
const (
	schedNone      = iota
	schedHeap      // among the non-incremental streams of its urgency
	schedRing      // among the incremental streams of its urgency
	schedConnBlock // new data held by the connection's flow control
)

// schedNode is a stream's place in its connection's streamScheduler. The
// connection goroutine's alone.
type schedNode struct {
	prio    Priority // the priority the stream is queued with
	where   uint8
	heapIdx int // index in its urgency's heap, when where == schedHeap
	turn    int // bytes left in the stream's turn (incremental)
	links   [numStreamLists]listLink
}

type listLink struct {
	prev, next *stream
	in         bool
}

// streamList is an intrusive doubly linked list of streams through
// schedNode.links[k]: push, remove and pop are O(1) and allocate nothing.
type streamList struct {
	head, tail *stream
	n          int
	k          uint8
}

func (l *streamList) has(s *stream) bool { return s.sched.links[l.k].in }

func (l *streamList) pushBack(s *stream) {
	ln := &s.sched.links[l.k]
	if ln.in {
		return
	}
	ln.in, ln.prev, ln.next = true, l.tail, nil
	if l.tail != nil {
		l.tail.sched.links[l.k].next = s
	} else {
		l.head = s
	}
	l.tail = s
	l.n++
}

func (l *streamList) remove(s *stream) {
	ln := &s.sched.links[l.k]
	if !ln.in {
		return
	}
	if ln.prev != nil {
		ln.prev.sched.links[l.k].next = ln.next
	} else {
		l.head = ln.next
	}
	if ln.next != nil {
		ln.next.sched.links[l.k].prev = ln.prev
	} else {
		l.tail = ln.prev
	}
	*ln = listLink{}
	l.n--
}

// urgencyLevel holds the sendable streams of one urgency: the
// non-incremental ones in a min-heap by stream ID, the incremental ones
// in a ring in turn order. incTurn says which kind has the current turn
// when both are present, and turn the bytes left in it.
type urgencyLevel struct {
	heap    []*stream
	ring    streamList
	incTurn bool
	turn    int
}

func (l *urgencyLevel) empty() bool { return len(l.heap) == 0 && l.ring.n == 0 }

// streamScheduler decides which stream sends next (see Priority). It
// belongs to the connection goroutine, which owns every field, including
// the streams' schedNodes.
//
// Costs, for n sendable streams: picking the stream for the next frame is
// O(1) (a bit scan for the most urgent level with streams, then the top of
// its heap or the head of its ring); a non-incremental stream that keeps
// sending stays at the top of its heap at no cost; adding, removing or
// re-prioritizing a non-incremental stream is O(log n), an incremental
// one O(1); an incremental stream's turn ends in O(1). No operation scans
// the streams, and none allocates once the heaps have grown to the
// number of streams (their arrays are kept).
//
// Besides the sendable streams, it keeps three lists so that a packet
// never walks streams with nothing for it: streams with lost data
// (served before any new data), streams whose control frames may be due,
// and sendable streams whose new data waits for the connection's credit
// (they return to their urgency on MAX_DATA, once per blocking, not per
// packet).
type streamScheduler struct {
	levels [urgencyLevels]urgencyLevel
	active uint8 // bit u set when levels[u] is not empty
	n      int   // streams in the levels and connBlocked

	retransmit  streamList
	control     streamList
	connBlocked streamList
}

func (q *streamScheduler) init() {
	for u := range q.levels {
		q.levels[u].ring.k = listRing
	}
	q.retransmit.k = listRetransmit
	q.control.k = listControl
	q.connBlocked.k = listConnBlock
}

// len returns the number of sendable streams, those waiting for the
// connection's credit included.
func (q *streamScheduler) len() int {
	if q == nil {
		return 0
	}
	return q.n
}

// empty reports whether no stream is queued anywhere.
func (q *streamScheduler) empty() bool {
	return q.n == 0 && q.retransmit.n == 0 && q.control.n == 0 && q.connBlocked.n == 0
}

// push makes s sendable at the priority it is queued with.
func (q *streamScheduler) push(s *stream) {
	if s.sched.where != schedNone {
		return
	}
	q.n++
	q.place(s)
}

func (q *streamScheduler) place(s *stream) {
	u := s.sched.prio.Urgency
	l := &q.levels[u]
	if s.sched.prio.Incremental {
		s.sched.where = schedRing
		s.sched.turn = incrementalQuantum
		l.ring.pushBack(s)
	} else {
		s.sched.where = schedHeap
		s.sched.heapIdx = len(l.heap)
		l.heap = append(l.heap, s)
		heapUp(l.heap, s.sched.heapIdx)
	}
	q.active |= 1 << u
}

// remove takes s from the sendable streams.
func (q *streamScheduler) remove(s *stream) {
	if s.sched.where == schedNone {
		return
	}
	q.unplace(s)
	q.n--
}

func (q *streamScheduler) unplace(s *stream) {
	u := s.sched.prio.Urgency
	l := &q.levels[u]
	switch s.sched.where {
	case schedRing:
		l.ring.remove(s)
	case schedHeap:
		i, last := s.sched.heapIdx, len(l.heap)-1
		if i != last {
			l.heap[i] = l.heap[last]
			l.heap[i].sched.heapIdx = i
		}
		l.heap[last] = nil
		l.heap = l.heap[:last]
		if i != last {
			heapFix(l.heap, i)
		}
	case schedConnBlock:
		q.connBlocked.remove(s)
	}
	s.sched.where = schedNone
	if l.empty() {
		q.active &^= 1 << u
		l.incTurn, l.turn = false, 0
	}
}

// setPriority moves s to priority p: O(log n).
func (q *streamScheduler) setPriority(s *stream, p Priority) {
	if s.sched.prio == p {
		return
	}
	if s.sched.where == schedHeap || s.sched.where == schedRing {
		q.unplace(s)
		s.sched.prio = p
		q.place(s)
		return
	}
	s.sched.prio = p
}

// next returns the stream whose data goes next, or nil: the most urgent
// level's stream of the kind whose turn it is, the lowest stream ID of the
// non-incremental ones or the head of the incremental ring.
func (q *streamScheduler) next() *stream {
	if q.active == 0 {
		return nil
	}
	l := &q.levels[bits.TrailingZeros8(q.active)]
	switch {
	case len(l.heap) == 0:
		return l.ring.head
	case l.ring.n == 0:
		return l.heap[0]
	case l.incTurn:
		return l.ring.head
	default:
		return l.heap[0]
	}
}

// sent charges n bytes sent to s, which next returned: an incremental
// stream whose turn is used up goes to the back of its ring, and where
// both kinds share the level, the other kind takes the next turn.
func (q *streamScheduler) sent(s *stream, n int) {
	l := &q.levels[s.sched.prio.Urgency]
	if s.sched.where == schedRing {
		if s.sched.turn -= n; s.sched.turn <= 0 {
			s.sched.turn = incrementalQuantum
			if l.ring.n > 1 {
				l.ring.remove(s)
				l.ring.pushBack(s)
			}
		}
	}
	if len(l.heap) > 0 && l.ring.n > 0 {
		// "It is RECOMMENDED that servers avoid such starvation where
		// possible" (RFC 9218, Section 10): neither kind waits for the
		// other's end.
		if l.turn -= n; l.turn <= 0 {
			l.turn = incrementalQuantum
			l.incTurn = !l.incTurn
		}
	}
}

// blockOnConn moves sendable s, whose new data the connection's flow
// control holds, out of its level until unblockConn.
func (q *streamScheduler) blockOnConn(s *stream) {
	if s.sched.where == schedHeap || s.sched.where == schedRing {
		q.unplace(s)
		s.sched.where = schedConnBlock
		q.connBlocked.pushBack(s)
	}
}

// unblockConn returns the streams waiting for the connection's credit to
// their levels. O(k log n) for k such streams, once per MAX_DATA that
// raised the limit while they waited.
func (q *streamScheduler) unblockConn() {
	for s := q.connBlocked.head; s != nil; s = q.connBlocked.head {
		q.connBlocked.remove(s)
		s.sched.where = schedNone
		q.place(s)
	}
}

// appendAll appends every sendable stream to dst, for the rare walks over
// them all (keep-alive, rejected 0-RTT): O(n).
func (q *streamScheduler) appendAll(dst []*stream) []*stream {
	if q == nil {
		return dst
	}
	for u := range q.levels {
		l := &q.levels[u]
		dst = append(dst, l.heap...)
		for s := l.ring.head; s != nil; s = s.sched.links[listRing].next {
			dst = append(dst, s)
		}
	}
	for s := q.connBlocked.head; s != nil; s = s.sched.links[listConnBlock].next {
		dst = append(dst, s)
	}
	return dst
}

// heapUp and heapFix keep h a min-heap by stream ID, updating heapIdx.
func heapUp(h []*stream, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].id <= h[i].id {
			return
		}
		heapSwap(h, i, p)
		i = p
	}
}

func heapFix(h []*stream, i int) {
	if i > 0 && h[(i-1)/2].id > h[i].id {
		heapUp(h, i)
		return
	}
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h[r].id < h[c].id {
			c = r
		}
		if h[i].id <= h[c].id {
			return
		}
		heapSwap(h, i, c)
		i = c
	}
}

func heapSwap(h []*stream, i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].sched.heapIdx = i
	h[j].sched.heapIdx = j
}
