package qpack

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The Huffman-encoded strings of RFC 7541, Appendix C.4 (requests) and C.6
// (responses), byte for byte.
var huffmanExamples = []struct {
	section, plain, encoded string
}{
	{"C.4.1", "www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"},
	{"C.4.2", "no-cache", "a8eb 1064 9cbf"},
	{"C.4.3", "custom-key", "25a8 49e9 5ba9 7d7f"},
	{"C.4.3", "custom-value", "25a8 49e9 5bb8 e8b4 bf"},
	{"C.6.1", "302", "6402"},
	{"C.6.1", "private", "aec3 771a 4b"},
	{"C.6.1", "Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"},
	{"C.6.1", "https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"},
	{"C.6.2", "307", "640e ff"},
	{"C.6.3", "Mon, 21 Oct 2013 20:13:22 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff"},
	{"C.6.3", "gzip", "9bd9 ab"},
	{"C.6.3", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
		"94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07"},
}

func TestHuffmanRFC7541Examples(t *testing.T) {
	for _, ex := range huffmanExamples {
		want := unhex(t, ex.encoded)
		got := appendHuffman(nil, ex.plain)
		if !bytes.Equal(got, want) {
			t.Errorf("%s %q: encoded %x, want %x", ex.section, ex.plain, got, want)
		}
		if l := huffmanEncodedLen(ex.plain); l != len(want) {
			t.Errorf("%s %q: huffmanEncodedLen = %d, want %d", ex.section, ex.plain, l, len(want))
		}
		dec, err := appendHuffmanDecode(nil, want)
		if err != nil || string(dec) != ex.plain {
			t.Errorf("%s %x: decoded %q, %v; want %q", ex.section, want, dec, err, ex.plain)
		}
	}
}

func TestHuffmanRoundTripAllBytes(t *testing.T) {
	var all []byte
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"", string(all)}
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		enc := appendHuffman(nil, in)
		if len(enc) != huffmanEncodedLen(in) {
			t.Fatalf("%q: length %d, huffmanEncodedLen %d", in, len(enc), huffmanEncodedLen(in))
		}
		dec, err := appendHuffmanDecode(nil, enc)
		if err != nil || string(dec) != in {
			t.Fatalf("%q: round trip gave %q, %v", in, dec, err)
		}
		if n := uint64(len(in)); n < huffmanMinDecodedLen(uint64(len(enc))) || n > huffmanMaxDecodedLen(uint64(len(enc))) {
			t.Fatalf("%q: decoded length %d outside bounds for %d bytes", in, n, len(enc))
		}
	}
}

// RFC 7541, Section 5.2: "A padding strictly longer than 7 bits MUST be
// treated as a decoding error. A padding not corresponding to the most
// significant bits of the code for the EOS symbol MUST be treated as a
// decoding error. A Huffman-encoded string literal containing the EOS symbol
// MUST be treated as a decoding error."
func TestHuffmanDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		// '0' is 00000 (5 bits); padding 111 is fine, 000 is not EOS.
		{"padding not ones", []byte{0x00}},
		{"padding partly ones", []byte{0x06}},
		// A whole byte of ones after a byte-aligned symbol: 8 bits of padding.
		// 'a' is 00011 (5 bits), "aa" is 10 bits: 0001100011 + 111111 = 2 bytes;
		// add 0xff.
		{"padding of 8 bits", append(appendHuffman(nil, "aa"), 0xff)},
		{"only padding byte", []byte{0xff}},
		// EOS: 30 ones, followed by two ones of padding.
		{"EOS", []byte{0xff, 0xff, 0xff, 0xff}},
		// A symbol, then EOS.
		{"symbol then EOS", append(appendHuffman(nil, "0a"), 0xff, 0xff, 0xff, 0xff)},
	}
	for _, tt := range tests {
		if _, err := appendHuffmanDecode(nil, tt.in); err != errInvalidHuffman {
			t.Errorf("%s (%x): err = %v, want errInvalidHuffman", tt.name, tt.in, err)
		}
	}
	// Up to seven bits of padding are fine: '0' (5 bits) and 3 one-bits.
	if s, err := appendHuffmanDecode(nil, []byte{0x07}); err != nil || string(s) != "0" {
		t.Errorf("0x07: %q, %v", s, err)
	}
	// Symbol 0 has the 13-bit code 1ff8; 3 bits of padding make 2 bytes.
	if s, err := appendHuffmanDecode(nil, []byte{0xff, 0xc7}); err != nil || string(s) != "\x00" {
		t.Errorf("ffc7: %q, %v", s, err)
	}
}

// TestHuffmanTableMatchesRFC checks huffmanCodes and huffmanCodeLens against
// the text of RFC 7541, Appendix B, when the shared specs are checked out
// beside the repository.
func TestHuffmanTableMatchesRFC(t *testing.T) {
	f, err := os.Open("../../../shared/specs/rfc7541.txt")
	if err != nil {
		t.Skip("RFC 7541 text not available:", err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\s*(?:'.'|EOS)?\s*\(\s*(\d+)\)\s+\|([01|]+)\s+([0-9a-f]+)\s+\[\s*(\d+)\]`)
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		sym, _ := strconv.Atoi(m[1])
		code, _ := strconv.ParseUint(m[3], 16, 32)
		n, _ := strconv.Atoi(m[4])
		bits := strings.ReplaceAll(m[2], "|", "")
		if fromBits, _ := strconv.ParseUint(bits, 2, 32); fromBits != code || len(bits) != n {
			t.Errorf("RFC row %d is inconsistent", sym)
		}
		if sym == 256 {
			if code != huffmanEOSCode || n != huffmanEOSLen {
				t.Errorf("EOS = %x/%d, RFC says %x/%d", huffmanEOSCode, huffmanEOSLen, code, n)
			}
		} else if uint64(huffmanCodes[sym]) != code || int(huffmanCodeLens[sym]) != n {
			t.Errorf("symbol %d = %x/%d, RFC says %x/%d", sym, huffmanCodes[sym], huffmanCodeLens[sym], code, n)
		}
		seen++
	}
	if seen != 257 {
		t.Errorf("found %d rows in the RFC, want 257", seen)
	}
}
