package qpack

import (
	"bytes"
	"testing"
)

// RFC 7541, Appendix C.1.
func TestIntegerRFC7541Examples(t *testing.T) {
	tests := []struct {
		name  string
		n     uint8
		flags byte
		v     uint64
		want  []byte
	}{
		// C.1.1: "10 is less than 31 (2^5 - 1) and is represented using the
		// 5-bit prefix."
		{"C.1.1", 5, 0, 10, []byte{0x0a}},
		// C.1.2: prefix 31, then 154 (10011010), then 10 (00001010).
		{"C.1.2", 5, 0, 1337, []byte{0x1f, 0x9a, 0x0a}},
		// C.1.3: 42 on an octet boundary.
		{"C.1.3", 8, 0, 42, []byte{0x2a}},
		// The X bits of the prefix byte are kept.
		{"C.1.2 with flags", 5, 0xe0, 1337, []byte{0xff, 0x9a, 0x0a}},
	}
	for _, tt := range tests {
		got := appendInt(nil, tt.n, tt.flags, tt.v)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%s: appendInt = %x, want %x", tt.name, got, tt.want)
		}
		if l := intLen(tt.n, tt.v); l != len(tt.want) {
			t.Errorf("%s: intLen = %d, want %d", tt.name, l, len(tt.want))
		}
		v, n, err := readInt(tt.want, tt.n)
		if err != nil || v != tt.v || n != len(tt.want) {
			t.Errorf("%s: readInt = %d, %d, %v; want %d, %d", tt.name, v, n, err, tt.v, len(tt.want))
		}
	}
}

func TestIntegerRoundTrip(t *testing.T) {
	values := []uint64{0, 1, 2, 6, 7, 8, 14, 15, 16, 30, 31, 32, 62, 63, 64, 126, 127, 128, 254, 255, 256,
		1<<14 - 1, 1 << 14, 1<<21 + 5, 1<<32 - 1, 1 << 40, 1<<62 - 2, 1<<62 - 1}
	for n := uint8(1); n <= 8; n++ {
		for _, v := range values {
			b := appendInt([]byte{0xaa}, n, 0, v)[1:]
			if len(b) != intLen(n, v) {
				t.Errorf("n=%d v=%d: len %d, intLen %d", n, v, len(b), intLen(n, v))
			}
			// High bits outside the prefix must be ignored by readInt.
			b[0] |= ^byte(0) << n
			if n == 8 {
				b[0] = appendInt(nil, n, 0, v)[0]
			}
			got, m, err := readInt(b, n)
			if err != nil || got != v || m != len(b) {
				t.Errorf("n=%d v=%d: readInt = %d, %d, %v", n, v, got, m, err)
			}
			// Every strict prefix is incomplete.
			for i := 0; i < len(b); i++ {
				if _, _, err := readInt(b[:i], n); err != errNeedMore {
					t.Errorf("n=%d v=%d: readInt of %d of %d bytes: %v, want errNeedMore", n, v, i, len(b), err)
				}
			}
		}
	}
}

func TestIntegerLimits(t *testing.T) {
	// 2^62 is one more than the largest value accepted.
	b := appendInt(nil, 5, 0, 1<<62)
	if _, _, err := readInt(b, 5); err != errIntTooLarge {
		t.Errorf("2^62: %v, want errIntTooLarge", err)
	}
	// Values that would overflow 64 bits.
	huge := []byte{0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	if _, _, err := readInt(huge, 5); err != errIntTooLarge {
		t.Errorf("2^64+: %v, want errIntTooLarge", err)
	}
	// Redundant zero continuation groups are accepted up to the limit ...
	ok := []byte{0x1f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}
	if v, n, err := readInt(ok, 5); err != nil || v != 31 || n != len(ok) {
		t.Errorf("padded: %d, %d, %v", v, n, err)
	}
	// ... and not beyond it, so an endless run of 0x80 is refused early.
	long := append([]byte{0x1f}, bytes.Repeat([]byte{0x80}, 100)...)
	if _, _, err := readInt(long, 5); err != errIntTooLarge {
		t.Errorf("endless: %v, want errIntTooLarge", err)
	}
	if _, _, err := readInt(nil, 5); err != errNeedMore {
		t.Errorf("empty: %v, want errNeedMore", err)
	}
}
