package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// hdrHex decodes a hex string that may contain spaces and newlines, as the
// RFC appendices print them.
func hdrHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// hdrWantProtocolViolation fails unless err is a PROTOCOL_VIOLATION
// *TransportError.
func hdrWantProtocolViolation(t testing.TB, what string, err error) {
	t.Helper()
	var te *TransportError
	if !errors.As(err, &te) || te.Code != ProtocolViolation {
		t.Errorf("%s: error %v; want PROTOCOL_VIOLATION", what, err)
	}
}

// hdrLongEqual compares two long headers, tokens by content.
func hdrLongEqual(a, b LongHeader) bool {
	return a.Type == b.Type && a.Version == b.Version &&
		a.DstConnID == b.DstConnID && a.SrcConnID == b.SrcConnID &&
		bytes.Equal(a.Token, b.Token) && a.Length == b.Length
}

// hdrPadTo returns header followed by zero bytes so that the packet holds
// the Length bytes its Length field announces after pnOff.
func hdrPadTo(header []byte, pnOff int, length uint64) []byte {
	need := pnOff + int(length)
	for len(header) < need {
		header = append(header, 0)
	}
	return header
}

// RFC 9001, Appendix A.2 and A.3, and RFC 9369, Appendix A.2 and A.3:
// the unprotected headers of the sample client and server Initial packets.
var hdrLongVectors = []struct {
	name   string
	hex    string
	want   LongHeader
	pn     PacketNumber
	pnLen  int
	pnOff  int
	packet string // the protected packet, when short enough to include
}{
	{
		name: "RFC 9001 A.2 client Initial", hex: "c300000001088394c8f03e5157080000449e00000002",
		want: LongHeader{Type: PacketTypeInitial, Version: Version1,
			DstConnID: NewConnectionID([]byte{0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08}),
			Token:     []byte{}, Length: 1182},
		pn: 2, pnLen: 4, pnOff: 18,
	},
	{
		name: "RFC 9001 A.3 server Initial", hex: "c1000000010008f067a5502a4262b50040750001",
		want: LongHeader{Type: PacketTypeInitial, Version: Version1,
			SrcConnID: NewConnectionID([]byte{0xf0, 0x67, 0xa5, 0x50, 0x2a, 0x42, 0x62, 0xb5}),
			Token:     []byte{}, Length: 117},
		pn: 1, pnLen: 2, pnOff: 18,
		packet: `cf000000010008f067a5502a4262b500 4075c0d95a482cd0991cd25b0aac406a
			5816b6394100f37a1c69797554780bb3 8cc5a99f5ede4cf73c3ec2493a1839b3
			dbcba3f6ea46c5b7684df3548e7ddeb9 c3bf9c73cc3f3bded74b562bfb19fb84
			022f8ef4cdd93795d77d06edbb7aaf2f 58891850abbdca3d20398c276456cbc4
			2158407dd074ee`,
	},
	{
		name: "RFC 9369 A.2 client Initial", hex: "d36b3343cf088394c8f03e5157080000449e00000002",
		want: LongHeader{Type: PacketTypeInitial, Version: Version2,
			DstConnID: NewConnectionID([]byte{0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08}),
			Token:     []byte{}, Length: 1182},
		pn: 2, pnLen: 4, pnOff: 18,
	},
	{
		name: "RFC 9369 A.3 server Initial", hex: "d16b3343cf0008f067a5502a4262b50040750001",
		want: LongHeader{Type: PacketTypeInitial, Version: Version2,
			SrcConnID: NewConnectionID([]byte{0xf0, 0x67, 0xa5, 0x50, 0x2a, 0x42, 0x62, 0xb5}),
			Token:     []byte{}, Length: 117},
		pn: 1, pnLen: 2, pnOff: 18,
		packet: `dc6b3343cf0008f067a5502a4262b500 4075d92faaf16f05d8a4398c47089698
			baeea26b91eb761d9b89237bbf872630 17915358230035f7fd3945d88965cf17
			f9af6e16886c61bfc703106fbaf3cb4c fa52382dd16a393e42757507698075b2
			c984c707f0a0812d8cd5a6881eaf21ce da98f4bd23f6fe1a3e2c43edd9ce7ca8
			4bed8521e2e140`,
	},
}

