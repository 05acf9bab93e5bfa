package wire

import (
	"bytes"
	"testing"
)

func TestNewTokenFrame(t *testing.T) {
	// Byte-exact encoding.
	f := NewTokenFrame{Token: []byte{0xaa, 0xbb, 0xcc}}
	want := ft1Hex(t, "07 03 aabbcc")
	if got := f.Append(nil); !bytes.Equal(got, want) || f.EncodedLen() != len(want) {
		t.Errorf("Append = %x, EncodedLen %d; want %x", got, f.EncodedLen(), want)
	}
	token := bytes.Repeat([]byte{0x42}, 16384)
	for _, l := range []int{1, 63, 64, 200, 16383, 16384} {
		f := NewTokenFrame{Token: token[:l]}
		enc := f.Append(nil)
		if len(enc) != f.EncodedLen() {
			t.Fatalf("%d: EncodedLen %d, Append wrote %d", l, f.EncodedLen(), len(enc))
		}
		g, n, err := ParseNewTokenFrame(append(enc, 0x01))
		if err != nil || n != len(enc) || !bytes.Equal(g.Token, f.Token) {
			t.Fatalf("round trip of a %d-byte token: %d, %v", l, n, err)
		}
		// The token is a sub-slice of the input.
		if &g.Token[0] != &enc[len(enc)-l] {
			t.Errorf("%d: token was copied", l)
		}
		if l > 64 {
			continue
		}
		for i := range len(enc) {
			if g, n, err := ParseNewTokenFrame(enc[:i]); err == nil || n != 0 {
				t.Fatalf("%x: prefix %d parsed: %+v", enc, i, g)
			} else {
				ft1WantCode(t, err, FrameEncodingError, "NEW_TOKEN prefix")
			}
		}
	}
	for _, tc := range []struct {
		name string
		hex  string
		code TransportErrorCode
	}{
		// RFC 9000, Section 19.7: "A client MUST treat receipt of a
		// NEW_TOKEN frame with an empty Token field as a connection error
		// of type FRAME_ENCODING_ERROR."
		{"empty token", "07 00", FrameEncodingError},
		{"length beyond input", "07 04 aabbcc", FrameEncodingError},
		{"huge length", "07 bfffffff aa", FrameEncodingError},
		{"empty", "", FrameEncodingError},
		{"wrong type", "06 01 61", FrameEncodingError},
		{"two-byte type", "4007 01 61", ProtocolViolation},
	} {
		f, n, err := ParseNewTokenFrame(ft1Hex(t, tc.hex))
		if err == nil || n != 0 {
			t.Errorf("%s: parsed %+v, %d", tc.name, f, n)
			continue
		}
		ft1WantCode(t, err, tc.code, tc.name)
	}

	in := NewTokenFrame{Token: token[:100]}.Append(nil)
	buf := make([]byte, 0, 200)
	ft1CheckAllocs(t, "NEW_TOKEN parse+append", func() {
		f, _, err := ParseNewTokenFrame(in)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Append(buf[:0])
	})
}
