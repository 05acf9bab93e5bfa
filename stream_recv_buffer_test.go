package quic

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// recvTestPush pushes bytes [off, off+n) of the test stream and checks the
// number of new bytes stored.
func recvTestPush(t *testing.T, b *recvBuffer, off uint64, n, wantStored int) {
	t.Helper()
	stored, err := b.push(off, bufTestData(nil, off, n))
	if err != nil {
		t.Fatalf("push(%d, %d bytes): %v", off, n, err)
	}
	if stored != wantStored {
		t.Fatalf("push(%d, %d bytes) stored %d, want %d", off, n, stored, wantStored)
	}
}

// recvTestRead reads n bytes and checks they are the test stream at the read
// offset.
func recvTestRead(t *testing.T, b *recvBuffer, n int) {
	t.Helper()
	off := b.readOffset()
	p := make([]byte, n)
	got := b.read(p)
	if got != n {
		t.Fatalf("read at %d returned %d bytes, want %d", off, got, n)
	}
	if want := bufTestData(nil, off, n); !bytes.Equal(p[:n], want) {
		t.Fatalf("read at %d returned wrong data", off)
	}
}

func TestRecvBufferInOrder(t *testing.T) {
	b := newRecvBuffer(0)
	if b.readable() != 0 || b.read(make([]byte, 10)) != 0 {
		t.Fatal("empty buffer has readable data")
	}
	recvTestPush(t, &b, 0, 100, 100)
	recvTestPush(t, &b, 100, 50, 50)
	if b.readable() != 150 || b.highest() != 150 {
		t.Fatalf("readable %d highest %d, want 150 150", b.readable(), b.highest())
	}
	recvTestRead(t, &b, 150)
	if b.readOffset() != 150 || b.readable() != 0 {
		t.Fatalf("readOffset %d readable %d", b.readOffset(), b.readable())
	}
}

// RFC 9000, Section 2.2: "An endpoint could receive data for a stream at the
// same stream offset multiple times. Data that has already been received can
// be discarded."
func TestRecvBufferDuplicates(t *testing.T) {
	b := newRecvBuffer(0)
	recvTestPush(t, &b, 0, 100, 100)
	recvTestPush(t, &b, 0, 100, 0)
	recvTestPush(t, &b, 10, 20, 0)
	recvTestRead(t, &b, 60)
	// Already read: ignored entirely, or trimmed to the unread part.
	recvTestPush(t, &b, 0, 50, 0)
	recvTestPush(t, &b, 0, 100, 0)
	recvTestPush(t, &b, 0, 120, 20)
	if b.readable() != 60 {
		t.Fatalf("readable %d, want 60", b.readable())
	}
	recvTestRead(t, &b, 60)
}

// recvTestRanges returns the received intervals of b, in stream offsets.
func recvTestRanges(b *recvBuffer) bufRangeSet {
	var s bufRangeSet
	if b.end <= b.off {
		return s
	}
	for j := b.off / bufChunkSize; j <= (b.end-1)/bufChunkSize; j++ {
		c := b.chunks.get(j)
		if c == nil {
			continue
		}
		for _, r := range c.ranges[:c.n] {
			s.add(j*bufChunkSize+uint64(r.start), j*bufChunkSize+uint64(r.end))
		}
	}
	return s
}

func TestRecvBufferOverlaps(t *testing.T) {
	b := newRecvBuffer(0)
	recvTestPush(t, &b, 10, 10, 10) // [10,20)
	recvTestPush(t, &b, 30, 10, 10) // [30,40)
	recvTestPush(t, &b, 50, 10, 10) // [50,60)
	if b.readable() != 0 {
		t.Fatalf("readable %d with a gap at the read offset", b.readable())
	}
	// [15,55) covers two holes of 10 bytes each, and overlaps three intervals.
	recvTestPush(t, &b, 15, 40, 20)
	if got := recvTestRanges(&b); !bufEqualSets(got, bufRangeSet{{10, 60}}) {
		t.Fatalf("ranges %v", got)
	}
	// [0,70) fills [0,10) and [60,70).
	recvTestPush(t, &b, 0, 70, 20)
	recvTestRead(t, &b, 70)
	if b.highest() != 70 {
		t.Fatalf("highest %d", b.highest())
	}
}

