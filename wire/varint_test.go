package wire

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// RFC 9000, Appendix A.1: "the eight-byte sequence 0xc2197c5eff14e88c
// decodes to the decimal value 151,288,809,941,952,652; the four-byte
// sequence 0x9d7f3e7d decodes to 494,878,333; the two-byte sequence 0x7bbd
// decodes to 15,293; and the single byte 0x25 decodes to 37 (as does the
// two-byte sequence 0x4025)."
func TestVarintRFCExamples(t *testing.T) {
	for _, tc := range []struct {
		hex     string
		v       uint64
		minimal bool
	}{
		{"c2197c5eff14e88c", 151288809941952652, true},
		{"9d7f3e7d", 494878333, true},
		{"7bbd", 15293, true},
		{"25", 37, true},
		{"4025", 37, false},
	} {
		in, _ := hex.DecodeString(tc.hex)
		v, n := ParseVarint(in)
		if v != tc.v || n != len(in) {
			t.Errorf("ParseVarint(%s) = %d, %d; want %d, %d", tc.hex, v, n, tc.v, len(in))
		}
		if tc.minimal {
			if got := AppendVarint(nil, tc.v); !bytes.Equal(got, in) {
				t.Errorf("AppendVarint(%d) = %x; want %s", tc.v, got, tc.hex)
			}
			if VarintLen(tc.v) != len(in) {
				t.Errorf("VarintLen(%d) = %d; want %d", tc.v, VarintLen(tc.v), len(in))
			}
		}
		if got := AppendVarintWithLen(nil, tc.v, len(in)); !bytes.Equal(got, in) {
			t.Errorf("AppendVarintWithLen(%d, %d) = %x; want %s", tc.v, len(in), got, tc.hex)
		}
	}
}

func TestVarintBoundaries(t *testing.T) {
	for _, tc := range []struct {
		v uint64
		n int
	}{
		{0, 1}, {63, 1}, {64, 2}, {16383, 2}, {16384, 4},
		{1<<30 - 1, 4}, {1 << 30, 8}, {MaxVarint, 8},
	} {
		b := AppendVarint(nil, tc.v)
		if len(b) != tc.n || VarintLen(tc.v) != tc.n {
			t.Errorf("%d: encoded in %d bytes, VarintLen %d; want %d", tc.v, len(b), VarintLen(tc.v), tc.n)
		}
		v, n := ParseVarint(b)
		if v != tc.v || n != tc.n {
			t.Errorf("round trip of %d gave %d, %d", tc.v, v, n)
		}
		// Every proper prefix is too short.
		for i := 0; i < len(b); i++ {
			if _, n := ParseVarint(b[:i]); n != 0 {
				t.Errorf("prefix %x of %d parsed with n=%d", b[:i], tc.v, n)
			}
		}
		// Every longer encoding decodes to the same value.
		for _, l := range []int{1, 2, 4, 8} {
			if l < tc.n {
				continue
			}
			w := AppendVarintWithLen(nil, tc.v, l)
			if v, n := ParseVarint(w); v != tc.v || n != l {
				t.Errorf("%d in %d bytes parsed as %d, %d", tc.v, l, v, n)
			}
			p := make([]byte, l)
			PutVarintWithLen(p, tc.v, l)
			if !bytes.Equal(p, w) {
				t.Errorf("PutVarintWithLen(%d, %d) = %x; want %x", tc.v, l, p, w)
			}
		}
	}
}

func TestVarintPanicsOnOverflow(t *testing.T) {
	for name, f := range map[string]func(){
		"AppendVarint":        func() { AppendVarint(nil, MaxVarint+1) },
		"VarintLen":           func() { VarintLen(MaxVarint + 1) },
		"AppendVarintWithLen": func() { AppendVarintWithLen(nil, 64, 1) },
		"bad length":          func() { AppendVarintWithLen(nil, 1, 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestVarintAllocs(t *testing.T) {
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendVarint(buf[:0], 494878333)
		b = AppendVarintWithLen(b, 37, 2)
		if v, n := ParseVarint(b); v != 494878333 || n != 4 {
			t.Fatal("bad parse")
		}
	})
	if allocs != 0 {
		t.Fatalf("varint encode/decode allocated %v times; want 0", allocs)
	}
}

func BenchmarkParseVarint(b *testing.B) {
	in := AppendVarint(nil, 494878333)
	for b.Loop() {
		ParseVarint(in)
	}
}
