package quic

import "github.com/quicstack/quic/internal/freelist"

// Storage of recvBuffer and sendBuffer: stream data lives in chunks of
// bufChunkSize bytes, taken from a pool shared by all connections when a
// byte first needs one and given back as soon as none of its bytes is
// needed (read, or acknowledged). The memory of a buffer follows the data
// it holds, within a chunk at each end of the data, whatever the offsets:
// one byte at offset 524,287 takes one chunk, not 512 KiB.
//
// The byte at stream offset x lives in chunk number x / bufChunkSize, at
// x % bufChunkSize. A chunkTable maps the numbers of a window of
// consecutive chunks, which the owning buffer bounds (the flow-control
// window, the send buffer's limit), to the chunks: a slice of pointers,
// 8 bytes per 3,968 bytes of window rounded up to a power of two (64 KiB
// for a 16 MiB one at most), made when data first arrives and dropped
// when the buffer is empty and the stream or the connection goes quiet
// (shrink).
//
// A buffer that holds a lot already (a receive buffer whose reader is
// behind) takes its next chunks in groups of 16: one allocation of 64 KiB
// for a block of 16 consecutive chunk numbers, owned by that buffer and
// given back when the last of them is read. A growing backlog then costs
// an allocation per 64 KiB rather than per chunk, which keeps the pools'
// growth to a few allocations per MB when a reader falls behind; and a
// group never outlives the data of the one buffer that holds it, as a
// slab shared by buffers would.
//
// Chunks are not cleared on the way back to the pool: a buffer exposes
// only bytes it stored since it took the chunk (received intervals, data
// written and not yet acknowledged), which the fuzz tests check with
// chunks that other tests' data went through.

const (
	// bufChunkSize is the number of data bytes in a chunk: with the
	// interval bookkeeping of receive buffers, a chunk fills a 4 KiB
	// allocation.
	bufChunkSize = 3968
	// bufChunkMaxRanges is the number of disjoint intervals of received
	// bytes a chunk tracks: the bound on fragmentation (recvBuffer).
	bufChunkMaxRanges = 31
)

// chunkRange is the half-open interval [start, end) of positions in a
// chunk.
type chunkRange struct{ start, end uint16 }

// bufChunk is a chunk of stream data. n and ranges are used by receive
// buffers only: the intervals of the chunk's positions that hold received
// bytes not yet read, sorted, disjoint and non-adjacent. grouped marks the
// chunks of a chunkGroup, which never go to chunkPool on their own.
type bufChunk struct {
	data    [bufChunkSize]byte
	n       uint8
	grouped bool
	ranges  [bufChunkMaxRanges]chunkRange
}

// chunkGroupLen is the number of chunks of a chunkGroup.
const chunkGroupLen = 16

// chunkGroup is the storage of a block of chunkGroupLen consecutive chunk
// numbers, allocated at once (64 KiB).
type chunkGroup [chunkGroupLen]bufChunk

// groupPool and chunkPool are free lists, not sync.Pools: a sync.Pool
// empties at every garbage collection and rebuilds its per-P rings
// afterwards, which cost about 30 allocations per collection for the
// hundreds of chunks a bulk transfer cycles through (TestBulkTransferAllocs).
// A free list gives back at a collection only the chunks no buffer took
// since the previous one. Bounds: 16 MiB each.
var (
	groupPool = freelist.New(256, func() *chunkGroup {
		g := new(chunkGroup)
		for i := range g {
			g[i].grouped = true
		}
		return g
	})
	chunkPool = freelist.New(4096, func() *bufChunk { return new(bufChunk) })
)

// getChunk returns a chunk from the pool with no ranges. Its data bytes
// are whatever the last user left.
func getChunk() *bufChunk {
	c := chunkPool.Get()
	c.n = 0
	return c
}

// putChunk gives c back to the pool; the caller holds no slice of it any
// more.
func putChunk(c *bufChunk) { chunkPool.Put(c) }

// span returns the indexes [i, j) of c's ranges that overlap or touch
// [s, e): those an add of [s, e) merges.
func (c *bufChunk) span(s, e uint16) (i, j int) {
	n := int(c.n)
	for i < n && c.ranges[i].end < s {
		i++
	}
	j = i
	for j < n && c.ranges[j].start <= e {
		j++
	}
	return i, j
}