func TestLongHeaderRFCVectors(t *testing.T) {
	for _, tc := range hdrLongVectors {
		t.Run(tc.name, func(t *testing.T) {
			header := hdrHex(t, tc.hex)
			if got := tc.want.Append(nil, tc.pn, tc.pnLen); !bytes.Equal(got, header) {
				t.Errorf("Append = %x; want %x", got, header)
			}
			if n := tc.want.HeaderLen(tc.pnLen); n != len(header) {
				t.Errorf("HeaderLen = %d; want %d", n, len(header))
			}
			in := hdrPadTo(append([]byte(nil), header...), tc.pnOff, tc.want.Length)
			h, n, err := ParseLongHeader(in)
			if err != nil || n != tc.pnOff || !hdrLongEqual(h, tc.want) {
				t.Fatalf("ParseLongHeader = %+v, %d, %v; want %+v, %d", h, n, err, tc.want, tc.pnOff)
			}
			if pnl := PacketNumberLenFromFirstByte(in[0]); pnl != tc.pnLen {
				t.Errorf("packet number length %d; want %d", pnl, tc.pnLen)
			}
			if pn, ok := ParseTruncatedPacketNumber(in[n:], tc.pnLen); !ok || pn != uint64(tc.pn) {
				t.Errorf("packet number %d, %v; want %d", pn, ok, tc.pn)
			}
			if err := CheckReservedBits(in[0], true); err != nil {
				t.Errorf("CheckReservedBits: %v", err)
			}
			if tc.packet == "" {
				return
			}
			// The fields ParseLongHeader reads are not protected, so it
			// parses the protected packet too, which ends exactly at
			// pnOff+Length.
			pkt := hdrHex(t, tc.packet)
			h, n, err = ParseLongHeader(pkt)
			if err != nil || n != tc.pnOff || !hdrLongEqual(h, tc.want) || n+int(h.Length) != len(pkt) {
				t.Fatalf("protected: ParseLongHeader = %+v, %d, %v (packet %d bytes)", h, n, err, len(pkt))
			}
		})
	}
}

func hdrLongRoundTripCases() []LongHeader {
	cid20 := NewConnectionID(bytes.Repeat([]byte{0xab}, 20))
	cid8 := NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	longToken := bytes.Repeat([]byte{0x5a}, 1000)
	var hs []LongHeader
	for _, v := range []Version{Version1, Version2} {
		for _, typ := range []PacketType{PacketTypeInitial, PacketType0RTT, PacketTypeHandshake} {
			for _, dcid := range []ConnectionID{{}, cid8, cid20} {
				for _, scid := range []ConnectionID{{}, cid20} {
					tokens := [][]byte{nil}
					if typ == PacketTypeInitial {
						tokens = [][]byte{{}, {0x01}, longToken[:64], longToken}
					}
					for _, tok := range tokens {
						for _, l := range []uint64{0, 1, 63, 64, 1182, 16383, 16384} {
							hs = append(hs, LongHeader{Type: typ, Version: v,
								DstConnID: dcid, SrcConnID: scid, Token: tok, Length: l})
						}
					}
				}
			}
		}
	}
	return hs
}

