package wire

import (
	"bytes"
	"errors"
	"testing"
)

func cryptoTestEqual(a, b CryptoFrame) bool {
	return a.Offset == b.Offset && bytes.Equal(a.Data, b.Data)
}

func TestCryptoFrameEncoding(t *testing.T) {
	for _, tc := range []struct {
		f   CryptoFrame
		hex string
	}{
		{CryptoFrame{Data: []byte("hi")}, "06 00 02 6869"},
		{CryptoFrame{Offset: 16384, Data: []byte{}}, "06 80004000 00"},
		{CryptoFrame{Offset: MaxVarint}, "06 ffffffffffffffff 00"},
	} {
		want := ft1Hex(t, tc.hex)
		if got := tc.f.Append(nil); !bytes.Equal(got, want) {
			t.Errorf("Append(%+v) = %x; want %x", tc.f, got, want)
		}
		if tc.f.EncodedLen() != len(want) || tc.f.HeaderLen() != len(want)-len(tc.f.Data) {
			t.Errorf("%+v: EncodedLen %d, HeaderLen %d; want %d", tc.f, tc.f.EncodedLen(), tc.f.HeaderLen(), len(want))
		}
		g, n, err := ParseCryptoFrame(append(want, 0x01)) // followed by a PING
		if err != nil || n != len(want) || !cryptoTestEqual(g, tc.f) {
			t.Errorf("ParseCryptoFrame(%x) = %+v, %d, %v", want, g, n, err)
		}
	}
}

func TestCryptoFrameRoundTrip(t *testing.T) {
	data := bytes.Repeat([]byte{0xc3}, 16384)
	for _, off := range []uint64{0, 63, 64, 16383, 16384, 1 << 30, MaxVarint - 16384, MaxVarint} {
		for _, l := range []int{0, 1, 63, 64, 1200, 16383, 16384} {
			if off+uint64(l) > MaxVarint {
				continue
			}
			f := CryptoFrame{Offset: off, Data: data[:l]}
			enc := f.Append(nil)
			if len(enc) != f.EncodedLen() {
				t.Fatalf("%d/%d: EncodedLen %d, Append wrote %d", off, l, f.EncodedLen(), len(enc))
			}
			g, n, err := ParseCryptoFrame(enc)
			if err != nil || n != len(enc) || !cryptoTestEqual(f, g) {
				t.Fatalf("round trip of %d/%d: %d, %v", off, l, n, err)
			}
			if l > 64 {
				continue
			}
			for i := range len(enc) {
				if g, n, err := ParseCryptoFrame(enc[:i]); err == nil || n != 0 {
					t.Fatalf("%x: prefix %d parsed: %+v", enc, i, g)
				} else {
					ft1WantCode(t, err, FrameEncodingError, "CRYPTO prefix")
				}
			}
		}
	}
}

func TestCryptoFrameInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		hex  string
		code TransportErrorCode
	}{
		// RFC 9000, Section 19.6: offset + length > 2^62-1 is a
		// FRAME_ENCODING_ERROR (or CRYPTO_BUFFER_EXCEEDED).
		{"offset+len", "06 ffffffffffffffff 01 61", FrameEncodingError},
		{"offset+len large", "06 c000000000000001 7fff" + "00", FrameEncodingError},
		{"length beyond input", "06 00 04 616263", FrameEncodingError},
		{"empty", "", FrameEncodingError},
		{"wrong type", "07 01 61", FrameEncodingError},
		{"two-byte type", "4006 00 00", ProtocolViolation},
	} {
		f, n, err := ParseCryptoFrame(ft1Hex(t, tc.hex))
		if err == nil || n != 0 {
			t.Errorf("%s: parsed %+v, %d", tc.name, f, n)
			continue
		}
		ft1WantCode(t, err, tc.code, tc.name)
	}
	if f, _, err := ParseCryptoFrame(ft1Hex(t, "06 fffffffffffffffe 01 61")); err != nil || f.Offset != MaxVarint-1 {
		t.Errorf("offset+len == 2^62-1: %+v, %v", f, err)
	}
}

func TestCryptoFrameMaxDataLen(t *testing.T) {
	data := make([]byte, 20000)
	for _, off := range []uint64{0, 63, 64, 16384, 1 << 30, MaxVarint - 70, MaxVarint} {
		f := CryptoFrame{Offset: off}
		enc := func(m int) int { return CryptoFrame{Offset: off, Data: data[:m]}.EncodedLen() }
		for _, room := range ft1Rooms() {
			ft1CheckMaxDataLen(t, "CRYPTO", room, f.MaxDataLen(room), MaxVarint-off, enc)
		}
	}
	for room, want := range map[int]int{2: 0, 3: 0, 4: 1, 66: 63, 67: 63, 68: 64, 16387: 16383, 16389: 16383, 16390: 16384} {
		if got := (CryptoFrame{}).MaxDataLen(room); got != want {
			t.Errorf("MaxDataLen(%d) = %d; want %d", room, got, want)
		}
	}
}

func TestCryptoFrameAllocs(t *testing.T) {
	in := CryptoFrame{Offset: 1000, Data: make([]byte, 1100)}.Append(nil)
	buf := make([]byte, 0, 1500)
	ft1CheckAllocs(t, "CRYPTO parse+append", func() {
		f, _, err := ParseCryptoFrame(in)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Append(buf[:0])
	})
}

func FuzzParseCryptoFrame(f *testing.F) {
	f.Add(ft1Hex(f, "06 00 02 6869"))
	f.Add(ft1Hex(f, "06 4001 40 01 00"))
	f.Add(ft1Hex(f, "06 fffffffffffffffe 01 61"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fr, n, err := ParseCryptoFrame(in)
		if err != nil {
			var te *TransportError
			if !errors.As(err, &te) || n != 0 {
				t.Fatalf("bad failure: %d, %v", n, err)
			}
			return
		}
		if n <= 0 || n > len(in) || fr.Offset+uint64(len(fr.Data)) > MaxVarint {
			t.Fatalf("parsed %+v, n = %d of %d", fr, n, len(in))
		}
		enc := fr.Append(nil)
		if len(enc) != fr.EncodedLen() || len(enc) > n {
			t.Fatalf("Append wrote %d bytes, EncodedLen %d, parsed %d", len(enc), fr.EncodedLen(), n)
		}
		g, m, err := ParseCryptoFrame(enc)
		if err != nil || m != len(enc) || !cryptoTestEqual(fr, g) {
			t.Fatalf("round trip: %+v -> %x -> %+v, %d, %v", fr, enc, g, m, err)
		}
	})
}
