package quic

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// sendTestFrame is a frame returned by nextFrame.
type sendTestFrame struct {
	off uint64
	n   int
	fin bool
}

// nextFrameData is nextFrame with the frame's data copied out.
func (b *sendBuffer) nextFrameData(maxData int) (uint64, []byte, bool, bool) {
	return b.nextFrameLimitData(maxData, math.MaxUint64)
}

// nextFrameLimitData is nextFrameLimit with the frame's data copied out.
func (b *sendBuffer) nextFrameLimitData(maxData int, maxOffset uint64) (uint64, []byte, bool, bool) {
	off, n, fin, ok := b.nextFrameLimit(maxData, maxOffset)
	if !ok {
		return off, nil, fin, ok
	}
	return off, b.appendData(nil, off, n), fin, ok
}

func sendTestWrite(t *testing.T, b *sendBuffer, n, want int) {
	t.Helper()
	off := b.writeOffset()
	if got := b.write(bufTestData(nil, off, n)); got != want {
		t.Fatalf("write(%d bytes) at %d accepted %d, want %d", n, off, got, want)
	}
}

// sendTestNext calls nextFrame and checks the result against want.
func sendTestNext(t *testing.T, b *sendBuffer, maxData int, want sendTestFrame) sendTestFrame {
	t.Helper()
	off, data, fin, ok := b.nextFrameData(maxData)
	if !ok {
		t.Fatalf("nextFrame(%d): nothing to send, want %+v", maxData, want)
	}
	got := sendTestFrame{off, len(data), fin}
	if got != want {
		t.Fatalf("nextFrame(%d) = %+v, want %+v", maxData, got, want)
	}
	if !bytes.Equal(data, bufTestData(nil, off, len(data))) {
		t.Fatalf("nextFrame(%d) at %d: wrong data", maxData, off)
	}
	return got
}

func sendTestNone(t *testing.T, b *sendBuffer) {
	t.Helper()
	if b.hasData() {
		t.Fatal("hasData with nothing to send")
	}
	if off, data, fin, ok := b.nextFrameData(1000); ok {
		t.Fatalf("nextFrame returned %d+%d fin=%v with nothing to send", off, len(data), fin)
	}
}

func TestSendBufferNewData(t *testing.T) {
	b := newSendBuffer(0)
	sendTestNone(t, &b)
	sendTestWrite(t, &b, 2500, 2500)
	if !b.hasData() || b.buffered() != 2500 {
		t.Fatalf("hasData %v buffered %d", b.hasData(), b.buffered())
	}
	f1 := sendTestNext(t, &b, 1000, sendTestFrame{0, 1000, false})
	f2 := sendTestNext(t, &b, 1000, sendTestFrame{1000, 1000, false})
	f3 := sendTestNext(t, &b, 1000, sendTestFrame{2000, 500, false})
	sendTestNone(t, &b)
	b.onAcked(f2.off, f2.n, f2.fin) // out of order: nothing freed yet
	if b.buffered() != 2500 {
		t.Fatalf("buffered %d after acking the middle", b.buffered())
	}
	b.onAcked(f1.off, f1.n, f1.fin)
	if b.buffered() != 500 {
		t.Fatalf("buffered %d, want 500", b.buffered())
	}
	b.onAcked(f3.off, f3.n, f3.fin)
	if b.buffered() != 0 || b.allAcked() {
		t.Fatalf("buffered %d allAcked %v before close", b.buffered(), b.allAcked())
	}
}

