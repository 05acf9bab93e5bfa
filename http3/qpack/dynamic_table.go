package qpack

// The dynamic table (RFC 9204, Section 3.2), shared by the encoder and the
// decoder, and the encoder's bookkeeping of what the decoder has
// acknowledged (Sections 2.1.1, 2.1.2 and 2.1.4).

// entryOverhead is the per-entry overhead of Section 3.2.1: "The size of an
// entry is the sum of its name's length in bytes, its value's length in
// bytes, and 32 additional bytes."
const entryOverhead = 32

func entrySize(name, value string) uint64 {
	return uint64(len(name)) + uint64(len(value)) + entryOverhead
}

type dynEntry struct {
	name, value string
	// refs counts the unacknowledged field sections whose smallest
	// referenced absolute index is this entry (encoder side only). Because
	// eviction is first-in, first-out, an entry can be evicted exactly when
	// no outstanding section references it or anything older, which is when
	// its own count is zero and every older entry is gone.
	refs int32
	// size caches entrySize(name, value).
	size uint32
	// invalid records what DecoderConfig.ValidName and ValidValue refused
	// when the entry was inserted (decoder side only).
	invalid uint8
}

// dynEntry.invalid bits.
const (
	invalidName uint8 = 1 << iota
	invalidValue
)

// dynamicTable is a first-in, first-out list of entries addressed by
// absolute index (Section 3.2.4): "The first entry inserted has an absolute
// index of 0; indices increase by one with each insertion."
//
// The live entries are ents[head:]; ents[head] has absolute index dropped.
// Evicted slots at the front are reclaimed by sliding the live entries down
// when the slice is full, so once the table has reached its largest entry
// count, inserting allocates nothing.
type dynamicTable struct {
	ents     []dynEntry
	head     int
	dropped  uint64 // count of evicted entries: the absolute index of the oldest
	size     uint64 // Section 3.2.1
	capacity uint64 // Section 3.2.2
}

// insertCount is the total number of insertions (the decoder's "Insert
// Count"; the encoder's next absolute index).
func (t *dynamicTable) insertCount() uint64 {
	return t.dropped + uint64(len(t.ents)-t.head)
}

// numEntries returns the number of live entries.
func (t *dynamicTable) numEntries() int { return len(t.ents) - t.head }

// entry returns the live entry with absolute index abs, or nil if it was
// evicted or not yet inserted.
func (t *dynamicTable) entry(abs uint64) *dynEntry {
	if abs < t.dropped || abs >= t.insertCount() {
		return nil
	}
	return &t.ents[t.head+int(abs-t.dropped)]
}

// evictOldest drops the oldest entry.
func (t *dynamicTable) evictOldest() {
	e := &t.ents[t.head]
	t.size -= uint64(e.size)
	*e = dynEntry{} // let the strings be collected
	t.head++
	t.dropped++
	if t.head == len(t.ents) {
		t.ents = t.ents[:0]
		t.head = 0
	}
}

// evictTo evicts oldest entries until the size is at most limit.
func (t *dynamicTable) evictTo(limit uint64) {
	for t.size > limit {
		t.evictOldest()
	}
}

// insert adds an entry, first evicting "entries ... from the end of the
// dynamic table until the size of the dynamic table is less than or equal to
// (table capacity - size of new entry)" (Section 3.2.2). The caller has
// checked that the entry fits the capacity. It returns the absolute index.
func (t *dynamicTable) insert(name, value string) uint64 {
	size := entrySize(name, value)
	t.evictTo(t.capacity - size)
	if len(t.ents) == cap(t.ents) && t.head > 0 {
		n := copy(t.ents, t.ents[t.head:])
		clear(t.ents[n:])
		t.ents = t.ents[:n]
		t.head = 0
	}
	t.ents = append(t.ents, dynEntry{name: name, value: value, size: uint32(size)})
	t.size += size
	return t.insertCount() - 1
}

// setCapacity changes the capacity, evicting entries to fit (Section 3.2.2:
// "Whenever the dynamic table capacity is reduced by the encoder, entries
// are evicted from the end of the dynamic table until the size of the
// dynamic table is less than or equal to the new table capacity.").
func (t *dynamicTable) setCapacity(c uint64) {
	t.capacity = c
	t.evictTo(c)
}

