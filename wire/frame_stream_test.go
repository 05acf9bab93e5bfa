package wire

import (
	"bytes"
	"errors"
	"testing"
)

func streamTestEqual(a, b StreamFrame) bool {
	return a.StreamID == b.StreamID && a.Offset == b.Offset && bytes.Equal(a.Data, b.Data) &&
		a.Fin == b.Fin && a.HasLength == b.HasLength
}

func TestStreamFrameEncoding(t *testing.T) {
	for _, tc := range []struct {
		f   StreamFrame
		hex string
	}{
		// OFF|LEN|FIN, stream 4, offset 64 (two-byte varint), length 3.
		{StreamFrame{StreamID: 4, Offset: 64, Data: []byte("abc"), Fin: true, HasLength: true}, "0f 04 4040 03 616263"},
		// Offset 0 is written without the OFF bit; no LEN: data to the end.
		{StreamFrame{StreamID: 1, Data: []byte("abc")}, "08 01 616263"},
		{StreamFrame{StreamID: 1, Fin: true}, "09 01"},
		{StreamFrame{StreamID: MaxStreamID, Offset: 1, HasLength: true}, "0e ffffffffffffffff 01 00"},
	} {
		want := ft1Hex(t, tc.hex)
		if got := tc.f.Append(nil); !bytes.Equal(got, want) {
			t.Errorf("Append(%+v) = %x; want %x", tc.f, got, want)
		}
		if tc.f.EncodedLen() != len(want) || tc.f.HeaderLen() != len(want)-len(tc.f.Data) {
			t.Errorf("%+v: EncodedLen %d, HeaderLen %d; want %d", tc.f, tc.f.EncodedLen(), tc.f.HeaderLen(), len(want))
		}
		g, n, err := ParseStreamFrame(want)
		if err != nil || n != len(want) || !streamTestEqual(g, tc.f) {
			t.Errorf("ParseStreamFrame(%x) = %+v, %d, %v", want, g, n, err)
		}
	}
}

// All eight type bytes 0x08-0x0f parse, with the fields their bits select.
func TestStreamFrameAllTypes(t *testing.T) {
	for typ := byte(0x08); typ <= 0x0f; typ++ {
		in := []byte{typ, 0x05}
		if typ&0x04 != 0 {
			in = append(in, 0x43, 0xe8) // offset 1000
		}
		if typ&0x02 != 0 {
			in = append(in, 0x03) // length 3
		}
		in = append(in, 'a', 'b', 'c')
		f, n, err := ParseStreamFrame(append(in, 0x01)[:len(in)])
		if err != nil || n != len(in) {
			t.Fatalf("type %#x: %d, %v", typ, n, err)
		}
		want := StreamFrame{StreamID: 5, Data: []byte("abc"), Fin: typ&1 != 0, HasLength: typ&2 != 0}
		if typ&0x04 != 0 {
			want.Offset = 1000
		}
		if !streamTestEqual(f, want) {
			t.Errorf("type %#x: %+v; want %+v", typ, f, want)
		}
		if enc := f.Append(nil); !bytes.Equal(enc, in) {
			t.Errorf("type %#x: re-encoded as %x; want %x", typ, enc, in)
		}
	}
	// A LEN frame stops at its length; what follows is the next frame.
	if f, n, err := ParseStreamFrame(ft1Hex(t, "0a 05 02 6162 01")); err != nil || n != 5 || string(f.Data) != "ab" {
		t.Errorf("LEN frame followed by PING: %+v, %d, %v", f, n, err)
	}
	// The OFF bit with an Offset of 0 is valid and means offset 0; it is
	// written back without the OFF bit.
	f, n, err := ParseStreamFrame(ft1Hex(t, "0d 05 00 616263"))
	if err != nil || n != 6 || !streamTestEqual(f, StreamFrame{StreamID: 5, Data: []byte("abc"), Fin: true}) {
		t.Errorf("OFF bit with offset 0: %+v, %d, %v", f, n, err)
	}
	if enc := f.Append(nil); !bytes.Equal(enc, ft1Hex(t, "09 05 616263")) {
		t.Errorf("OFF bit with offset 0 re-encoded as %x", enc)
	}
}