// RFC 9000, Section 19.8: "The FIN bit (0x01) indicates that the frame marks
// the end of the stream. The final size of the stream is the sum of the
// offset and the length of this frame."
func TestSendBufferFIN(t *testing.T) {
	t.Run("with the last byte", func(t *testing.T) {
		b := newSendBuffer(0)
		sendTestWrite(t, &b, 1500, 1500)
		b.close()
		f1 := sendTestNext(t, &b, 1000, sendTestFrame{0, 1000, false})
		f2 := sendTestNext(t, &b, 1000, sendTestFrame{1000, 500, true})
		sendTestNone(t, &b)
		b.onAcked(f2.off, f2.n, f2.fin)
		if b.allAcked() {
			t.Fatal("allAcked with the first frame unacknowledged")
		}
		b.onAcked(f1.off, f1.n, f1.fin)
		if !b.allAcked() {
			t.Fatal("not allAcked")
		}
		sendTestNone(t, &b)
	})
	t.Run("empty frame", func(t *testing.T) {
		b := newSendBuffer(0)
		sendTestWrite(t, &b, 100, 100)
		f1 := sendTestNext(t, &b, 1000, sendTestFrame{0, 100, false})
		b.close()
		if b.write([]byte("x")) != 0 {
			t.Fatal("write after close accepted data")
		}
		f2 := sendTestNext(t, &b, 1000, sendTestFrame{100, 0, true})
		sendTestNone(t, &b)
		b.onAcked(f1.off, f1.n, f1.fin)
		b.onAcked(f2.off, f2.n, f2.fin)
		if !b.allAcked() {
			t.Fatal("not allAcked")
		}
	})
	t.Run("empty stream", func(t *testing.T) {
		b := newSendBuffer(0)
		b.close()
		b.close()
		// An empty frame with FIN fits even when no data does.
		f := sendTestNext(t, &b, 0, sendTestFrame{0, 0, true})
		sendTestNone(t, &b)
		b.onLost(f.off, f.n, f.fin)
		f = sendTestNext(t, &b, 10, sendTestFrame{0, 0, true})
		b.onAcked(f.off, f.n, f.fin)
		if !b.allAcked() {
			t.Fatal("not allAcked")
		}
	})
	t.Run("lost empty FIN frame", func(t *testing.T) {
		b := newSendBuffer(0)
		sendTestWrite(t, &b, 100, 100)
		f1 := sendTestNext(t, &b, 1000, sendTestFrame{0, 100, false})
		b.close()
		f2 := sendTestNext(t, &b, 1000, sendTestFrame{100, 0, true})
		b.onLost(f2.off, f2.n, f2.fin)
		b.onAcked(f1.off, f1.n, f1.fin)
		if b.allAcked() {
			t.Fatal("allAcked without the FIN")
		}
		f3 := sendTestNext(t, &b, 1000, sendTestFrame{100, 0, true})
		sendTestNone(t, &b)
		b.onAcked(f3.off, f3.n, f3.fin)
		if !b.allAcked() {
			t.Fatal("not allAcked")
		}
	})
	t.Run("FIN retransmitted with the last byte", func(t *testing.T) {
		b := newSendBuffer(0)
		sendTestWrite(t, &b, 100, 100)
		b.close()
		f1 := sendTestNext(t, &b, 1000, sendTestFrame{0, 100, true})
		b.onLost(f1.off, f1.n, f1.fin)
		f2 := sendTestNext(t, &b, 60, sendTestFrame{0, 60, false})
		f3 := sendTestNext(t, &b, 60, sendTestFrame{60, 40, true})
		sendTestNone(t, &b)
		b.onAcked(f3.off, f3.n, f3.fin)
		b.onLost(f2.off, f2.n, f2.fin)
		sendTestNext(t, &b, 1000, sendTestFrame{0, 60, false}) // no FIN: not the last byte
		sendTestNone(t, &b)
		b.onAcked(0, 60, false)
		if !b.allAcked() {
			t.Fatal("not allAcked")
		}
	})
}

// RFC 9000, Section 13.3: "Application data sent in STREAM frames is
// retransmitted in new STREAM frames unless the endpoint has sent a
// RESET_STREAM for that stream."
func TestSendBufferRetransmission(t *testing.T) {
	b := newSendBuffer(0)
	sendTestWrite(t, &b, 5000, 5000)
	var fs []sendTestFrame
	for off := 0; off < 4000; off += 1000 {
		fs = append(fs, sendTestNext(t, &b, 1000, sendTestFrame{uint64(off), 1000, false}))
	}
	// Lost out of order; retransmitted lowest offset first, before new data.
	b.onLost(fs[2].off, fs[2].n, false)
	b.onLost(fs[0].off, fs[0].n, false)
	sendTestNext(t, &b, 600, sendTestFrame{0, 600, false})
	sendTestNext(t, &b, 600, sendTestFrame{600, 400, false}) // stops at the end of the range
	sendTestNext(t, &b, 2000, sendTestFrame{2000, 1000, false})
	sendTestNext(t, &b, 2000, sendTestFrame{4000, 1000, false})
	sendTestNone(t, &b)

	// Lost twice: retransmitted once per report.
	b.onLost(fs[1].off, fs[1].n, false)
	b.onLost(fs[1].off, fs[1].n, false)
	sendTestNext(t, &b, 2000, sendTestFrame{1000, 1000, false})
	sendTestNone(t, &b)
}

