package wire

import (
	"bytes"
	"errors"
	"testing"
)

func connectionCloseTestEqual(a, b ConnectionCloseFrame) bool {
	return a.IsApplication == b.IsApplication && a.ErrorCode == b.ErrorCode &&
		a.FrameType == b.FrameType && bytes.Equal(a.Reason, b.Reason)
}

func TestConnectionCloseFrameEncoding(t *testing.T) {
	for _, tc := range []struct {
		f   ConnectionCloseFrame
		hex string
	}{
		{ConnectionCloseFrame{ErrorCode: uint64(ProtocolViolation), FrameType: FrameTypeStream, Reason: []byte("bad")},
			"1c 0a 08 03 626164"},
		{ConnectionCloseFrame{ErrorCode: uint64(CryptoError(0x2a)), FrameType: FrameTypeAckFrequency},
			"1c 412a 40af 00"},
		{ConnectionCloseFrame{IsApplication: true, ErrorCode: 0x100}, "1d 4100 00"},
		{ConnectionCloseFrame{IsApplication: true, ErrorCode: MaxVarint, Reason: []byte("x")},
			"1d ffffffffffffffff 01 78"},
	} {
		want := ft1Hex(t, tc.hex)
		if got := tc.f.Append(nil); !bytes.Equal(got, want) || tc.f.EncodedLen() != len(want) {
			t.Errorf("Append(%+v) = %x, EncodedLen %d; want %x", tc.f, got, tc.f.EncodedLen(), want)
		}
		g, n, err := ParseConnectionCloseFrame(append(want, 0x00))
		if err != nil || n != len(want) || !connectionCloseTestEqual(g, tc.f) {
			t.Errorf("ParseConnectionCloseFrame(%x) = %+v, %d, %v", want, g, n, err)
		}
	}
	// The Frame Type field is a varint of any length.
	if f, n, err := ParseConnectionCloseFrame(ft1Hex(t, "1c 07 80000008 00")); err != nil || n != 7 || f.FrameType != FrameTypeStream {
		t.Errorf("four-byte frame type: %+v, %d, %v", f, n, err)
	}
	// Type 0x1d has no Frame Type field, and FrameType is ignored.
	f := ConnectionCloseFrame{IsApplication: true, ErrorCode: 1, FrameType: FrameTypeCrypto}
	if enc := f.Append(nil); !bytes.Equal(enc, ft1Hex(t, "1d 01 00")) || f.EncodedLen() != 3 {
		t.Errorf("application close with a frame type: %x", enc)
	}
}

func TestConnectionCloseFrameRoundTrip(t *testing.T) {
	reason := bytes.Repeat([]byte("r"), 16384)
	for _, app := range []bool{false, true} {
		for _, code := range []uint64{0, 64, MaxVarint} {
			for _, ft := range []FrameType{0, FrameTypeAckFrequency, MaxVarint} {
				for _, l := range []int{0, 1, 64, 16384} {
					f := ConnectionCloseFrame{IsApplication: app, ErrorCode: code, Reason: reason[:l]}
					if !app {
						f.FrameType = ft
					}
					enc := f.Append(nil)
					if len(enc) != f.EncodedLen() {
						t.Fatalf("%+v: EncodedLen %d, Append wrote %d", f, f.EncodedLen(), len(enc))
					}
					g, n, err := ParseConnectionCloseFrame(enc)
					if err != nil || n != len(enc) || !connectionCloseTestEqual(f, g) {
						t.Fatalf("round trip of %v/%d/%v/%d: %d, %v", app, code, ft, l, n, err)
					}
					if l > 64 {
						continue
					}
					for i := range len(enc) {
						if g, n, err := ParseConnectionCloseFrame(enc[:i]); err == nil || n != 0 {
							t.Fatalf("%x: prefix %d parsed: %+v", enc, i, g)
						} else {
							ft1WantCode(t, err, FrameEncodingError, "CONNECTION_CLOSE prefix")
						}
					}
				}
			}
		}
	}
}

func TestConnectionCloseFrameInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		hex  string
		code TransportErrorCode
	}{
		{"reason beyond input", "1c 0a 08 04 626164", FrameEncodingError},
		{"app reason beyond input", "1d 0a 04 626164", FrameEncodingError},
		{"huge reason length", "1d 00 ffffffffffffffff", FrameEncodingError},
		{"truncated frame type", "1c 0a 40", FrameEncodingError},
		{"empty", "", FrameEncodingError},
		{"wrong type", "1e", FrameEncodingError},
		{"two-byte type", "401c 00 00 00", ProtocolViolation},
	} {
		f, n, err := ParseConnectionCloseFrame(ft1Hex(t, tc.hex))
		if err == nil || n != 0 {
			t.Errorf("%s: parsed %+v, %d", tc.name, f, n)
			continue
		}
		ft1WantCode(t, err, tc.code, tc.name)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Append of an error code above 2^62-1 did not panic")
			}
		}()
		ConnectionCloseFrame{ErrorCode: MaxVarint + 1}.Append(nil)
	}()
}

func TestConnectionCloseFrameAllocs(t *testing.T) {
	in := ConnectionCloseFrame{ErrorCode: 0x0a, FrameType: 0x08, Reason: []byte("stream state")}.Append(nil)
	buf := make([]byte, 0, 100)
	ft1CheckAllocs(t, "CONNECTION_CLOSE parse+append", func() {
		f, _, err := ParseConnectionCloseFrame(in)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Append(buf[:0])
	})
}

func FuzzParseConnectionCloseFrame(f *testing.F) {
	f.Add(ft1Hex(f, "1c 0a 08 03 626164"))
	f.Add(ft1Hex(f, "1d 4100 00"))
	f.Add(ft1Hex(f, "1c 07 80000008 00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fr, n, err := ParseConnectionCloseFrame(in)
		if err != nil {
			var te *TransportError
			if !errors.As(err, &te) || n != 0 {
				t.Fatalf("bad failure: %d, %v", n, err)
			}
			return
		}
		if n <= 0 || n > len(in) || (fr.IsApplication && fr.FrameType != 0) {
			t.Fatalf("parsed %+v, n = %d of %d", fr, n, len(in))
		}
		enc := fr.Append(nil)
		if len(enc) != fr.EncodedLen() || len(enc) > n {
			t.Fatalf("Append wrote %d bytes, EncodedLen %d, parsed %d", len(enc), fr.EncodedLen(), n)
		}
		g, m, err := ParseConnectionCloseFrame(enc)
		if err != nil || m != len(enc) || !connectionCloseTestEqual(fr, g) {
			t.Fatalf("round trip: %+v -> %x -> %+v, %d, %v", fr, enc, g, m, err)
		}
	})
}