func TestStreamFrameRoundTrip(t *testing.T) {
	data := bytes.Repeat([]byte{0x5a}, 16385)
	var frames []StreamFrame
	for _, id := range []StreamID{0, 63, 64, 16383, 16384, MaxStreamID} {
		for _, off := range []uint64{0, 1, 63, 64, 1 << 30, MaxVarint - 16385, MaxVarint} {
			for _, l := range []int{0, 1, 63, 64, 1200, 16383, 16384, 16385} {
				if off+uint64(l) > MaxVarint || (l > 64 && id != 0) {
					continue
				}
				for flags := range 4 {
					frames = append(frames, StreamFrame{
						StreamID: id, Offset: off, Data: data[:l],
						Fin: flags&1 != 0, HasLength: flags&2 != 0,
					})
				}
			}
		}
	}
	for _, f := range frames {
		enc := f.Append(make([]byte, 0, 8))
		if len(enc) != f.EncodedLen() || f.HeaderLen()+len(f.Data) != len(enc) {
			t.Fatalf("%+v: EncodedLen %d, HeaderLen %d, Append wrote %d", f, f.EncodedLen(), f.HeaderLen(), len(enc))
		}
		g, n, err := ParseStreamFrame(enc)
		if err != nil || n != len(enc) || !streamTestEqual(f, g) {
			t.Fatalf("round trip of id %d off %d len %d: %d, %v", f.StreamID, f.Offset, len(f.Data), n, err)
		}
		if len(f.Data) > 64 {
			continue
		}
		// Prefixes: with a Length field every proper prefix is truncated;
		// without one, a prefix that holds the header is a valid frame
		// with less data.
		hdr := f.HeaderLen()
		for i := range len(enc) {
			g, n, err := ParseStreamFrame(enc[:i])
			if f.HasLength || i < hdr {
				if err == nil || n != 0 {
					t.Fatalf("%x: prefix %d parsed: %+v", enc, i, g)
				}
				ft1WantCode(t, err, FrameEncodingError, "STREAM prefix")
				continue
			}
			want := f
			want.Data = f.Data[:i-hdr]
			if err != nil || n != i || !streamTestEqual(g, want) {
				t.Fatalf("%x: prefix %d: %+v, %d, %v", enc, i, g, n, err)
			}
		}
	}
}

func TestStreamFrameInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		hex  string
		code TransportErrorCode
	}{
		// RFC 9000, Section 19.8: offset + length > 2^62-1 is a
		// FRAME_ENCODING_ERROR (or FLOW_CONTROL_ERROR).
		{"offset+len with LEN", "0e 00 ffffffffffffffff 01 61", FrameEncodingError},
		{"offset+len without LEN", "0c 00 ffffffffffffffff 61", FrameEncodingError},
		{"offset+len large", "0e 00 c000000000000001 7fff" + "00", FrameEncodingError},
		{"length beyond input", "0a 00 04 616263", FrameEncodingError},
		{"truncated stream ID", "08 40", FrameEncodingError},
		{"truncated offset", "0c 00 80", FrameEncodingError},
		{"empty", "", FrameEncodingError},
		{"wrong type", "10 00", FrameEncodingError},
		{"two-byte type", "4008 00", ProtocolViolation},
		{"unknown type", "21 00", FrameEncodingError},
	} {
		f, n, err := ParseStreamFrame(ft1Hex(t, tc.hex))
		if err == nil || n != 0 {
			t.Errorf("%s: parsed %+v, %d", tc.name, f, n)
			continue
		}
		ft1WantCode(t, err, tc.code, tc.name)
		var te *TransportError
		if errors.As(err, &te) && tc.code == FrameEncodingError && tc.name != "empty" && tc.name != "wrong type" &&
			tc.name != "unknown type" && !te.FrameType.IsStream() {
			t.Errorf("%s: error frame type %v", tc.name, te.FrameType)
		}
	}
	// Exactly 2^62-1 is allowed.
	if f, _, err := ParseStreamFrame(ft1Hex(t, "0e 00 fffffffffffffffe 01 61")); err != nil || f.Offset != MaxVarint-1 {
		t.Errorf("offset+len == 2^62-1: %+v, %v", f, err)
	}
	for name, f := range map[string]StreamFrame{
		"negative ID":  {StreamID: -1},
		"ID too large": {StreamID: MaxStreamID + 1},
		"offset":       {Offset: MaxVarint + 1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Append did not panic", name)
				}
			}()
			f.Append(nil)
		}()
	}
}