func TestSendBufferLostAfterAck(t *testing.T) {
	b := newSendBuffer(0)
	sendTestWrite(t, &b, 3000, 3000)
	f := sendTestNext(t, &b, 3000, sendTestFrame{0, 3000, false})
	// The frame is lost; its retransmission in two parts is sent.
	b.onLost(f.off, f.n, false)
	r1 := sendTestNext(t, &b, 1000, sendTestFrame{0, 1000, false})
	r2 := sendTestNext(t, &b, 1000, sendTestFrame{1000, 1000, false})
	// The middle part is acknowledged, then the original is reported lost
	// again: only what was not acknowledged is retransmitted.
	b.onAcked(r2.off, r2.n, false)
	b.onLost(f.off, f.n, false)
	sendTestNext(t, &b, 5000, sendTestFrame{0, 1000, false})
	sendTestNext(t, &b, 5000, sendTestFrame{2000, 1000, false})
	sendTestNone(t, &b)
	// Acknowledged data that is later lost is not retransmitted.
	b.onAcked(r1.off, r1.n, false)
	if b.buffered() != 1000 {
		t.Fatalf("buffered %d, want 1000", b.buffered())
	}
	b.onLost(r1.off, r1.n, false)
	b.onLost(r2.off, r2.n, false)
	sendTestNone(t, &b)
	// Acknowledging again changes nothing.
	b.onAcked(r1.off, r1.n, false)
	b.onAcked(0, 3000, false)
	b.onAcked(0, 3000, false)
	if b.buffered() != 0 {
		t.Fatalf("buffered %d, want 0", b.buffered())
	}
}

func TestSendBufferLimit(t *testing.T) {
	b := newSendBuffer(3000)
	sendTestWrite(t, &b, 2000, 2000)
	sendTestWrite(t, &b, 2000, 1000) // backpressure
	sendTestWrite(t, &b, 10, 0)
	f := sendTestNext(t, &b, 1500, sendTestFrame{0, 1500, false})
	sendTestWrite(t, &b, 10, 0) // sent is not acknowledged
	b.onAcked(f.off, f.n, false)
	sendTestWrite(t, &b, 2000, 1500)
	if b.buffered() != 3000 || len(b.chunks.slots) > maxChunkSlots(3000) {
		t.Fatalf("buffered %d in %d chunk slots, want 3000 in at most %d", b.buffered(), len(b.chunks.slots), maxChunkSlots(3000))
	}
}

// TestSendBufferAcrossChunks streams through a buffer smaller than the
// stream, with frames that straddle chunks: the data of every frame and
// retransmission comes from the right place, and the chunks of
// acknowledged data go back at once.
func TestSendBufferAcrossChunks(t *testing.T) {
	recvTestPoisonPool()
	b := newSendBuffer(10000) // not a multiple of the chunk size
	var total uint64
	for round := 0; round < 50; round++ {
		sendTestWrite(t, &b, 7000, 7000)
		for i := 0; b.hasData(); i++ {
			off, data, _, _ := b.nextFrameData(3000)
			if !bytes.Equal(data, bufTestData(nil, off, len(data))) {
				t.Fatalf("wrong data at %d", off)
			}
			if i%3 == 0 { // lose some, acknowledge the rest
				b.onLost(off, len(data), false)
			} else {
				b.onAcked(off, len(data), false)
			}
		}
		total += 7000
		if b.buffered() != 0 || b.sentOffset() != total {
			t.Fatalf("round %d: buffered %d sent %d", round, b.buffered(), b.sentOffset())
		}
		if n := b.memory() - b.chunks.tableBytes(); n != 0 {
			t.Fatalf("round %d: everything acknowledged, %d bytes of chunks held", round, n)
		}
	}
}