// rangesAfterAdd returns how many ranges c would have after add(s, e, ...).
func (c *bufChunk) rangesAfterAdd(s, e uint16) int {
	i, j := c.span(s, e)
	return int(c.n) - (j - i) + 1
}

// add copies the bytes of src, which belong at positions [s, e), into the
// positions that do not hold received bytes yet, merges [s, e) into the
// ranges and returns the number of bytes that were new. The caller checked
// with rangesAfterAdd that the ranges fit.
func (c *bufChunk) add(s, e uint16, src []byte) (stored int) {
	i, j := c.span(s, e)
	cur := s
	for k := i; k < j; k++ {
		r := c.ranges[k]
		if r.start > cur {
			stored += copy(c.data[cur:r.start], src[cur-s:])
		}
		cur = max(cur, r.end)
	}
	if cur < e {
		stored += copy(c.data[cur:e], src[cur-s:])
	}
	merged := chunkRange{s, e}
	if i < j {
		merged.start = min(s, c.ranges[i].start)
		merged.end = max(e, c.ranges[j-1].end)
	}
	// Replace ranges [i, j) by merged.
	n := int(c.n)
	switch d := 1 - (j - i); {
	case d > 0: // insert
		copy(c.ranges[i+1:n+1], c.ranges[i:n])
	case d < 0: // remove j-i-1
		copy(c.ranges[i+1:], c.ranges[j:n])
	}
	c.ranges[i] = merged
	c.n = uint8(n + 1 - (j - i))
	return stored
}

// extend copies the start of src to positions [s, ...) up to the end of
// the chunk, and adds them to the ranges as the end of the last range,
// which ends at s, or as the only one: the in-order case of add
// (recvBuffer.appendInOrder checked that the ranges are so). It returns
// the number of bytes copied.
func (c *bufChunk) extend(s uint16, src []byte) int {
	n := copy(c.data[s:], src)
	if c.n == 0 {
		c.ranges[0], c.n = chunkRange{s, s + uint16(n)}, 1
	} else {
		c.ranges[c.n-1].end = s + uint16(n)
	}
	return n
}

// find returns the range that contains position x, if any.
func (c *bufChunk) find(x uint16) (chunkRange, bool) {
	for k := range int(c.n) {
		r := c.ranges[k]
		if r.end > x {
			return r, r.start <= x
		}
	}
	return chunkRange{}, false
}

// trimFront removes the positions below x from the ranges.
func (c *bufChunk) trimFront(x uint16) {
	k := 0
	for k < int(c.n) && c.ranges[k].end <= x {
		k++
	}
	if k > 0 {
		copy(c.ranges[:], c.ranges[k:c.n])
		c.n -= uint8(k)
	}
	if c.n > 0 && c.ranges[0].start < x {
		c.ranges[0].start = x
	}
}

// chunkTable maps the numbers of a window of consecutive chunks to the
// chunks (nil where no byte of the chunk is held): chunk number j is in
// slots[j % len(slots)], len(slots) a power of two. The owner keeps every
// chunk it holds in a window [lo, lo+len(slots)) and calls fit before it
// adds a chunk beyond it; fit keeps the whole blocks of chunkGroupLen
// numbers the window touches in the table, so that groups, one per block,
// map to groups[block % len(groups)] without two live blocks colliding.
type chunkTable struct {
	slots  []*bufChunk
	groups []groupSlot // len(slots)/chunkGroupLen, once len(slots) >= 2*chunkGroupLen
}

// groupSlot is the group of one block and how many of its chunks are in
// the table.
type groupSlot struct {
	g    *chunkGroup
	live int
}

// get returns chunk j, or nil; j must be in the owner's window or nil
// slots must not alias it (the owner checks).
func (t *chunkTable) get(j uint64) *bufChunk {
	if len(t.slots) == 0 {
		return nil
	}
	return t.slots[j&uint64(len(t.slots)-1)]
}

// slot returns the slot of chunk j, which fit made room for.
func (t *chunkTable) slot(j uint64) **bufChunk {
	return &t.slots[j&uint64(len(t.slots)-1)]
}

// group returns the group slot of chunk j's block, or nil without groups.
func (t *chunkTable) group(j uint64) *groupSlot {
	if len(t.groups) == 0 {
		return nil
	}
	return &t.groups[(j/chunkGroupLen)&uint64(len(t.groups)-1)]
}