func TestStreamFrameMaxDataLen(t *testing.T) {
	data := make([]byte, 20000)
	for _, id := range []StreamID{0, 64, 16384, MaxStreamID} {
		for _, off := range []uint64{0, 1, 16384, MaxVarint - 70, MaxVarint - 1, MaxVarint} {
			for _, hasLen := range []bool{false, true} {
				f := StreamFrame{StreamID: id, Offset: off, HasLength: hasLen, Fin: true}
				enc := func(m int) int {
					g := f
					g.Data = data[:m]
					return g.EncodedLen()
				}
				for _, room := range ft1Rooms() {
					ft1CheckMaxDataLen(t, "STREAM", room, f.MaxDataLen(room), MaxVarint-off, enc)
				}
			}
		}
	}
	// Exact values around the Length varint boundaries: header 2 bytes
	// (type, stream ID 0) plus the Length field.
	f := StreamFrame{HasLength: true}
	for room, want := range map[int]int{
		0: 0, 1: 0, 2: 0, 3: 0, 4: 1, 65: 62, 66: 63, 67: 63, 68: 64,
		16386: 16382, 16387: 16383, 16388: 16383, 16389: 16383, 16390: 16384,
	} {
		if got := f.MaxDataLen(room); got != want {
			t.Errorf("MaxDataLen(%d) = %d; want %d", room, got, want)
		}
	}
	// Beyond the sizes a test can allocate, check with the formula.
	for _, room := range []int{1073741820, 1073741827, 1073741828, 1073741829, 1073741830, 1073741831, 1073741833, 1 << 40} {
		n := f.MaxDataLen(room)
		size := func(m int) int { return 1 + 1 + VarintLen(uint64(m)) + m }
		if size(n) > room || size(n+1) <= room {
			t.Errorf("MaxDataLen(%d) = %d: size %d, next %d", room, n, size(n), size(n+1))
		}
	}
	// The data length is capped at 2^62-1 minus the offset.
	for _, f := range []StreamFrame{{}, {HasLength: true}, {Offset: 100}} {
		if n := f.MaxDataLen(1<<62 + 100); n != int(MaxVarint-f.Offset) {
			t.Errorf("%+v: MaxDataLen(2^62+100) = %d; want 2^62-1-Offset", f, n)
		}
	}
}

func TestStreamFrameAllocs(t *testing.T) {
	in := StreamFrame{StreamID: 8, Offset: 12345, Data: make([]byte, 1200), HasLength: true}.Append(nil)
	buf := make([]byte, 0, 1500)
	ft1CheckAllocs(t, "STREAM parse+append", func() {
		f, _, err := ParseStreamFrame(in)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Append(buf[:0])
		_ = f.MaxDataLen(1000)
	})
}

func FuzzParseStreamFrame(f *testing.F) {
	f.Add(ft1Hex(f, "0f 04 4040 03 616263"))
	f.Add(ft1Hex(f, "08 01 616263"))
	f.Add(ft1Hex(f, "0d 05 00 616263"))
	f.Add(ft1Hex(f, "0e 00 fffffffffffffffe 01 61"))
	f.Add(ft1Hex(f, "0b ffffffffffffffff 00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fr, n, err := ParseStreamFrame(in)
		if err != nil {
			var te *TransportError
			if !errors.As(err, &te) || n != 0 {
				t.Fatalf("bad failure: %d, %v", n, err)
			}
			return
		}
		if n <= 0 || n > len(in) || (!fr.HasLength && n != len(in)) || fr.Offset+uint64(len(fr.Data)) > MaxVarint {
			t.Fatalf("parsed %+v, n = %d of %d", fr, n, len(in))
		}
		enc := fr.Append(nil)
		if len(enc) != fr.EncodedLen() || len(enc) > n {
			t.Fatalf("Append wrote %d bytes, EncodedLen %d, parsed %d", len(enc), fr.EncodedLen(), n)
		}
		g, m, err := ParseStreamFrame(enc)
		if err != nil || m != len(enc) || !streamTestEqual(fr, g) {
			t.Fatalf("round trip: %+v -> %x -> %+v, %d, %v", fr, enc, g, m, err)
		}
	})
}

func BenchmarkParseStreamFrame(b *testing.B) {
	in := StreamFrame{StreamID: 8, Offset: 1 << 20, Data: make([]byte, 1200), HasLength: true}.Append(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, _, err := ParseStreamFrame(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendStreamFrame(b *testing.B) {
	f := StreamFrame{StreamID: 8, Offset: 1 << 20, Data: make([]byte, 1200), HasLength: true}
	buf := make([]byte, 0, 1500)
	b.ReportAllocs()
	b.SetBytes(int64(f.EncodedLen()))
	for b.Loop() {
		buf = f.Append(buf[:0])
	}
}