// encoderTable is the encoder's copy of the dynamic table plus what it knows
// of the decoder's progress.
//
// The outstanding field sections are kept by stream, and those that could
// block (Required Insert Count above the Known Received Count) also in a
// heap by Required Insert Count, so that every operation on them costs the
// same however many are outstanding: adding a section, a Section
// Acknowledgment or a Stream Cancellation (in the number of sections of
// that stream), an Insert Count Increment (in the number of sections it
// unblocks, times the heap's logarithm), and the count of streams that
// could be blocked, which is kept as it changes.
type encoderTable struct {
	dynamicTable

	// knownReceived is the Known Received Count (Section 2.1.4): "the total
	// number of dynamic table insertions and duplications acknowledged by
	// the decoder". It changes only through setKnownReceived.
	knownReceived uint64

	// streams holds, by stream, the field sections with dynamic table
	// references that the decoder has neither acknowledged nor cancelled.
	// "An encoder that uses the dynamic table has to keep track of each
	// dynamic table entry referenced by each field section until those
	// representations are acknowledged by the decoder" (Section 2.1.1).
	streams     map[uint64]*streamSections
	numSections int            // sections in streams
	numBlocking int            // streams with a section in blocking
	blocking    []*sectionRefs // sections with ric > knownReceived: a min-heap by ric

	freeStreams  []*streamSections // recycled, so that a warm table allocates nothing
	freeSections []*sectionRefs

	// visited counts the section records examined, for tests of the
	// bookkeeping's cost.
	visited int
}

// sectionRefs records one unacknowledged field section: its stream, its
// Required Insert Count (one more than its largest reference) and its
// smallest reference, which pins that entry and every newer one.
type sectionRefs struct {
	stream  uint64
	ric     uint64
	minRef  uint64
	heapIdx int // index in encoderTable.blocking; -1 if not there
}

// streamSections are the outstanding sections of one stream.
type streamSections struct {
	sections []*sectionRefs // oldest first
	blocking int            // how many of them are in encoderTable.blocking
}

// canFit reports whether the oldest entries can be evicted to make room
// for an entry of the given size without evicting an entry that is not
// evictable (Section 2.1.1): "Once the insertion of a dynamic table entry has
// been acknowledged and there are no outstanding references to the entry in
// unacknowledged representations, the entry becomes evictable." Entries at
// or above pinned are referenced by the field section being encoded and are
// not evictable either.
func (t *encoderTable) canFit(size, pinned uint64) bool {
	if size > t.capacity {
		return false
	}
	free := t.capacity - t.size
	abs := t.dropped
	for i := t.head; free < size; i++ {
		e := &t.ents[i]
		if abs >= t.knownReceived || abs >= pinned || e.refs != 0 {
			return false
		}
		free += uint64(e.size)
		abs++
	}
	return true
}

// drainingIndex returns the smallest absolute index the encoder will still
// emit new references to (Section 2.1.1.1). Entries older than it are
// "draining": the encoder stops referencing them so that their references
// reach zero and they can be evicted. Here an entry drains once the entries
// inserted after it fill three quarters of the capacity.
func (t *encoderTable) drainingIndex() uint64 {
	limit := t.capacity - t.capacity/4
	var newer uint64
	abs := t.insertCount()
	for i := len(t.ents) - 1; i >= t.head; i-- {
		if newer >= limit {
			return abs
		}
		newer += uint64(t.ents[i].size)
		abs--
	}
	return abs
}

// addSection records a field section sent on stream with the given Required
// Insert Count and smallest referenced absolute index.
func (t *encoderTable) addSection(stream, ric, minRef uint64) {
	t.entry(minRef).refs++
	ss := t.streams[stream]
	if ss == nil {
		if n := len(t.freeStreams); n > 0 {
			ss = t.freeStreams[n-1]
			t.freeStreams = t.freeStreams[:n-1]
		} else {
			ss = &streamSections{}
		}
		if t.streams == nil {
			t.streams = make(map[uint64]*streamSections)
		}
		t.streams[stream] = ss
	}
	var s *sectionRefs
	if n := len(t.freeSections); n > 0 {
		s = t.freeSections[n-1]
		t.freeSections = t.freeSections[:n-1]
	} else {
		s = &sectionRefs{}
	}
	*s = sectionRefs{stream: stream, ric: ric, minRef: minRef, heapIdx: -1}
	ss.sections = append(ss.sections, s)
	t.numSections++
	if ric > t.knownReceived {
		t.heapPush(s)
		t.blockingAdded(ss)
	}
}

// blockingAdded and blockingRemoved count a section of ss that starts or
// stops being able to block.
func (t *encoderTable) blockingAdded(ss *streamSections) {
	ss.blocking++
	if ss.blocking == 1 {
		t.numBlocking++
	}
}

