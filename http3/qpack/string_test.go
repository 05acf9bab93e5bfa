package qpack

import (
	"bytes"
	"strings"
	"testing"
)

// The full C.4.1 request block "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"
// carries the :authority value as the string literal 8c f1e3...; check the
// string literal framing (H bit, 7-bit length) against it.
func TestStringLiteralRFC7541C41(t *testing.T) {
	block := unhex(t, "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")
	lit := block[4:]
	got := appendString(nil, 8, 0, "www.example.com", true)
	if !bytes.Equal(got, lit) {
		t.Errorf("appendString = %x, want %x", got, lit)
	}
	huff, l, h, err := readStringHeader(lit, 8)
	if err != nil || !huff || l != 12 || h != 1 {
		t.Fatalf("readStringHeader = %v, %d, %d, %v", huff, l, h, err)
	}
	s, err := appendStringData(nil, lit[h:h+int(l)], huff)
	if err != nil || string(s) != "www.example.com" {
		t.Errorf("decoded %q, %v", s, err)
	}
}

func TestStringLiteralPrefixes(t *testing.T) {
	for n := uint8(2); n <= 8; n++ {
		for _, s := range []string{"", "a", "custom-key", strings.Repeat("x", 300), "\x00\xff\x01"} {
			for _, huff := range []bool{false, true} {
				flags := byte(0xff) << n
				b := appendString(nil, n, flags, s, huff)
				if len(b) != stringLen(n, s, huff) {
					t.Errorf("n=%d %q: len %d, stringLen %d", n, s, len(b), stringLen(n, s, huff))
				}
				if b[0]&flags != flags {
					t.Errorf("n=%d: flag bits lost: %08b", n, b[0])
				}
				h, l, hdr, err := readStringHeader(b, n)
				if err != nil || hdr+int(l) != len(b) {
					t.Fatalf("n=%d %q: header %v %d %d %v", n, s, h, l, hdr, err)
				}
				if h != (huff && huffmanEncodedLen(s) < len(s)) {
					t.Errorf("n=%d %q: H=%v", n, s, h)
				}
				got, err := appendStringData(nil, b[hdr:], h)
				if err != nil || string(got) != s {
					t.Errorf("n=%d %q: decoded %q, %v", n, s, got, err)
				}
			}
		}
	}
}