func TestRecvBufferOutOfOrder(t *testing.T) {
	b := newRecvBuffer(0)
	for off := uint64(9900); ; off -= 100 {
		recvTestPush(t, &b, off, 100, 100)
		if off == 0 {
			break
		}
		if b.readable() != 0 {
			t.Fatalf("readable before the first byte arrived")
		}
		if b.highest() != 10000 {
			t.Fatalf("highest %d", b.highest())
		}
	}
	recvTestRead(t, &b, 10000)
}

// Data crossing chunk boundaries, out of order, read partly in place with
// peek and consume: peek stops at the end of a chunk, and every byte is
// where it belongs.
func TestRecvBufferAcrossChunks(t *testing.T) {
	b := newRecvBuffer(1 << 20)
	const frame = 1500 // frames straddle the 3,968-byte chunks
	for off := uint64(0); off < 200_000; off += 2 * frame {
		// Second frame first, then the first.
		recvTestPush(t, &b, off+frame, frame, frame)
		recvTestPush(t, &b, off, frame, frame)
		s := b.peek()
		chunkEnd := (b.readOffset()/bufChunkSize + 1) * bufChunkSize
		if want := min(uint64(b.readable()), chunkEnd-b.readOffset()); uint64(len(s)) != want {
			t.Fatalf("peek returned %d bytes, want %d (to the chunk's end)", len(s), want)
		}
		if !bytes.Equal(s, bufTestData(nil, b.readOffset(), len(s))) {
			t.Fatalf("peek at %d: wrong data", b.readOffset())
		}
		b.consume(min(len(s), 700))
		recvTestRead(t, &b, b.readable())
		// Everything read: no chunk is kept.
		if n := b.memory() - b.chunks.tableBytes(); n != 0 {
			t.Fatalf("drained buffer holds %d bytes of chunks", n)
		}
	}
}

// Memory follows the data held, not the offsets: one byte at the end of a
// 16 MiB window takes one chunk and a table of a pointer per chunk of the
// window; the chunks go back as they are read.
func TestRecvBufferMemoryFollowsData(t *testing.T) {
	b := newRecvBuffer(16 << 20)
	recvTestPush(t, &b, 16<<20-1, 1, 1)
	if m := b.memory(); m > 4096+24*maxChunkSlots(16<<20) {
		t.Fatalf("one byte at offset 16 MiB-1 takes %d bytes", m)
	}
	recvTestPush(t, &b, 0, 10000, 10000)
	if m := b.memory() - b.chunks.tableBytes(); m != 4*4096 { // [0,10000) in 3 chunks, and the last byte's
		t.Fatalf("%d bytes of chunks, want 4 chunks", m)
	}
	recvTestRead(t, &b, 9000)
	if m := b.memory() - b.chunks.tableBytes(); m != 2*4096 {
		t.Fatalf("after reading 9,000 bytes: %d bytes of chunks, want 2 chunks", m)
	}
	recvTestRead(t, &b, 1000)
	b.reset()
	if b.memory() != 0 || b.chunks.slots != nil {
		t.Fatalf("reset kept %d bytes", b.memory())
	}
}

// recvTestCheckGroups checks the chunk groups of t: each group's live
// count is the number of slots holding its chunks, and a group without
// one is given back.
func recvTestCheckGroups(t *testing.T, ct *chunkTable) {
	t.Helper()
	for gi, gs := range ct.groups {
		if gs.g == nil {
			if gs.live != 0 {
				t.Fatalf("group slot %d: no group, %d live chunks", gi, gs.live)
			}
			continue
		}
		n := 0
		for _, c := range ct.slots {
			for k := range gs.g {
				if c == &gs.g[k] {
					n++
				}
			}
		}
		if n == 0 || n != gs.live {
			t.Fatalf("group slot %d: %d chunks in the table, live count %d", gi, n, gs.live)
		}
	}
}