func (t *encoderTable) blockingRemoved(ss *streamSections) {
	ss.blocking--
	if ss.blocking == 0 {
		t.numBlocking--
	}
}

// removeSection forgets section i of ss, and ss itself (stream's) once it
// has none left.
func (t *encoderTable) removeSection(stream uint64, ss *streamSections, i int) {
	s := ss.sections[i]
	t.visited++
	if e := t.entry(s.minRef); e != nil {
		e.refs--
	}
	if s.heapIdx >= 0 {
		t.heapRemove(s.heapIdx)
		t.blockingRemoved(ss)
	}
	copy(ss.sections[i:], ss.sections[i+1:])
	ss.sections[len(ss.sections)-1] = nil
	ss.sections = ss.sections[:len(ss.sections)-1]
	t.numSections--
	t.freeSections = append(t.freeSections, s)
	if len(ss.sections) == 0 {
		delete(t.streams, stream)
		t.freeStreams = append(t.freeStreams, ss)
	}
}

// setKnownReceived raises the Known Received Count to k: the sections
// whose Required Insert Count it reaches can no longer block.
func (t *encoderTable) setKnownReceived(k uint64) {
	t.knownReceived = k
	for len(t.blocking) > 0 && t.blocking[0].ric <= k {
		s := t.blocking[0]
		t.visited++
		t.heapRemove(0)
		t.blockingRemoved(t.streams[s.stream])
	}
}

// ackSection handles a Section Acknowledgment (Section 4.4.1): "The encoder
// interprets each Section Acknowledgment instruction as acknowledging the
// earliest unacknowledged field section containing dynamic table references
// sent on the given stream" (Section 2.2.2.1). It reports false if there is
// none.
func (t *encoderTable) ackSection(stream uint64) bool {
	ss := t.streams[stream]
	if ss == nil {
		return false
	}
	ric := ss.sections[0].ric
	t.removeSection(stream, ss, 0)
	// "If the Required Insert Count of the acknowledged field section is
	// greater than the current Known Received Count, the Known Received
	// Count is updated to that Required Insert Count value."
	// (Section 2.1.4)
	if ric > t.knownReceived {
		t.setKnownReceived(ric)
	}
	return true
}

// cancelStream handles a Stream Cancellation (Section 4.4.2): "all
// references to the dynamic table on that stream are no longer
// outstanding."
func (t *encoderTable) cancelStream(stream uint64) {
	ss := t.streams[stream]
	if ss == nil {
		return
	}
	for n := len(ss.sections); n > 0; n-- {
		t.removeSection(stream, ss, n-1)
	}
}

// blockedStreams counts the streams that could be blocked at the decoder:
// those with an unacknowledged field section whose Required Insert Count is
// above the Known Received Count (Section 2.1.2).
func (t *encoderTable) blockedStreams() int { return t.numBlocking }

// streamBlocking reports whether stream already counts as potentially
// blocked, so that further blocking references on it cost nothing.
func (t *encoderTable) streamBlocking(stream uint64) bool {
	ss := t.streams[stream]
	return ss != nil && ss.blocking > 0
}

// The blocking heap: a binary min-heap by Required Insert Count whose
// sections know their index.

func (t *encoderTable) heapPush(s *sectionRefs) {
	s.heapIdx = len(t.blocking)
	t.blocking = append(t.blocking, s)
	t.heapUp(s.heapIdx)
}

// heapRemove removes the section at index i.
func (t *encoderTable) heapRemove(i int) {
	h := t.blocking
	last := len(h) - 1
	h[i].heapIdx = -1
	if i != last {
		h[i] = h[last]
		h[i].heapIdx = i
	}
	h[last] = nil
	t.blocking = h[:last]
	if i != last {
		t.heapDown(i)
		t.heapUp(i)
	}
}

func (t *encoderTable) heapUp(i int) {
	h := t.blocking
	for i > 0 {
		p := (i - 1) / 2
		if h[p].ric <= h[i].ric {
			break
		}
		h[p], h[i] = h[i], h[p]
		h[p].heapIdx, h[i].heapIdx = p, i
		i = p
	}
}

func (t *encoderTable) heapDown(i int) {
	h := t.blocking
	for {
		m := i
		if l := 2*i + 1; l < len(h) && h[l].ric < h[m].ric {
			m = l
		}
		if r := 2*i + 2; r < len(h) && h[r].ric < h[m].ric {
			m = r
		}
		if m == i {
			return
		}
		h[m], h[i] = h[i], h[m]
		h[m].heapIdx, h[i].heapIdx = m, i
		i = m
	}
}
