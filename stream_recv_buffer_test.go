package quic

import (
	"bytes"
	"encoding/binary"
	"errors"
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
	b := newRecvBuffer(0, 0)
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
	b := newRecvBuffer(0, 0)
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

func TestRecvBufferOverlaps(t *testing.T) {
	b := newRecvBuffer(0, 0)
	recvTestPush(t, &b, 10, 10, 10) // [10,20)
	recvTestPush(t, &b, 30, 10, 10) // [30,40)
	recvTestPush(t, &b, 50, 10, 10) // [50,60)
	if b.readable() != 0 {
		t.Fatalf("readable %d with a gap at the read offset", b.readable())
	}
	// [15,55) covers two holes of 10 bytes each, and overlaps three intervals.
	recvTestPush(t, &b, 15, 40, 20)
	if !bufEqualSets(b.ranges, bufRangeSet{{10, 60}}) {
		t.Fatalf("ranges %v", b.ranges)
	}
	// [0,70) fills [0,10) and [60,70).
	recvTestPush(t, &b, 0, 70, 20)
	recvTestRead(t, &b, 70)
	if b.highest() != 70 {
		t.Fatalf("highest %d", b.highest())
	}
}

func TestRecvBufferOutOfOrder(t *testing.T) {
	b := newRecvBuffer(0, 0)
	for off := uint64(900); ; off -= 100 {
		recvTestPush(t, &b, off, 100, 100)
		if off == 0 {
			break
		}
		if b.readable() != 0 {
			t.Fatalf("readable before the first byte arrived")
		}
		if b.highest() != 1000 {
			t.Fatalf("highest %d", b.highest())
		}
	}
	recvTestRead(t, &b, 1000)
}

// TestRecvBufferWrapAround streams data through a ring much smaller than
// the stream, with reordering, and checks peek's two slices at the wrap.
func TestRecvBufferWrapAround(t *testing.T) {
	const capacity = 1000 // not a power of two
	b := newRecvBuffer(capacity, 0)
	sawWrap := false
	for off := uint64(0); off < 50_000; off += 700 {
		// Second half first, then the first half; both under the window.
		recvTestPush(t, &b, off+350, 350, 350)
		recvTestPush(t, &b, off, 350, 350)
		s1, s2 := b.peek()
		if len(s1)+len(s2) != 700 {
			t.Fatalf("peek returned %d+%d bytes", len(s1), len(s2))
		}
		if len(s2) > 0 {
			sawWrap = true
		}
		if !bytes.Equal(append(append([]byte{}, s1...), s2...), bufTestData(nil, off, 700)) {
			t.Fatalf("peek at %d: wrong data", off)
		}
		b.consume(300)
		recvTestRead(t, &b, 400)
		if len(b.buf) != capacity {
			t.Fatalf("ring of %d bytes, want the cap %d", len(b.buf), capacity)
		}
	}
	if !sawWrap {
		t.Fatal("data never wrapped around the ring")
	}
}

// TestRecvBufferGrowth grows the ring while it holds wrapped, out-of-order
// data, and checks every byte is where it belongs afterwards.
func TestRecvBufferGrowth(t *testing.T) {
	b := newRecvBuffer(1<<20, 0)
	recvTestPush(t, &b, 0, 3000, 3000)
	if len(b.buf) != 4096 { // the minimum doubled until 3000 bytes fit
		t.Fatalf("first allocation %d bytes, want 4096", len(b.buf))
	}
	recvTestRead(t, &b, 2500)
	// Wraps at 4096: [3000,5000) partly at the start of the ring.
	recvTestPush(t, &b, 3000, 2000, 2000)
	recvTestPush(t, &b, 5500, 1000, 1000) // out of order, wraps too
	if len(b.buf) != 4096 {
		t.Fatalf("grew to %d before needed", len(b.buf))
	}
	// Needs 20000-2500 bytes: doubles 4096 -> 32768.
	recvTestPush(t, &b, 19000, 1000, 1000)
	if len(b.buf) != 32768 {
		t.Fatalf("grew to %d, want 32768", len(b.buf))
	}
	recvTestPush(t, &b, 0, 20000, 20000-2500-500-2000-1000-1000)
	recvTestRead(t, &b, 20000-2500)
}

// RFC 9000, Section 21.7: "Mitigations could consist of avoiding
// overcommitting memory, limiting the size of tracking data structures, ..."
func TestRecvBufferTooManyGaps(t *testing.T) {
	b := newRecvBuffer(0, 2)
	recvTestPush(t, &b, 0, 10, 10)  // readable, not a gap
	recvTestPush(t, &b, 20, 10, 10) // gap 1
	recvTestPush(t, &b, 40, 10, 10) // gap 2
	stored, err := b.push(60, bufTestData(nil, 60, 10))
	if !errors.Is(err, errTooManyGaps) || stored != 0 {
		t.Fatalf("third gap: stored %d, err %v; want errTooManyGaps", stored, err)
	}
	if b.highest() != 50 || len(b.ranges) != 3 {
		t.Fatalf("rejected push changed the buffer: highest %d ranges %v", b.highest(), b.ranges)
	}
	// Pushes that extend or merge intervals are still accepted.
	recvTestPush(t, &b, 45, 10, 5)
	recvTestPush(t, &b, 10, 10, 10) // [0,30) now readable: one gap left
	recvTestPush(t, &b, 70, 10, 10) // so a new one fits
	recvTestRead(t, &b, 30)
	// The interval at the read offset does not count: after the read,
	// [40,55) and [70,80) are the two gaps.
	if _, err := b.push(90, bufTestData(nil, 90, 5)); !errors.Is(err, errTooManyGaps) {
		t.Fatalf("got %v, want errTooManyGaps", err)
	}
	recvTestPush(t, &b, 30, 10, 10)
	recvTestPush(t, &b, 90, 5, 5)
}

func TestRecvBufferCapacityLimit(t *testing.T) {
	b := newRecvBuffer(5000, 0)
	recvTestPush(t, &b, 4000, 1000, 1000) // ends exactly at the cap
	if len(b.buf) != 5000 {
		t.Fatalf("ring %d, want clamped to 5000", len(b.buf))
	}
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
}

func TestRecvBufferEmptyPushAndHighest(t *testing.T) {
	b := newRecvBuffer(0, 0)
	// A STREAM frame with only FIN at offset 500: nothing stored, but it
	// counts for highest (the final size checks of RFC 9000, Section 4.5).
	recvTestPush(t, &b, 500, 0, 0)
	if b.highest() != 500 || b.buf != nil {
		t.Fatalf("highest %d, buf allocated %v", b.highest(), b.buf != nil)
	}
	recvTestPush(t, &b, 0, 100, 100)
	if b.highest() != 500 {
		t.Fatalf("highest went down to %d", b.highest())
	}
}

func TestRecvBufferPeekConsume(t *testing.T) {
	b := newRecvBuffer(0, 0)
	if s1, s2 := b.peek(); s1 != nil || s2 != nil {
		t.Fatal("peek on empty buffer")
	}
	recvTestPush(t, &b, 0, 100, 100)
	s1, _ := b.peek()
	if !bytes.Equal(s1, bufTestData(nil, 0, 100)) {
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
	b := newRecvBuffer(0, 0)
	if b.shrink() {
		t.Fatal("shrink of an unallocated buffer")
	}
	recvTestPush(t, &b, 0, 100, 100)
	recvTestPush(t, &b, 200, 100, 100)
	recvTestRead(t, &b, 100)
	if b.shrink() {
		t.Fatal("shrink released a ring holding data")
	}
	recvTestPush(t, &b, 100, 100, 100)
	recvTestRead(t, &b, 200)
	if !b.shrink() || b.buf != nil {
		t.Fatal("shrink kept the ring of an empty buffer")
	}
	recvTestPush(t, &b, 300, 100, 100)
	recvTestRead(t, &b, 100)
}

func TestRecvBufferReset(t *testing.T) {
	b := newRecvBuffer(0, 0)
	recvTestPush(t, &b, 0, 100, 100)
	recvTestPush(t, &b, 200, 100, 100)
	recvTestRead(t, &b, 50)
	b.reset()
	if b.buf != nil || b.ranges != nil || b.readable() != 0 {
		t.Fatal("reset kept memory or data")
	}
	if b.readOffset() != 50 || b.highest() != 300 {
		t.Fatalf("reset changed readOffset %d or highest %d", b.readOffset(), b.highest())
	}
	// Usable again (a CRYPTO stream is never reused, but nothing breaks).
	recvTestPush(t, &b, 0, 100, 50)
	recvTestRead(t, &b, 50)
}

func TestRecvBufferReadAlloc(t *testing.T) {
	b := newRecvBuffer(1<<16, 0)
	frame := bufTestData(nil, 0, 1200)
	p := make([]byte, 4000)
	var off uint64
	// Warm up: grow the ring and the interval set.
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
		s1, s2 := b.peek()
		b.consume(min(len(s1)+len(s2), 100))
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
	buf := newRecvBuffer(1<<20, 0)
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

// FuzzRecvBuffer pushes random ranges of the test stream, reads and peeks at
// random, and compares with a model that records which offsets arrived.
//
// Input: 2 bytes capacity, 1 byte gap bound, then 5-byte operations.
func FuzzRecvBuffer(f *testing.F) {
	f.Add([]byte("\x00\x10\x04" + "\x00\x00\x00\x00\x04" + "\x05\x00\x10\x00\x00"))
	f.Add([]byte("\xe8\x03\x02" + "\x01\x00\x20\x00\x01" + "\x02\x00\x00\x00\x02" + "\x83\x01\x00\x03\x00" + "\x05\xff\xff\x00\x00" + "\x06\x00\x10\x00\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 {
			return
		}
		maxCap := 1 + int(binary.LittleEndian.Uint16(in))%8192
		maxGaps := 1 + int(in[2])%8
		in = in[3:]
		b := newRecvBuffer(maxCap, maxGaps)
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
		// modelGaps counts the intervals that do not start at readOff.
		modelGaps := func(w []bool) int {
			n := 0
			for k := 1; k < len(w); k++ {
				if w[k] && !w[k-1] {
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
				} else if modelGaps(win2) > maxGaps {
					wantErr = errTooManyGaps
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
				s1, s2 := b.peek()
				if len(s1)+len(s2) != modelReadable() {
					t.Fatalf("peek returned %d+%d bytes, want %d", len(s1), len(s2), modelReadable())
				}
				for k, c := range append(s1[:len(s1):len(s1)], s2...) {
					if c != bufTestByte(readOff+uint64(k)) {
						t.Fatalf("peek: wrong byte at offset %d", readOff+uint64(k))
					}
				}
				n := int(a) % (len(s1) + len(s2) + 1)
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
			if b.readOffset() != readOff || b.readable() != modelReadable() || b.highest() != high {
				t.Fatalf("readOffset %d readable %d highest %d; model %d %d %d",
					b.readOffset(), b.readable(), b.highest(), readOff, modelReadable(), high)
			}
			if len(b.buf) > maxCap {
				t.Fatalf("ring of %d bytes exceeds the cap %d", len(b.buf), maxCap)
			}
			bufCheckSet(t, b.ranges)
		}
	})
}

// inOrder hands out in place the data that continues the stream while
// nothing is buffered, and skip advances past it without a ring; once
// data waits in the ring, everything goes through push.
func TestRecvBufferInOrderInPlace(t *testing.T) {
	b := newRecvBuffer(0, 0)
	data := bufTestData(nil, 0, 100)
	next, ok := b.inOrder(0, data)
	if !ok || !bytes.Equal(next, data) {
		t.Fatalf("inOrder(0) = %d bytes, %v; want the 100 bytes", len(next), ok)
	}
	b.skip(len(next))
	if b.readOffset() != 100 || b.highest() != 100 || b.buf != nil {
		t.Fatalf("after skip: offset %d, highest %d, ring of %d bytes", b.readOffset(), b.highest(), len(b.buf))
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
	// the ring is empty again.
	if _, ok = b.inOrder(120, bufTestData(nil, 120, 10)); ok {
		t.Fatal("inOrder accepted data after a gap")
	}
	recvTestPush(t, &b, 120, 10, 10)
	if _, ok = b.inOrder(100, bufTestData(nil, 100, 20)); ok {
		t.Fatal("inOrder accepted data while the ring holds some")
	}
}
