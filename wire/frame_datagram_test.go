package wire

import (
	"bytes"
	"errors"
	"testing"
)

func datagramTestEqual(a, b DatagramFrame) bool {
	return a.HasLength == b.HasLength && bytes.Equal(a.Data, b.Data)
}

func TestDatagramFrameEncoding(t *testing.T) {
	for _, tc := range []struct {
		f   DatagramFrame
		hex string
	}{
		{DatagramFrame{Data: []byte("hi"), HasLength: true}, "31 02 6869"},
		{DatagramFrame{Data: []byte("hi")}, "30 6869"},
		// "Note that empty (i.e., zero-length) datagrams are allowed."
		{DatagramFrame{HasLength: true}, "31 00"},
		{DatagramFrame{}, "30"},
	} {
		want := ft1Hex(t, tc.hex)
		if got := tc.f.Append(nil); !bytes.Equal(got, want) {
			t.Errorf("Append(%+v) = %x; want %x", tc.f, got, want)
		}
		if tc.f.EncodedLen() != len(want) || tc.f.HeaderLen() != len(want)-len(tc.f.Data) {
			t.Errorf("%+v: EncodedLen %d, HeaderLen %d; want %d", tc.f, tc.f.EncodedLen(), tc.f.HeaderLen(), len(want))
		}
		g, n, err := ParseDatagramFrame(want)
		if err != nil || n != len(want) || !datagramTestEqual(g, tc.f) {
			t.Errorf("ParseDatagramFrame(%x) = %+v, %d, %v", want, g, n, err)
		}
	}
	// With a Length field the frame stops there; without, it takes the rest.
	in := ft1Hex(t, "31 01 61 01")
	if f, n, err := ParseDatagramFrame(in); err != nil || n != 3 || string(f.Data) != "a" {
		t.Errorf("0x31 followed by PING: %+v, %d, %v", f, n, err)
	}
	in[0] = 0x30
	if f, n, err := ParseDatagramFrame(in); err != nil || n != 4 || !bytes.Equal(f.Data, in[1:]) {
		t.Errorf("0x30: %+v, %d, %v", f, n, err)
	}
}

func TestDatagramFrameRoundTrip(t *testing.T) {
	data := bytes.Repeat([]byte{0x77}, 16384)
	for _, l := range []int{0, 1, 63, 64, 1200, 16383, 16384} {
		for _, hasLen := range []bool{false, true} {
			f := DatagramFrame{Data: data[:l], HasLength: hasLen}
			enc := f.Append(nil)
			if len(enc) != f.EncodedLen() {
				t.Fatalf("%+v: EncodedLen %d, Append wrote %d", f, f.EncodedLen(), len(enc))
			}
			g, n, err := ParseDatagramFrame(enc)
			if err != nil || n != len(enc) || !datagramTestEqual(f, g) {
				t.Fatalf("round trip of %d bytes, length %v: %d, %v", l, hasLen, n, err)
			}
			if l > 64 {
				continue
			}
			for i := range len(enc) {
				g, n, err := ParseDatagramFrame(enc[:i])
				if hasLen || i == 0 {
					if err == nil || n != 0 {
						t.Fatalf("%x: prefix %d parsed: %+v", enc, i, g)
					}
					ft1WantCode(t, err, FrameEncodingError, "DATAGRAM prefix")
					continue
				}
				// Without a Length field a prefix is a shorter datagram.
				if err != nil || n != i || !bytes.Equal(g.Data, enc[1:i]) || g.HasLength {
					t.Fatalf("%x: prefix %d: %+v, %d, %v", enc, i, g, n, err)
				}
			}
		}
	}
}

func TestDatagramFrameInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		hex  string
		code TransportErrorCode
	}{
		{"length beyond input", "31 04 616263", FrameEncodingError},
		{"truncated length", "31 40", FrameEncodingError},
		{"empty", "", FrameEncodingError},
		{"wrong type", "32", FrameEncodingError},
		{"STREAM type", "08 00", FrameEncodingError},
		{"two-byte type", "4031 00", ProtocolViolation},
	} {
		f, n, err := ParseDatagramFrame(ft1Hex(t, tc.hex))
		if err == nil || n != 0 {
			t.Errorf("%s: parsed %+v, %d", tc.name, f, n)
			continue
		}
		ft1WantCode(t, err, tc.code, tc.name)
	}
}

func TestDatagramFrameMaxDataLen(t *testing.T) {
	data := make([]byte, 20000)
	for _, hasLen := range []bool{false, true} {
		f := DatagramFrame{HasLength: hasLen}
		enc := func(m int) int { return DatagramFrame{Data: data[:m], HasLength: hasLen}.EncodedLen() }
		for _, room := range ft1Rooms() {
			ft1CheckMaxDataLen(t, "DATAGRAM", room, f.MaxDataLen(room), MaxVarint, enc)
		}
	}
	for room, want := range map[int]int{0: 0, 1: 0, 2: 0, 3: 1, 65: 63, 66: 63, 67: 64, 16386: 16383, 16388: 16383, 16389: 16384} {
		if got := (DatagramFrame{HasLength: true}).MaxDataLen(room); got != want {
			t.Errorf("MaxDataLen(%d) = %d; want %d", room, got, want)
		}
	}
	if got := (DatagramFrame{}).MaxDataLen(1200); got != 1199 {
		t.Errorf("MaxDataLen(1200) without length = %d; want 1199", got)
	}
}

func TestDatagramFrameAllocs(t *testing.T) {
	in := DatagramFrame{Data: make([]byte, 1000), HasLength: true}.Append(nil)
	buf := make([]byte, 0, 1500)
	ft1CheckAllocs(t, "DATAGRAM parse+append", func() {
		f, _, err := ParseDatagramFrame(in)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Append(buf[:0])
	})
}

func FuzzParseDatagramFrame(f *testing.F) {
	f.Add(ft1Hex(f, "31 02 6869"))
	f.Add(ft1Hex(f, "30 6869"))
	f.Add(ft1Hex(f, "31 4001 61 01"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fr, n, err := ParseDatagramFrame(in)
		if err != nil {
			var te *TransportError
			if !errors.As(err, &te) || n != 0 {
				t.Fatalf("bad failure: %d, %v", n, err)
			}
			return
		}
		if n <= 0 || n > len(in) || (!fr.HasLength && n != len(in)) {
			t.Fatalf("parsed %+v, n = %d of %d", fr, n, len(in))
		}
		enc := fr.Append(nil)
		if len(enc) != fr.EncodedLen() || len(enc) > n {
			t.Fatalf("Append wrote %d bytes, EncodedLen %d, parsed %d", len(enc), fr.EncodedLen(), n)
		}
		g, m, err := ParseDatagramFrame(enc)
		if err != nil || m != len(enc) || !datagramTestEqual(fr, g) {
			t.Fatalf("round trip: %+v -> %x -> %+v, %d, %v", fr, enc, g, m, err)
		}
	})
}