// Memory follows the unacknowledged data: chunks are taken as writes reach
// them and given back as acknowledgments pass them.
func TestSendBufferMemoryFollowsData(t *testing.T) {
	b := newSendBuffer(1 << 20)
	chunks := func() int { return (b.memory() - b.chunks.tableBytes()) / 4096 }
	sendTestWrite(t, &b, 10000, 10000) // [0,10000): 3 chunks
	if chunks() != 3 {
		t.Fatalf("%d chunks for 10,000 bytes", chunks())
	}
	f := sendTestNext(t, &b, 10000, sendTestFrame{0, 10000, false})
	b.onAcked(4000, 6000, false) // not at the front: nothing freed
	if chunks() != 3 {
		t.Fatalf("%d chunks after an acknowledgment behind a gap", chunks())
	}
	b.onAcked(0, 4000, false) // all acknowledged
	if chunks() != 0 || b.buffered() != 0 {
		t.Fatalf("%d chunks, %d bytes buffered after everything was acknowledged", chunks(), b.buffered())
	}
	_ = f
	sendTestWrite(t, &b, 100, 100) // into the chunk [7936, 11904) again
	sendTestNext(t, &b, 1000, sendTestFrame{10000, 100, false})
	if chunks() != 1 {
		t.Fatalf("%d chunks for 100 bytes", chunks())
	}
}

// RFC 9000, Section 2.2: "An endpoint MUST NOT send data on any stream
// without ensuring that it is within the flow control limits set by its
// peer."
func TestSendBufferFlowControlLimit(t *testing.T) {
	b := newSendBuffer(0)
	sendTestWrite(t, &b, 3000, 3000)
	b.close()
	off, data, fin, ok := b.nextFrameLimitData(2000, 1500)
	if !ok || off != 0 || len(data) != 1500 || fin {
		t.Fatalf("limited frame: %d+%d fin=%v ok=%v", off, len(data), fin, ok)
	}
	if _, _, _, ok := b.nextFrameLimitData(2000, 1500); ok {
		t.Fatal("new data beyond the limit")
	}
	b.onLost(0, 1500, false)
	// Retransmissions are not limited (their credit was consumed already).
	if off, data, _, ok := b.nextFrameLimitData(2000, 0); !ok || off != 0 || len(data) != 1500 {
		t.Fatalf("retransmission under a limit: %d+%d ok=%v", off, len(data), ok)
	}
	if !b.hasData() {
		t.Fatal("hasData false with data blocked by flow control")
	}
	off, data, fin, ok = b.nextFrameLimitData(2000, 3000)
	if !ok || off != 1500 || len(data) != 1500 || !fin {
		t.Fatalf("last frame: %d+%d fin=%v ok=%v", off, len(data), fin, ok)
	}
}

func TestSendBufferShrink(t *testing.T) {
	b := newSendBuffer(0)
	if b.shrink() {
		t.Fatal("shrink of an unallocated buffer")
	}
	sendTestWrite(t, &b, 100, 100)
	f := sendTestNext(t, &b, 1000, sendTestFrame{0, 100, false})
	if b.shrink() {
		t.Fatal("shrink released unacknowledged data")
	}
	b.onAcked(f.off, f.n, f.fin)
	if !b.shrink() || b.memory() != 0 {
		t.Fatal("shrink kept the table of an empty buffer")
	}
	sendTestWrite(t, &b, 100, 100)
	sendTestNext(t, &b, 1000, sendTestFrame{100, 100, false})
}

func TestSendBufferReset(t *testing.T) {
	b := newSendBuffer(0)
	sendTestWrite(t, &b, 3000, 3000)
	f := sendTestNext(t, &b, 1000, sendTestFrame{0, 1000, false})
	b.onLost(f.off, f.n, false)
	b.reset()
	sendTestNone(t, &b)
	if b.memory() != 0 || b.lost != nil || b.buffered() != 0 {
		t.Fatal("reset kept memory")
	}
	if b.write([]byte("x")) != 0 || b.allAcked() || b.sentOffset() != 1000 {
		t.Fatalf("after reset: allAcked %v sentOffset %d", b.allAcked(), b.sentOffset())
	}
	b.onAcked(f.off, f.n, false)
	b.onLost(f.off, f.n, false)
	sendTestNone(t, &b)
}