// take returns chunk j, taking one if its slot is empty: from its block's
// group if the block has one or, if grouped and no chunk of the block is
// held, from a new group; from chunkPool otherwise. fit made room for j.
func (t *chunkTable) take(j uint64, grouped bool) *bufChunk {
	p := t.slot(j)
	if *p != nil {
		return *p
	}
	var c *bufChunk
	if gs := t.group(j); gs != nil {
		if gs.g == nil && grouped && t.blockEmpty(j) {
			gs.g = groupPool.Get()
		}
		if gs.g != nil {
			c = &gs.g[j%chunkGroupLen]
			c.n = 0
			gs.live++
		}
	}
	if c == nil {
		c = getChunk()
	}
	*p = c
	return c
}

// blockEmpty reports whether no chunk of j's block is in the table.
func (t *chunkTable) blockEmpty(j uint64) bool {
	b := j - j%chunkGroupLen
	for k := b; k < b+chunkGroupLen; k++ {
		if t.get(k) != nil {
			return false
		}
	}
	return true
}

// fit makes room for the chunk numbers [lo, hi], keeping the chunks held,
// all of which are numbered [lo, lo+len(slots)) (and at most hi): the
// table grows by doubling, to a power of two that covers the whole blocks
// [lo, hi] touches; hi-lo < maxSlots.
func (t *chunkTable) fit(lo, hi uint64, maxSlots int) {
	need := hi - lo + 1
	if need > uint64(maxSlots) {
		panic("quic: chunk window beyond the buffer's bound")
	}
	if blocks := hi/chunkGroupLen - lo/chunkGroupLen + 1; blocks > 1 {
		need = max(need, blocks*chunkGroupLen)
	}
	if need <= uint64(len(t.slots)) {
		return
	}
	n := uint64(max(len(t.slots), 2))
	for n < need {
		n *= 2
	}
	ns := make([]*bufChunk, n)
	for j := lo; j < lo+uint64(len(t.slots)); j++ {
		if c := t.get(j); c != nil {
			ns[j&(n-1)] = c
		}
	}
	var ng []groupSlot
	if n >= 2*chunkGroupLen {
		ng = make([]groupSlot, n/chunkGroupLen)
		// The live blocks are among the len(groups) from lo's.
		for b := lo / chunkGroupLen; b < lo/chunkGroupLen+uint64(len(t.groups)); b++ {
			if gs := t.group(b * chunkGroupLen); gs.g != nil {
				ng[b&uint64(len(ng)-1)] = *gs
			}
		}
	}
	t.slots, t.groups = ns, ng
}

// release gives chunk j, if any, back: to chunkPool, or to its group,
// which goes back to groupPool with its last chunk.
func (t *chunkTable) release(j uint64) {
	if len(t.slots) == 0 {
		return
	}
	p := t.slot(j)
	c := *p
	if c == nil {
		return
	}
	*p = nil
	if !c.grouped {
		putChunk(c)
		return
	}
	gs := t.group(j)
	if gs.live--; gs.live == 0 {
		groupPool.Put(gs.g)
		gs.g = nil
	}
}

// releaseAll gives every chunk back and drops the table.
func (t *chunkTable) releaseAll() {
	for i, c := range t.slots {
		if c != nil && !c.grouped {
			putChunk(c)
		}
		t.slots[i] = nil
	}
	for _, gs := range t.groups {
		if gs.g != nil {
			groupPool.Put(gs.g)
		}
	}
	t.slots, t.groups = nil, nil
}

// drop drops the table of a buffer that holds no chunk.
func (t *chunkTable) drop() { t.slots, t.groups = nil, nil }

// tableBytes returns the bytes the table itself takes.
func (t *chunkTable) tableBytes() int { return 8*cap(t.slots) + 16*cap(t.groups) }

// memory returns the bytes the table and its chunks take.
func (t *chunkTable) memory() int {
	n := t.tableBytes()
	for _, c := range t.slots {
		if c != nil && !c.grouped {
			n += 4096
		}
	}
	for _, gs := range t.groups {
		if gs.g != nil {
			n += chunkGroupLen * 4096
		}
	}
	return n
}

// maxChunkSlots returns the number of slots a window of span bytes, at
// any offset, needs.
func maxChunkSlots(span int) int {
	return (span+bufChunkSize-1)/bufChunkSize + 1
}