func TestLongHeaderRoundTrip(t *testing.T) {
	buf := make([]byte, 0, 20000)
	for _, h := range hdrLongRoundTripCases() {
		for pnLen := 1; pnLen <= 4; pnLen++ {
			pn := PacketNumber(0x12345678)
			b := h.Append(buf[:0], pn, pnLen)
			if len(b) != h.HeaderLen(pnLen) {
				t.Fatalf("%+v: Append wrote %d bytes, HeaderLen %d", h, len(b), h.HeaderLen(pnLen))
			}
			pnOff := len(b) - pnLen
			// First byte: form and fixed bit, type bits, reserved 0, pnLen.
			bits, _ := longHeaderTypeBits(h.Version, h.Type)
			if want := 0xc0 | bits<<4 | byte(pnLen-1); b[0] != want {
				t.Fatalf("%+v: first byte %#x; want %#x", h, b[0], want)
			}
			// The Length field has the fixed width LengthFieldLen gives.
			lw := LengthFieldLen(h.Length)
			if v, n := ParseVarint(b[pnOff-lw:]); n != lw || v != h.Length {
				t.Fatalf("%+v: Length field %d in %d bytes", h, v, n)
			}
			in := hdrPadTo(b, pnOff, h.Length)
			got, n, err := ParseLongHeader(in)
			if err != nil || n != pnOff {
				t.Fatalf("%+v pnLen %d: ParseLongHeader: n=%d (want %d), %v", h, pnLen, n, pnOff, err)
			}
			want := h
			if want.Type != PacketTypeInitial {
				want.Token = nil
			}
			if !hdrLongEqual(got, want) {
				t.Fatalf("round trip: got %+v; want %+v", got, want)
			}
			if want.Type == PacketTypeInitial && len(got.Token) > 0 && &got.Token[0] != &in[pnOff-lw-len(got.Token)] {
				t.Fatalf("Token is not a sub-slice of the input")
			}
			if tpn, ok := ParseTruncatedPacketNumber(in[n:], pnLen); !ok || tpn != uint64(pn)&(1<<(8*pnLen)-1) {
				t.Fatalf("truncated packet number %#x", tpn)
			}
			if pt, err := PacketTypeOf(in); err != nil || pt != h.Type {
				t.Fatalf("PacketTypeOf = %v, %v; want %v", pt, err, h.Type)
			}
			// When the Length covers at least the packet number, proper
			// prefixes of the packet fail: those through the packet
			// number and the one missing just the last byte.
			if h.Length >= uint64(pnLen) {
				for i := 0; i < len(in); i++ {
					if i > pnOff+pnLen && i < len(in)-1 {
						continue
					}
					if _, _, err := ParseLongHeader(in[:i]); err == nil {
						t.Fatalf("%+v: prefix of %d/%d bytes parsed", h, i, len(in))
					}
				}
			}
		}
	}
}

// Every proper prefix of the header up to the packet number fails, whatever
// its Length, without panicking.
func TestLongHeaderPrefixes(t *testing.T) {
	for _, h := range hdrLongRoundTripCases() {
		b := h.Append(nil, 0, 1)
		for i := 0; i < len(b)-1; i++ {
			if _, _, err := ParseLongHeader(b[:i]); err == nil {
				t.Fatalf("%+v: prefix %x parsed", h, b[:i])
			}
		}
	}
	for _, tc := range hdrLongVectors {
		b := hdrHex(t, tc.hex)
		for i := 0; i < len(b); i++ {
			_, _, err := ParseLongHeader(b[:i])
			hdrWantProtocolViolation(t, tc.name, err)
		}
	}
}

func TestLongHeaderErrors(t *testing.T) {
	valid := hdrHex(t, "c1000000010008f067a5502a4262b50040750001")
	valid = hdrPadTo(valid, 18, 117)
	mod := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), valid...))
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short header", mod(func(b []byte) []byte { b[0] = 0x41; return b })},
		{"version negotiation", mod(func(b []byte) []byte { b[4] = 0; return b })},
		{"v1 Retry", mod(func(b []byte) []byte { b[0] = 0xf0; return b })},
		{"v2 Retry", hdrHex(t, "c06b3343cf0000746f6b656e00000000000000000000000000000000")},
		{"DCID 21 bytes", append(hdrHex(t, "c00000000115"), make([]byte, 60)...)},
		{"SCID 21 bytes", append(hdrHex(t, "c0000000010015"), make([]byte, 60)...)},
		{"token exceeds packet", hdrHex(t, "c00000000100000501020304")},
		{"token varint truncated", hdrHex(t, "c000000001000040")},
		{"Length exceeds packet", mod(func(b []byte) []byte { return b[:len(b)-1] })},
		{"Length exceeds packet (handshake)", hdrHex(t, "e000000001000005010203")},
		{"Length missing", hdrHex(t, "e00000000100")},
		{"Length truncated", hdrHex(t, "e0000000010000c0")},
	} {
		_, n, err := ParseLongHeader(tc.in)
		if err == nil || n != 0 {
			t.Errorf("%s: n=%d, err=%v; want error", tc.name, n, err)
			continue
		}
		hdrWantProtocolViolation(t, tc.name, err)
	}

	// Unknown versions, including reserved ones, are not protocol
	// violations but ErrUnsupportedVersion.
	for _, v := range []Version{0x00000002, 0x1a2a3a4a, 0xff00001d} {
		b := append([]byte(nil), valid...)
		b[1], b[2], b[3], b[4] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
		if _, _, err := ParseLongHeader(b); !errors.Is(err, ErrUnsupportedVersion) {
			t.Errorf("version %v: err %v; want ErrUnsupportedVersion", v, err)
		}
		// Even with connection IDs that version 1 would reject.
		b = append(hdrHex(t, "c0"), byte(v>>24), byte(v>>16), byte(v>>8), byte(v), 0xff)
		if _, _, err := ParseLongHeader(b); !errors.Is(err, ErrUnsupportedVersion) {
			t.Errorf("version %v, long DCID: err %v; want ErrUnsupportedVersion", v, err)
		}
	}

	// The Fixed Bit is not enforced (RFC 9287).
	b := append([]byte(nil), valid...)
	b[0] &^= 0x40
	if _, _, err := ParseLongHeader(b); err != nil {
		t.Errorf("cleared Fixed Bit: %v", err)
	}
	// Nor the reserved bits, which are protected.
	b[0] |= 0x0c
	if _, _, err := ParseLongHeader(b); err != nil {
		t.Errorf("reserved bits set: %v", err)
	}
	// Length exactly reaching the end is fine, even with trailing data.
	if _, n, err := ParseLongHeader(append(valid, 0xff, 0xff)); err != nil || n != 18 {
		t.Errorf("trailing data: %d, %v", n, err)
	}
}