// A buffer that holds a lot takes its chunks in groups of 16, one
// allocation each, and gives every group back once its chunks are read;
// memory stays within a group of the data at each end.
func TestRecvBufferGroups(t *testing.T) {
	b := newRecvBuffer(16 << 20)
	const frame = 1200
	var off uint64
	for off < 4<<20 {
		recvTestPush(t, &b, off, frame, frame)
		off += frame
		if b.readable() > 1<<20 { // a reader far behind
			recvTestRead(t, &b, b.readable()-200<<10)
		}
		recvTestCheckGroups(t, &b.chunks)
		if m := b.memory() - b.chunks.tableBytes(); m > b.buffered()*4096/bufChunkSize+2*chunkGroupLen*4096 {
			t.Fatalf("%d bytes held in %d bytes of chunks", b.buffered(), m)
		}
	}
	groups := 0
	for _, gs := range b.chunks.groups {
		if gs.g != nil {
			groups++
		}
	}
	if groups == 0 {
		t.Fatal("no chunk groups used for a backlog of 1 MiB")
	}
	recvTestRead(t, &b, b.readable())
	recvTestCheckGroups(t, &b.chunks)
	if m := b.memory() - b.chunks.tableBytes(); m != 0 {
		t.Fatalf("drained buffer holds %d bytes of chunks", m)
	}
	// Allocations, with the pools emptied: a backlog growing to 2 MiB
	// takes a group per 16 chunks beyond the first 64 KiB, and a few
	// tables, instead of 529 chunks.
	b = newRecvBuffer(16 << 20)
	data := bufTestData(nil, 0, frame)
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for off := uint64(0); off < 2<<20; off += frame {
		if _, err := b.push(off, data); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n > 100 {
		t.Errorf("a backlog of 2 MiB took %d allocations", n)
	}
	b.reset()
}

// The bytes allocated (not taken from the pool) to store one byte at
// offset 524,287, the example: a chunk at most and a small table,
// where a single ring took 512 KiB.
func TestRecvBufferOneByteAtHighOffsetAllocs(t *testing.T) {
	var before, after runtime.MemStats
	b := newRecvBuffer(16 << 20)
	runtime.ReadMemStats(&before)
	if _, err := b.push(524_287, []byte{1}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<10 {
		t.Fatalf("storing one byte at offset 524,287 allocated %d bytes", n)
	}
	runtime.KeepAlive(&b)
}

// RFC 9000, Section 21.7: "Mitigations could consist of avoiding
// overcommitting memory, limiting the size of tracking data structures,
// ..." A chunk tracks at most bufChunkMaxRanges intervals; a push that
// would need more fails and changes nothing.
func TestRecvBufferFragmentation(t *testing.T) {
	b := newRecvBuffer(0)
	// 31 one-byte intervals at even offsets fill the first chunk's ranges.
	for k := range uint64(bufChunkMaxRanges) {
		recvTestPush(t, &b, 2*k+1, 1, 1)
	}
	stored, err := b.push(2*bufChunkMaxRanges+1, []byte{9})
	if !errors.Is(err, errRecvFragmented) || stored != 0 {
		t.Fatalf("32nd interval: stored %d, err %v; want errRecvFragmented", stored, err)
	}
	// A frame across the chunk boundary whose first part would be the
	// 32nd interval: refused whole, nothing of its second part stored.
	if _, err := b.push(bufChunkSize-5, bufTestData(nil, bufChunkSize-5, 100)); !errors.Is(err, errRecvFragmented) {
		t.Fatalf("frame across chunks: %v", err)
	}
	if b.highest() != 2*bufChunkMaxRanges || b.buffered() != bufChunkMaxRanges || b.memory()-b.chunks.tableBytes() != 4096 {
		t.Fatalf("a refused push changed the buffer: highest %d, %d bytes held", b.highest(), b.buffered())
	}
	// Pushes that extend or merge intervals are still accepted, and the
	// next chunk has its own bound.
	recvTestPush(t, &b, 2*bufChunkMaxRanges, 1, 1) // [61,63)
	recvTestPush(t, &b, bufChunkSize+1, 1, 1)
	recvTestPush(t, &b, 0, 2*bufChunkMaxRanges, bufChunkMaxRanges) // the even offsets below 62
	recvTestPush(t, &b, 100, 1, 1)                                 // fits now: [0,63) is one interval
	recvTestRead(t, &b, 2*bufChunkMaxRanges+1)
}

// Data at the read offset, or right after the readable bytes, merges with
// nothing when the readable bytes end at a chunk's end or there are none:
// it counts toward the chunk's bound like any other.
func TestRecvBufferFragmentationAtReadOffset(t *testing.T) {
	fill := func(b *recvBuffer, base uint64, n int) {
		for k := range uint64(n) {
			recvTestPush(t, b, base+2*k+2, 1, 1)
		}
	}
	// Nothing readable: [0,1) would be a 32nd interval.
	b := newRecvBuffer(0)
	fill(&b, 0, bufChunkMaxRanges)
	if _, err := b.push(0, []byte{0}); !errors.Is(err, errRecvFragmented) {
		t.Fatalf("at the read offset: %v", err)
	}
	// Readable bytes up to the end of chunk 0: [C, C+1) starts a 32nd
	// interval in chunk 1.
	b = newRecvBuffer(0)
	recvTestPush(t, &b, 0, bufChunkSize, bufChunkSize)
	fill(&b, bufChunkSize, bufChunkMaxRanges)
	if _, err := b.push(bufChunkSize, []byte{0}); !errors.Is(err, errRecvFragmented) {
		t.Fatalf("after readable bytes ending at a chunk's end: %v", err)
	}
	// Readable bytes ending inside the chunk: merged, accepted with 31
	// intervals in the chunk (the readable one and 30 beyond).
	b = newRecvBuffer(0)
	recvTestPush(t, &b, 0, 1, 1)
	fill(&b, 1, bufChunkMaxRanges-1)
	recvTestPush(t, &b, 1, 2, 2)
}

// Honest senders never reach the bound: frames of 128 bytes, each lost or
// not in the patterns the test tries (alternate, random at 50%), across a
// 256 KiB window.
func TestRecvBufferFragmentationHonest(t *testing.T) {
	const frame, win = 128, 256 << 10
	for seed := range uint64(8) {
		b := newRecvBuffer(win)
		rng := rand.New(rand.NewPCG(seed, 7))
		var lost []uint64
		for off := uint64(0); off+frame <= win; off += frame {
			drop := (seed == 0 && off/frame%2 == 0) || (seed > 0 && rng.IntN(2) == 0)
			if drop {
				lost = append(lost, off)
				continue
			}
			if _, err := b.push(off, bufTestData(nil, off, frame)); err != nil {
				t.Fatalf("seed %d: push at %d: %v", seed, off, err)
			}
		}
		for _, off := range lost {
			if _, err := b.push(off, bufTestData(nil, off, frame)); err != nil {
				t.Fatalf("seed %d: retransmission at %d: %v", seed, off, err)
			}
		}
		recvTestRead(t, &b, win)
	}
}

func TestRecvBufferCapacityLimit(t *testing.T) {
	b := newRecvBuffer(5000)
	recvTestPush(t, &b, 4000, 1000, 1000) // ends exactly at the cap
	stored, err := b.push(4500, bufTestData(nil, 4500, 501))
	if !errors.Is(err, errRecvBufferOverflow) || stored != 0 {
		t.Fatalf("beyond the cap: stored %d err %v", stored, err)
	}
	if _, err := b.push(5001, nil); !errors.Is(err, errRecvBufferOverflow) {
		t.Fatalf("empty push beyond the cap: %v", err)
	}
	recvTestPush(t, &b, 0, 4000, 4000)
	recvTestRead(t, &b, 1000)
	recvTestPush(t, &b, 5000, 1000, 1000) // the window moved with the read offset
	recvTestRead(t, &b, 5000)
	if len(b.chunks.slots) > maxChunkSlots(5000) {
		t.Fatalf("%d chunk slots for a 5000-byte window", len(b.chunks.slots))
	}
}

func TestRecvBufferEmptyPushAndHighest(t *testing.T) {
	b := newRecvBuffer(0)
	// A STREAM frame with only FIN at offset 500: nothing stored, but it
	// counts for highest (the final size checks of RFC 9000, Section 4.5).
	recvTestPush(t, &b, 500, 0, 0)
	if b.highest() != 500 || b.memory() != 0 {
		t.Fatalf("highest %d, %d bytes allocated", b.highest(), b.memory())
	}
	recvTestPush(t, &b, 0, 100, 100)
	if b.highest() != 500 {
		t.Fatalf("highest went down to %d", b.highest())
	}
}

func TestRecvBufferPeekConsume(t *testing.T) {
	b := newRecvBuffer(0)
	if s := b.peek(); s != nil {
		t.Fatal("peek on empty buffer")
	}
	recvTestPush(t, &b, 0, 100, 100)
	if !bytes.Equal(b.peek(), bufTestData(nil, 0, 100)) {
		t.Fatal("peek data")
	}
	b.consume(0)
	b.consume(40)
	recvTestRead(t, &b, 60)
	defer func() {
		if recover() == nil {
			t.Fatal("consume beyond readable did not panic")
		}
	}()
	b.consume(1)
}

func TestRecvBufferShrink(t *testing.T) {
	b := newRecvBuffer(0)
	if b.shrink() {
		t.Fatal("shrink of an unallocated buffer")
	}
	recvTestPush(t, &b, 0, 100, 100)
	recvTestPush(t, &b, 200, 100, 100)
	recvTestRead(t, &b, 100)
	if b.shrink() {
		t.Fatal("shrink released the table of a buffer holding data")
	}
	recvTestPush(t, &b, 100, 100, 100)
	recvTestRead(t, &b, 200)
	if !b.shrink() || b.memory() != 0 {
		t.Fatal("shrink kept the table of an empty buffer")
	}
	recvTestPush(t, &b, 300, 100, 100)
	recvTestRead(t, &b, 100)
}

func TestRecvBufferReset(t *testing.T) {
	b := newRecvBuffer(0)
	recvTestPush(t, &b, 0, 100, 100)
	recvTestPush(t, &b, 20000, 100, 100)
	recvTestRead(t, &b, 50)
	b.reset()
	if b.memory() != 0 || b.readable() != 0 || b.buffered() != 0 {
		t.Fatal("reset kept memory or data")
	}
	if b.readOffset() != 50 || b.highest() != 20100 {
		t.Fatalf("reset changed readOffset %d or highest %d", b.readOffset(), b.highest())
	}
	// Usable again (a CRYPTO stream is never reused, but nothing breaks).
	recvTestPush(t, &b, 0, 100, 50)
	recvTestRead(t, &b, 50)
}

func TestRecvBufferReadAlloc(t *testing.T) {
	if connIDRaceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	b := newRecvBuffer(1 << 16)
	frame := bufTestData(nil, 0, 1200)
	p := make([]byte, 4000)
	var off uint64
	// Warm up: grow the chunk table, fill the pool.
	step := func() {
		// Out of order, then the hole, then read everything.
		if _, err := b.push(off+1200, frame); err != nil {
			t.Fatal(err)
		}
		if _, err := b.push(off+2400, frame[:10]); err != nil {
			t.Fatal(err)
		}
		if _, err := b.push(off, frame); err != nil {
			t.Fatal(err)
		}
		b.consume(min(len(b.peek()), 100))
		off += 2410
		for b.read(p) > 0 {
		}
	}
	for range 10 {
		step()
	}
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Fatalf("steady state allocates %v times per step", n)
	}
}

func BenchmarkRecvBufferPushRead(b *testing.B) {
	buf := newRecvBuffer(1 << 20)
	frame := bufTestData(nil, 0, 1200)
	p := make([]byte, 16<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	var off uint64
	for i := 0; b.Loop(); i++ {
		if _, err := buf.push(off, frame); err != nil {
			b.Fatal(err)
		}
		off += uint64(len(frame))
		if i%8 == 7 { // the application reads now and then
			buf.read(p)
		}
	}
}

// recvTestPoisonPool puts chunks full of 0xee in the pool, so that a
// buffer that exposed bytes it did not store would show them.
func recvTestPoisonPool() {
	for range 4 {
		c := new(bufChunk)
		for i := range c.data {
			c.data[i] = 0xee
		}
		putChunk(c)
	}
}

// FuzzRecvBuffer pushes random ranges of the test stream, reads and peeks at
// random, and compares with a model that records which offsets arrived.
//
// Input: 2 bytes capacity, 1 byte for the grouping threshold (256-byte
// units), then 5-byte operations.
// recvTestSlotBound is the most slots the chunk table of a buffer of
// capacity maxCap may have: the chunks of any window of maxCap bytes
// (maxChunkSlots), widened by chunkTable.fit to the whole blocks of
// chunkGroupLen numbers they touch when they touch two or more, rounded
// up to a power of two.
func recvTestSlotBound(maxCap int) int {
	need := maxChunkSlots(maxCap)
	if blocks := (need+chunkGroupLen-2)/chunkGroupLen + 1; blocks > 1 {
		need = max(need, blocks*chunkGroupLen)
	}
	n := 2
	for n < need {
		n *= 2
	}
	return n
}

func FuzzRecvBuffer(f *testing.F) {
	f.Add([]byte("\x00\x10\x04" + "\x00\x00\x00\x00\x04" + "\x05\x00\x10\x00\x00"))
	f.Add([]byte("\xe8\x03\x02" + "\x01\x00\x20\x00\x01" + "\x02\x00\x00\x00\x02" + "\x83\x01\x00\x03\x00" + "\x05\xff\xff\x00\x00" + "\x06\x00\x10\x00\x00"))
	// One-byte pushes two bytes apart: the fragmentation bound.
	frag := []byte("\xff\x3f\x00")
	for k := range 40 {
		frag = append(frag, 0x00, byte(2*k+1), 0x00, 0x01, 0x00)
	}
	f.Add(append(frag, "\x05\xff\xff\x00\x00"...))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 {
			return
		}
		recvTestPoisonPool()
		maxCap := 1 + int(binary.LittleEndian.Uint16(in))%(24*bufChunkSize)
		groupAbove := int(in[2]) * 256
		in = in[3:]
		b := newRecvBuffer(maxCap)
		b.groupAbove = groupAbove
		defer b.reset()
		var (
			// The model: win[k] reports whether offset readOff+k arrived
			// (and was not discarded by reset).
			win     []bool
			readOff uint64
			high    uint64
			scratch = make([]byte, 4096)
			win2    []bool
		)
		// with returns w with offsets [from, to) marked, reusing dst, and
		// the number of offsets that were new.
		with := func(dst, w []bool, from, to uint64) ([]bool, int) {
			dst = append(dst[:0], w...)
			n := 0
			for x := max(from, readOff); x < to; x++ {
				k := int(x - readOff)
				for len(dst) <= k {
					dst = append(dst, false)
				}
				if !dst[k] {
					dst[k] = true
					n++
				}
			}
			return dst, n
		}
		modelReadable := func() int {
			n := 0
			for n < len(win) && win[n] {
				n++
			}
			return n
		}
		// modelIntervals counts the intervals of w within chunk j.
		modelIntervals := func(w []bool, j uint64) int {
			n := 0
			prev := false
			for x := max(j*bufChunkSize, readOff); x < (j+1)*bufChunkSize; x++ {
				k := int(x - readOff)
				cur := k < len(w) && w[k]
				if cur && !prev {
					n++
				}
				prev = cur
			}
			return n
		}
		modelHeld := func() int {
			n := 0
			for _, v := range win {
				if v {
					n++
				}
			}
			return n
		}
		consumed := func(n int) {
			readOff += uint64(n)
			win = win[min(n, len(win)):]
		}
		for len(in) >= 5 {
			op, a, l := in[0], uint64(binary.LittleEndian.Uint16(in[1:])), int(binary.LittleEndian.Uint16(in[3:]))
			in = in[5:]
			switch op % 8 {
			case 0, 1, 2, 3, 4:
				var off uint64
				if op&0x80 != 0 {
					off = readOff - min(readOff, a%600)
				} else {
					off = readOff + a%uint64(maxCap)
				}
				n := l % 2000
				end := off + uint64(n)
				if op%8 != 4 && end > readOff+uint64(maxCap) { // flow control
					n = int(readOff + uint64(maxCap) - off)
					end = off + uint64(n)
				}
				// What the model expects.
				var newBytes int
				win2, newBytes = with(win2, win, off, end)
				var wantErr error
				if end > readOff+uint64(maxCap) {
					wantErr = errRecvBufferOverflow
				} else if n > 0 && end > readOff {
					first, last := max(off, readOff)/bufChunkSize, (end-1)/bufChunkSize
					if modelIntervals(win2, first) > bufChunkMaxRanges || modelIntervals(win2, last) > bufChunkMaxRanges {
						wantErr = errRecvFragmented
					}
				}
				stored, err := b.push(off, bufTestData(scratch, off, n))
				if err != wantErr {
					t.Fatalf("push(%d, %d): err %v, want %v", off, n, err, wantErr)
				}
				if err != nil {
					if stored != 0 {
						t.Fatalf("failed push stored %d", stored)
					}
					break
				}
				if stored != newBytes {
					t.Fatalf("push(%d, %d) stored %d, want %d", off, n, stored, newBytes)
				}
				win, win2 = win2, win
				high = max(high, end)
			case 5:
				n := b.read(scratch[:a%3000])
				if want := min(int(a%3000), modelReadable()); n != want {
					t.Fatalf("read returned %d, want %d", n, want)
				}
				for k := 0; k < n; k++ {
					if scratch[k] != bufTestByte(readOff+uint64(k)) {
						t.Fatalf("read: wrong byte at offset %d", readOff+uint64(k))
					}
				}
				consumed(n)
			case 6:
				s := b.peek()
				chunkEnd := (readOff/bufChunkSize + 1) * bufChunkSize
				if want := min(uint64(modelReadable()), chunkEnd-readOff); uint64(len(s)) != want {
					t.Fatalf("peek returned %d bytes, want %d", len(s), want)
				}
				for k, c := range s {
					if c != bufTestByte(readOff+uint64(k)) {
						t.Fatalf("peek: wrong byte at offset %d", readOff+uint64(k))
					}
				}
				n := int(a) % (len(s) + 1)
				b.consume(n)
				consumed(n)
			case 7:
				if l%16 == 0 {
					b.reset()
					win = win[:0]
				} else if l%16 == 1 {
					b.shrink() // changes nothing visible
				}
			}
			if b.readOffset() != readOff || b.readable() != modelReadable() || b.highest() != high || b.buffered() != modelHeld() {
				t.Fatalf("readOffset %d readable %d highest %d buffered %d; model %d %d %d %d",
					b.readOffset(), b.readable(), b.highest(), b.buffered(), readOff, modelReadable(), high, modelHeld())
			}
			if bound := recvTestSlotBound(maxCap); len(b.chunks.slots) > bound {
				t.Fatalf("%d chunk slots exceed the bound %d", len(b.chunks.slots), bound)
			}
			// Memory follows the data: a chunk is held only if it holds
			// an unread byte.
			chunks := 0
			for _, c := range b.chunks.slots {
				if c != nil {
					chunks++
					if c.n == 0 {
						t.Fatal("an empty chunk is held")
					}
				}
			}
			want, lastChunk := 0, uint64(math.MaxUint64)
			for k, v := range win {
				if j := (readOff + uint64(k)) / bufChunkSize; v && j != lastChunk {
					want++
					lastChunk = j
				}
			}
			if chunks != want {
				t.Fatalf("%d chunks held, want %d", chunks, want)
			}
			bufCheckSet(t, recvTestRanges(&b))
			recvTestCheckGroups(t, &b.chunks)
		}
	})
}

