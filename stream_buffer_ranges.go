package quic

// A sorted set of byte intervals, for the acknowledged and lost data of a
// sendBuffer.

// bufRange is the half-open interval of stream offsets [start, end).
type bufRange struct {
	start, end uint64
}

// bufRangeSet is a sorted set of disjoint, non-adjacent intervals: for
// consecutive elements a, b it holds a.end < b.start. Adjacent or
// overlapping intervals are merged when added.
//
// The slice grows with append and is then reused, so a set whose size stays
// under its high-water mark does not allocate. Callers bound its size.
type bufRangeSet []bufRange

// search returns the index of the first interval whose end is at least x,
// which is the first interval that overlaps or touches an interval starting
// at x; len(s) if there is none.
func (s bufRangeSet) search(x uint64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].end < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// span returns the indexes [i, j) of the intervals that overlap or touch
// [start, end): they are the ones an add of [start, end) merges.
func (s bufRangeSet) span(start, end uint64) (i, j int) {
	i = s.search(start)
	j = i
	for j < len(s) && s[j].start <= end {
		j++
	}
	return i, j
}

// add inserts [start, end), merging it with the intervals it overlaps or
// touches. An empty interval is ignored.
func (s *bufRangeSet) add(start, end uint64) {
	if start >= end {
		return
	}
	r := *s
	// Fast path: append at the end, the common case of in-order data.
	if n := len(r); n == 0 || r[n-1].end < start {
		*s = append(r, bufRange{start, end})
		return
	}
	i, j := r.span(start, end)
	if i == j {
		r = append(r, bufRange{})
		copy(r[i+1:], r[i:])
		r[i] = bufRange{start, end}
		*s = r
		return
	}
	r[i].start = min(r[i].start, start)
	r[i].end = max(r[j-1].end, end)
	*s = append(r[:i+1], r[j:]...)
}

// remove deletes [start, end) from the set, splitting an interval that
// contains it.
func (s *bufRangeSet) remove(start, end uint64) {
	if start >= end {
		return
	}
	r := *s
	// First interval with end > start: the first one that overlaps.
	i := r.search(start + 1)
	if i == len(r) || r[i].start >= end {
		return
	}
	if r[i].start < start && r[i].end > end {
		// Split r[i] into two.
		r = append(r, bufRange{})
		copy(r[i+1:], r[i:])
		r[i].end = start
		r[i+1].start = end
		*s = r
		return
	}
	if r[i].start < start {
		r[i].end = start
		i++
	}
	j := i
	for j < len(r) && r[j].end <= end {
		j++
	}
	if j < len(r) && r[j].start < end {
		r[j].start = end
	}
	*s = append(r[:i], r[j:]...)
}

// popFront removes the first interval.
func (s *bufRangeSet) popFront() {
	r := *s
	*s = r[:copy(r, r[1:])]
}