func TestLongHeaderAppendPanics(t *testing.T) {
	for name, h := range map[string]LongHeader{
		"Retry":      {Type: PacketTypeRetry, Version: Version1},
		"1-RTT":      {Type: PacketType1RTT, Version: Version1},
		"VN":         {Type: PacketTypeVersionNegotiation, Version: Version1},
		"zero type":  {Version: Version1},
		"version 0":  {Type: PacketTypeInitial},
		"unknown v":  {Type: PacketTypeHandshake, Version: 0x1a2a3a4a},
		"bad pnLen0": {Type: PacketTypeHandshake, Version: Version1},
		"bad pnLen5": {Type: PacketTypeHandshake, Version: Version2},
	} {
		pnLen := 1
		switch name {
		case "bad pnLen0":
			pnLen = 0
		case "bad pnLen5":
			pnLen = 5
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Append did not panic", name)
				}
			}()
			h.Append(nil, 0, pnLen)
		}()
	}
}

func TestLengthFieldLen(t *testing.T) {
	for _, tc := range []struct {
		v uint64
		n int
	}{{0, 2}, {63, 2}, {64, 2}, {16383, 2}, {16384, 4}, {1<<30 - 1, 4}, {1 << 30, 8}} {
		if n := LengthFieldLen(tc.v); n != tc.n {
			t.Errorf("LengthFieldLen(%d) = %d; want %d", tc.v, n, tc.n)
		}
	}
	// A packer reserves the width for an upper bound and patches the field.
	h := LongHeader{Type: PacketTypeHandshake, Version: Version1, Length: 1200}
	b := h.Append(nil, 7, 2)
	lenOff := len(b) - 2 - LengthFieldLen(h.Length)
	b = append(b, make([]byte, 20)...)
	PutVarintWithLen(b[lenOff:], 22, LengthFieldLen(h.Length))
	got, n, err := ParseLongHeader(b)
	if err != nil || got.Length != 22 || n+22 != len(b) {
		t.Fatalf("patched Length: %+v, %d, %v", got, n, err)
	}
}

func TestFirstByteHelpers(t *testing.T) {
	for i := 0; i < 256; i++ {
		c := byte(i)
		if FixedBitSet(c) != (c&0x40 != 0) {
			t.Fatalf("FixedBitSet(%#x) wrong", c)
		}
		if PacketNumberLenFromFirstByte(c) != int(c&3)+1 {
			t.Fatalf("PacketNumberLenFromFirstByte(%#x) wrong", c)
		}
		if IsLongHeader(c) != (c&0x80 != 0) {
			t.Fatalf("IsLongHeader(%#x) wrong", c)
		}
		// RFC 9000, Section 17.2: long header reserved bits are 0x0c.
		if err := CheckReservedBits(c, true); (err != nil) != (c&0x0c != 0) {
			t.Fatalf("CheckReservedBits(%#x, long) = %v", c, err)
		} else if err != nil {
			hdrWantProtocolViolation(t, "long reserved bits", err)
		}
		// RFC 9000, Section 17.3.1: short header reserved bits are 0x18.
		if err := CheckReservedBits(c, false); (err != nil) != (c&0x18 != 0) {
			t.Fatalf("CheckReservedBits(%#x, short) = %v", c, err)
		} else if err != nil {
			hdrWantProtocolViolation(t, "short reserved bits", err)
		}
	}
}