// inOrder hands out in place the data that continues the stream while
// nothing is buffered, and skip advances past it without a ring; once
// data waits in the ring, everything goes through push.
func TestRecvBufferInOrderInPlace(t *testing.T) {
	b := newRecvBuffer(0)
	data := bufTestData(nil, 0, 100)
	next, ok := b.inOrder(0, data)
	if !ok || !bytes.Equal(next, data) {
		t.Fatalf("inOrder(0) = %d bytes, %v; want the 100 bytes", len(next), ok)
	}
	b.skip(len(next))
	if b.readOffset() != 100 || b.highest() != 100 || b.memory() != 0 {
		t.Fatalf("after skip: offset %d, highest %d, %d bytes of memory", b.readOffset(), b.highest(), b.memory())
	}
	// Overlapping the read offset: only the new part.
	next, ok = b.inOrder(50, bufTestData(nil, 50, 100))
	if !ok || !bytes.Equal(next, bufTestData(nil, 100, 50)) {
		t.Fatalf("inOrder(50) = %d bytes, %v; want bytes 100 to 150", len(next), ok)
	}
	// All read already.
	if next, ok = b.inOrder(10, bufTestData(nil, 10, 20)); !ok || len(next) != 0 {
		t.Fatalf("inOrder of read data = %d bytes, %v", len(next), ok)
	}
	// A gap: pushed instead; then nothing is handed out in place until
	// the buffer is empty again.
	if _, ok = b.inOrder(120, bufTestData(nil, 120, 10)); ok {
		t.Fatal("inOrder accepted data after a gap")
	}
	recvTestPush(t, &b, 120, 10, 10)
	if _, ok = b.inOrder(100, bufTestData(nil, 100, 20)); ok {
		t.Fatal("inOrder accepted data while the buffer holds some")
	}
}

