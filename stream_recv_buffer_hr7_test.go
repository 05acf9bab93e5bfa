package quic

import (
	"math/rand/v2"
	"testing"
)

// TestRecvBufferBulkModelLargeWindow (hostile review of f3c4b6f): a bulk
// transfer into a realistic window (1 MiB, grouped chunks above 64 KiB)
// whose reader falls behind and catches up with reads of odd sizes, while
// the sender's frames (1,100 to 1,400 bytes) are mostly in order
// (appendInOrder) but sometimes lost and retransmitted later, duplicated,
// or overlapping what was read. Every byte read must be the byte sent at
// its offset and every byte sent within the window must be read.
func TestRecvBufferBulkModelLargeWindow(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		const window = 1 << 20
		recvTestPoisonPool()
		b := newRecvBuffer(window)
		var (
			sent    uint64   // next new offset the sender sends
			lost    []uint64 // offsets of lost frames (len in lostLen)
			lostLen []int
			readOff uint64
			scratch = make([]byte, 1<<16)
			data    = make([]byte, 2000)
		)
		push := func(off uint64, n int) {
			if off+uint64(n) > readOff+window {
				n = int(readOff + window - off)
			}
			if n <= 0 {
				return
			}
			if _, err := b.push(off, bufTestData(data, off, n)); err != nil {
				t.Fatalf("seed %d: push(%d, %d): %v", seed, off, n, err)
			}
		}
		grouped := false
		for step := 0; step < 30000; step++ {
			grouped = grouped || b.held >= b.groupAbove
			switch r := rng.IntN(100); {
			case r < 70: // the next frame
				n := 1100 + rng.IntN(301)
				if sent+uint64(n) > readOff+window {
					break
				}
				if rng.IntN(50) == 0 {
					lost, lostLen = append(lost, sent), append(lostLen, n)
				} else {
					push(sent, n)
				}
				sent += uint64(n)
			case r < 78 && len(lost) > 0: // a retransmission
				k := rng.IntN(len(lost))
				push(lost[k], lostLen[k])
				lost[k], lostLen[k] = lost[len(lost)-1], lostLen[len(lost)-1]
				lost, lostLen = lost[:len(lost)-1], lostLen[:len(lost)-1]
			case r < 82 && sent > 0: // a duplicate or overlap of old data
				off := sent - min(sent, uint64(rng.IntN(8000)))
				n := min(rng.IntN(2000), int(sent-off))
				ok := true
				for k, lo := range lost {
					if off < lo+uint64(lostLen[k]) && lo < off+uint64(n) {
						ok = false // would fill a gap the model tracks
					}
				}
				if ok {
					push(off, n)
				}
			default: // a read of odd size
				want := b.readable()
				size := rng.IntN(4000) // the reader falls behind
				if rng.IntN(20) == 0 {
					size = rng.IntN(len(scratch)) // and catches up
				}
				n := b.read(scratch[:size])
				if n > want {
					t.Fatalf("seed %d: read %d > readable %d", seed, n, want)
				}
				for k := 0; k < n; k++ {
					if scratch[k] != bufTestByte(readOff+uint64(k)) {
						t.Fatalf("seed %d step %d: wrong byte at offset %d", seed, step, readOff+uint64(k))
					}
				}
				readOff += uint64(n)
			}
			// Everything below the first lost frame has arrived.
			first := sent
			for _, lo := range lost {
				first = min(first, lo)
			}
			if got := readOff + uint64(b.readable()); got != first {
				t.Fatalf("seed %d step %d: readable up to %d, want %d", seed, step, got, first)
			}
			if b.readOffset() != readOff {
				t.Fatalf("seed %d: readOffset %d, want %d", seed, b.readOffset(), readOff)
			}
		}
		if !grouped {
			t.Fatalf("seed %d: the buffer never held %d bytes: grouped chunks untested", seed, b.groupAbove)
		}
		recvTestCheckGroups(t, &b.chunks)
		b.reset()
	}
}