func TestSendBufferWriteNextAckAlloc(t *testing.T) {
	if connIDRaceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	b := newSendBuffer(64 << 10)
	p := bufTestData(nil, 0, 3000)
	pkt := make([]byte, 0, 1500)
	var pending [8]sendTestFrame
	step := func() {
		b.write(p)
		n := 0
		for n < len(pending) {
			off, m, fin, ok := b.nextFrame(1200)
			if !ok {
				break
			}
			pkt = b.appendData(pkt[:0], off, m)
			pending[n] = sendTestFrame{off, m, fin}
			n++
		}
		// Lose one, acknowledge the others out of order.
		b.onLost(pending[0].off, pending[0].n, false)
		for k := n - 1; k > 0; k-- {
			b.onAcked(pending[k].off, pending[k].n, false)
		}
		for {
			off, m, fin, ok := b.nextFrame(1200)
			if !ok {
				break
			}
			pkt = b.appendData(pkt[:0], off, m)
			b.onAcked(off, m, fin)
		}
	}
	for range 10 {
		step()
	}
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Fatalf("steady state allocates %v times per step", n)
	}
}

func BenchmarkSendBufferWriteNextAck(b *testing.B) {
	buf := newSendBuffer(1 << 20)
	p := bufTestData(nil, 0, 1200)
	pkt := make([]byte, 0, 1500)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	var inflight [16]sendTestFrame
	for i := 0; b.Loop(); i++ {
		buf.write(p)
		off, n, fin, _ := buf.nextFrame(1200)
		pkt = buf.appendData(pkt[:0], off, n) // into the packet
		k := i % len(inflight)
		if f := inflight[k]; f.n > 0 {
			buf.onAcked(f.off, f.n, f.fin) // acknowledged 16 frames later
		}
		inflight[k] = sendTestFrame{off, n, fin}
	}
}