// TestRecvBufferInOrderAppendMixed drives the in-order append of push
// (appendInOrder) between reads, gaps, gap fills and duplicates, with
// frames that cross chunk boundaries, and checks every byte read and the
// received intervals against a model after each step.
func TestRecvBufferInOrderAppendMixed(t *testing.T) {
	const window = 64 << 10
	rng := rand.New(rand.NewPCG(28, 1452))
	b := newRecvBuffer(window)
	b.groupAbove = 16 << 10
	defer b.reset()
	got := make([]bool, 16<<20) // offsets received and not read
	held := 0
	var next uint64 // in-order frames go here
	mark := func(off uint64, n int) (added int) {
		for k := off; k < off+uint64(n); k++ {
			if !got[k] {
				got[k] = true
				added++
			}
		}
		held += added
		return added
	}
	for step := range 4000 {
		switch r := rng.IntN(10); {
		case r < 6: // in order, as nearly every frame of a transfer
			n := 1 + rng.IntN(5000)
			if next+uint64(n)-b.readOffset() > window {
				continue
			}
			stored, err := b.push(next, bufTestData(nil, next, n))
			if err != nil {
				t.Fatalf("step %d: push(%d, %d): %v", step, next, n, err)
			}
			if want := mark(next, n); stored != want {
				t.Fatalf("step %d: push(%d, %d) stored %d, want %d", step, next, n, stored, want)
			}
			// After the frame, or after data stored beyond it that it
			// joined.
			for next += uint64(n); got[next]; next++ {
			}
		case r < 8: // ahead of a gap, or a duplicate behind next
			off := b.readOffset() + uint64(rng.IntN(20000))
			n := 1 + rng.IntN(3000)
			if off+uint64(n)-b.readOffset() > window {
				continue
			}
			if _, err := b.push(off, bufTestData(nil, off, n)); err != nil {
				continue // fragmented: nothing stored
			}
			mark(off, n)
			for next = b.readOffset(); got[next]; next++ {
			}
		default:
			if n := b.readable(); n > 0 {
				n = 1 + rng.IntN(n)
				off := b.readOffset()
				recvTestRead(t, &b, n)
				for k := off; k < off+uint64(n); k++ {
					got[k] = false
				}
				held -= n
			}
		}
		var want bufRangeSet
		for k := b.readOffset(); k < b.readOffset()+window; k++ {
			if got[k] {
				want.add(k, k+1)
			}
		}
		if have := recvTestRanges(&b); !slices.Equal(have, want) {
			t.Fatalf("step %d: ranges %v, model %v", step, have, want)
		}
		if b.buffered() != held {
			t.Fatalf("step %d: buffered %d, model %d", step, b.buffered(), held)
		}
	}
}