func TestLongHeaderAllocs(t *testing.T) {
	h := LongHeader{Type: PacketTypeInitial, Version: Version2,
		DstConnID: NewConnectionID(bytes.Repeat([]byte{1}, 20)),
		SrcConnID: NewConnectionID([]byte{2, 3, 4, 5}),
		Token:     bytes.Repeat([]byte{9}, 100), Length: 1182}
	buf := make([]byte, 0, 2048)
	in := hdrPadTo(h.Append(nil, 1, 4), h.HeaderLen(4)-4, h.Length)
	garbage := []byte{0xc0, 0, 0, 0, 1, 21}
	allocs := testing.AllocsPerRun(100, func() {
		b := h.Append(buf[:0], 1, 4)
		if len(b) != h.HeaderLen(4) {
			t.Fatal("bad length")
		}
		if _, _, err := ParseLongHeader(in); err != nil {
			t.Fatal(err)
		}
		// Errors are preallocated: garbage does not allocate either.
		if _, _, err := ParseLongHeader(garbage); err == nil {
			t.Fatal("garbage parsed")
		}
	})
	if allocs != 0 {
		t.Fatalf("long header parse/append allocated %v times; want 0", allocs)
	}
}

func BenchmarkParseLongHeader(b *testing.B) {
	h := LongHeader{Type: PacketTypeInitial, Version: Version1,
		DstConnID: NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8}),
		SrcConnID: NewConnectionID([]byte{8, 7, 6, 5, 4, 3, 2, 1}),
		Token:     bytes.Repeat([]byte{9}, 32), Length: 1182}
	in := hdrPadTo(h.Append(nil, 1, 4), h.HeaderLen(4)-4, h.Length)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseLongHeader(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendLongHeader(b *testing.B) {
	h := LongHeader{Type: PacketTypeHandshake, Version: Version1,
		DstConnID: NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8}),
		SrcConnID: NewConnectionID([]byte{8, 7, 6, 5, 4, 3, 2, 1}),
		Length:    1182}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = h.Append(buf[:0], 12345, 2)
	}
}

// FuzzParseLongHeader checks that ParseLongHeader never panics and that a
// header it accepts survives Append and a second parse unchanged.
func FuzzParseLongHeader(f *testing.F) {
	for _, tc := range hdrLongVectors {
		f.Add(hdrPadTo(hdrHex(f, tc.hex), tc.pnOff, tc.want.Length))
	}
	f.Add(hdrHex(f, "e06b3343cf0401020304000501020304050600"))
	f.Add(hdrHex(f, "d0000000010000030501020304"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, n, err := ParseLongHeader(data)
		if err != nil {
			return
		}
		if n > len(data) || uint64(len(data)-n) < h.Length {
			t.Fatalf("n=%d Length=%d beyond %d bytes", n, h.Length, len(data))
		}
		if pt, err := PacketTypeOf(data); err != nil || pt != h.Type {
			t.Fatalf("PacketTypeOf = %v, %v; want %v", pt, err, h.Type)
		}
		if dcid, err := ParseDestConnectionID(data, 0); err != nil || dcid != h.DstConnID {
			t.Fatalf("ParseDestConnectionID = %v, %v; want %v", dcid, err, h.DstConnID)
		}
		pkt, _, err := NextPacket(data, 0)
		if err != nil || len(pkt) != n+int(h.Length) {
			t.Fatalf("NextPacket: %d bytes, %v; want %d", len(pkt), err, n+int(h.Length))
		}
		pnLen := PacketNumberLenFromFirstByte(data[0])
		out := h.Append(nil, 0, pnLen)
		if len(out) != h.HeaderLen(pnLen) {
			t.Fatalf("Append wrote %d bytes; HeaderLen %d", len(out), h.HeaderLen(pnLen))
		}
		out = append(out[:len(out)-pnLen], data[n:]...)
		h2, n2, err := ParseLongHeader(out)
		if err != nil {
			t.Fatalf("reparse of %x: %v", out, err)
		}
		if n2 != h.HeaderLen(pnLen)-pnLen || !hdrLongEqual(h, h2) {
			t.Fatalf("round trip: %+v, %d -> %+v, %d", h, n, h2, n2)
		}
	})
}