// FuzzSendBuffer writes the test stream, sends frames of random sizes and
// acknowledges or loses them (and old ones again) at random, checking that
// every byte sent is the byte written at its offset, that no acknowledged
// byte is sent again, that FIN is only on the frame ending at the final
// size, and that after everything is acknowledged allAcked is true.
//
// Input: 2 bytes limit, then 4-byte operations.
func FuzzSendBuffer(f *testing.F) {
	f.Add([]byte("\x00\x10" + "\x00\x00\x10\x00" + "\x01\x00\x04\x00" + "\x01\x00\x04\x00" + "\x03\x00\x00\x00" + "\x02\x01\x00\x00" + "\x06\x00\x00\x00" + "\x01\xff\x0f\x00"))
	f.Add([]byte("\xe8\x03" + "\x00\xe8\x03\x00" + "\x01\x2c\x01\x00" + "\x01\x2c\x01\x00" + "\x01\x2c\x01\x00" + "\x03\x01\x00\x00" + "\x02\x00\x00\x00" + "\x05\x00\x00\x00" + "\x04\x01\x00\x00" + "\x00\xe8\x03\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 2 {
			return
		}
		limit := 1 + int(binary.LittleEndian.Uint16(in))%10000
		in = in[2:]
		recvTestPoisonPool()
		b := newSendBuffer(limit)
		defer b.release()
		var (
			inflight, past []sendTestFrame
			acked          []bool // model: acked[x] if a frame with x was acknowledged
			written        uint64
			closed         bool
			finAcked       bool
			returned       int // frames returned so far
			scratch        = make([]byte, 4096)
		)
		firstUnacked := func() uint64 {
			x := uint64(0)
			for x < uint64(len(acked)) && acked[x] {
				x++
			}
			return x
		}
		next := func(maxData int, maxOffset uint64) bool {
			sent := b.sentOffset()
			off, data, fin, ok := b.nextFrameLimitData(maxData, maxOffset)
			if !ok {
				return false
			}
			end := off + uint64(len(data))
			returned++
			if len(data) > max(maxData, 0) || end > written {
				t.Fatalf("frame %d+%d: maxData %d, written %d", off, len(data), maxData, written)
			}
			if end > sent && (off > sent || end > max(maxOffset, sent)) {
				t.Fatalf("new data %d+%d: sent %d, flow-control limit %d", off, len(data), sent, maxOffset)
			}
			// FIN only on (and always on) a frame ending at the final size.
			if fin != (closed && end == written) {
				t.Fatalf("frame %d+%d fin=%v: closed %v final size %d", off, len(data), fin, closed, written)
			}
			if len(data) == 0 && !fin {
				t.Fatalf("empty frame without FIN at %d", off)
			}
			for k, c := range data {
				x := off + uint64(k)
				if c != bufTestByte(x) {
					t.Fatalf("wrong byte at offset %d", x)
				}
				if x < uint64(len(acked)) && acked[x] {
					t.Fatalf("offset %d sent again after it was acknowledged", x)
				}
			}
			inflight = append(inflight, sendTestFrame{off, len(data), fin})
			return true
		}
		ack := func(f sendTestFrame) {
			b.onAcked(f.off, f.n, f.fin)
			for x := f.off; x < f.off+uint64(f.n); x++ {
				for uint64(len(acked)) <= x {
					acked = append(acked, false)
				}
				acked[x] = true
			}
			finAcked = finAcked || f.fin
		}
		take := func(k uint16) sendTestFrame {
			i := int(k) % len(inflight)
			f := inflight[i]
			inflight = append(inflight[:i], inflight[i+1:]...)
			past = append(past, f)
			return f
		}
		check := func() {
			if got, want := uint64(b.buffered()), written-firstUnacked(); got != want {
				t.Fatalf("buffered %d, want %d", got, want)
			}
			allAcked := closed && finAcked && firstUnacked() == written
			if b.allAcked() != allAcked {
				t.Fatalf("allAcked %v, want %v", b.allAcked(), allAcked)
			}
			bufCheckSet(t, b.lost)
			bufCheckSet(t, b.ackedRanges)
			if n := len(b.lost) + len(b.ackedRanges); n > 2*returned+2 {
				t.Fatalf("%d intervals after %d frames", n, returned)
			}
			// Memory follows the data: exactly the chunks that hold an
			// unacknowledged byte.
			if len(b.chunks.slots) > maxChunkSlots(limit) {
				t.Fatalf("%d chunk slots exceed the bound %d", len(b.chunks.slots), maxChunkSlots(limit))
			}
			held, want := 0, 0
			for _, c := range b.chunks.slots {
				if c != nil {
					held++
				}
			}
			if u := firstUnacked(); u < written && !b.isReset {
				want = int((written-1)/bufChunkSize - u/bufChunkSize + 1)
			}
			if held != want {
				t.Fatalf("%d chunks held, want %d", held, want)
			}
		}
		for len(in) >= 4 {
			op, a, c := in[0], binary.LittleEndian.Uint16(in[1:]), in[3]
			in = in[4:]
			switch op % 8 {
			case 0:
				n := int(a) % 3000
				want := 0
				if !closed {
					want = min(n, limit-b.buffered())
				}
				if got := b.write(bufTestData(scratch, written, n)); got != want {
					t.Fatalf("write(%d) accepted %d, want %d", n, got, want)
				}
				written += uint64(want)
			case 1:
				maxOffset := uint64(math.MaxUint64)
				if c&1 != 0 {
					maxOffset = b.sentOffset() + uint64(c>>1)*16
				}
				next(int(a)%1500, maxOffset)
			case 2:
				if len(inflight) > 0 {
					ack(take(a))
				}
			case 3:
				if len(inflight) > 0 {
					f := take(a)
					b.onLost(f.off, f.n, f.fin)
				}
			case 4:
				if len(past) > 0 {
					ack(past[int(a)%len(past)])
				}
			case 5:
				if len(past) > 0 {
					f := past[int(a)%len(past)]
					b.onLost(f.off, f.n, f.fin)
				}
			case 6:
				if a&1 == 0 {
					b.close()
					closed = true
				} else {
					b.shrink() // changes nothing visible
				}
			case 7:
				// Send everything that is pending.
				for next(1+int(a)%1500, math.MaxUint64) {
				}
			}
			check()
		}
		// Acknowledge everything in flight, then send and acknowledge what
		// is left (lost data, unsent data, FIN) until nothing is.
		b.close()
		closed = true
		for i := 0; ; i++ {
			for len(inflight) > 0 {
				ack(take(0))
			}
			if !next(1+i%1500, math.MaxUint64) {
				break
			}
			if i > 100000 {
				t.Fatal("sending does not terminate")
			}
		}
		check()
		if !b.allAcked() || b.hasData() || b.buffered() != 0 {
			t.Fatalf("after acknowledging everything: allAcked %v hasData %v buffered %d",
				b.allAcked(), b.hasData(), b.buffered())
		}
	})
}
