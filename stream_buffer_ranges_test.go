package quic

import (
	"math/rand/v2"
	"testing"
)

// bufTestByte is the byte at stream offset i of the byte stream the buffer
// tests send. It is byte(i*7) with the higher bits of i mixed in, so that a
// byte misplaced by a multiple of 256 (a ring of the wrong size) is detected.
func bufTestByte(i uint64) byte {
	return byte(i*7) ^ byte(i>>8)*31 ^ byte(i>>16)*97
}

// bufTestData returns bytes [off, off+n) of the test stream, in a slice
// from scratch if it is large enough.
func bufTestData(scratch []byte, off uint64, n int) []byte {
	if cap(scratch) < n {
		scratch = make([]byte, n)
	}
	p := scratch[:n]
	for k := range p {
		p[k] = bufTestByte(off + uint64(k))
	}
	return p
}

// bufCheckSet reports whether s is sorted, disjoint, non-adjacent and
// without empty intervals.
func bufCheckSet(t *testing.T, s bufRangeSet) {
	t.Helper()
	for k, r := range s {
		if r.start >= r.end {
			t.Fatalf("empty interval %d in %v", k, s)
		}
		if k > 0 && s[k-1].end >= r.start {
			t.Fatalf("intervals %d and %d not separated in %v", k-1, k, s)
		}
	}
}

func TestBufRangeSetAddRemove(t *testing.T) {
	var s bufRangeSet
	s.add(10, 20)
	s.add(30, 40)
	s.add(0, 5)
	s.add(20, 25) // touches [10,20)
	want := bufRangeSet{{0, 5}, {10, 25}, {30, 40}}
	if !bufEqualSets(s, want) {
		t.Fatalf("after adds: %v, want %v", s, want)
	}
	s.add(4, 31) // merges all three
	if !bufEqualSets(s, bufRangeSet{{0, 40}}) {
		t.Fatalf("after merge: %v", s)
	}
	s.remove(10, 20) // split
	if !bufEqualSets(s, bufRangeSet{{0, 10}, {20, 40}}) {
		t.Fatalf("after split: %v", s)
	}
	s.remove(5, 25)
	if !bufEqualSets(s, bufRangeSet{{0, 5}, {25, 40}}) {
		t.Fatalf("after trim: %v", s)
	}
	s.remove(0, 100)
	if len(s) != 0 {
		t.Fatalf("after remove all: %v", s)
	}
}

func bufEqualSets(a, b bufRangeSet) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// TestBufRangeSetModel compares random adds and removes with a bitmap.
func TestBufRangeSetModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		var s bufRangeSet
		var model [256]bool
		for op := 0; op < 100; op++ {
			a := rng.Uint64N(256)
			b := a + rng.Uint64N(256-a+1)
			add := rng.IntN(3) > 0
			if add {
				s.add(a, b)
			} else {
				s.remove(a, b)
			}
			for x := a; x < b; x++ {
				model[x] = add
			}
			bufCheckSet(t, s)
			var got [256]bool
			for _, r := range s {
				for x := r.start; x < r.end; x++ {
					got[x] = true
				}
			}
			if got != model {
				t.Fatalf("iteration %d op %d: set %v differs from model", iter, op, s)
			}
		}
	}
}
