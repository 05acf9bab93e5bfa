package wire

import (
	"bytes"
	"testing"
)

// RFC 9001, Appendix A.5 (and RFC 9369, Appendix A.5, which uses the same
// header): "unprotected header = 4200bff4" for an empty Destination
// Connection ID and packet number 654360564 encoded in 3 bytes.
func TestShortHeaderRFCVector(t *testing.T) {
	want := hdrHex(t, "4200bff4")
	h := ShortHeader{}
	if got := h.Append(nil, 654360564, 3); !bytes.Equal(got, want) {
		t.Fatalf("Append = %x; want %x", got, want)
	}
	if h.HeaderLen(3) != 4 {
		t.Fatalf("HeaderLen = %d", h.HeaderLen(3))
	}
	got, n, err := ParseShortHeader(want, 0)
	if err != nil || n != 1 || got != h {
		t.Fatalf("ParseShortHeader = %+v, %d, %v", got, n, err)
	}
	tpn, _ := ParseTruncatedPacketNumber(want[n:], PacketNumberLenFromFirstByte(want[0]))
	if pn := DecodePacketNumber(654360563, tpn, 3); pn != 654360564 {
		t.Fatalf("packet number %d", pn)
	}
	// The protected packets of both RFCs parse too (with protected bits).
	for _, p := range []string{
		"4cfe4189655e5cd55c41f69080575d7999c25a5bfb",
		"5558b1c60ae7b6b932bc27d786f4bc2bb20f2162ba",
	} {
		b := hdrHex(t, p)
		if _, n, err := ParseShortHeader(b, 0); err != nil || n != 1 {
			t.Fatalf("protected %s: %d, %v", p, n, err)
		}
	}
}

func TestShortHeaderRoundTrip(t *testing.T) {
	for _, cid := range []ConnectionID{{}, NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8}),
		NewConnectionID(bytes.Repeat([]byte{0xee}, 20))} {
		for _, spin := range []bool{false, true} {
			for _, kp := range []bool{false, true} {
				for pnLen := 1; pnLen <= 4; pnLen++ {
					h := ShortHeader{DstConnID: cid, SpinBit: spin, KeyPhase: kp}
					b := h.Append(nil, 0x01020304, pnLen)
					if len(b) != h.HeaderLen(pnLen) {
						t.Fatalf("%+v: %d bytes; HeaderLen %d", h, len(b), h.HeaderLen(pnLen))
					}
					want := byte(0x40 | (pnLen - 1))
					if spin {
						want |= 0x20
					}
					if kp {
						want |= 0x04
					}
					if b[0] != want {
						t.Fatalf("%+v: first byte %#x; want %#x", h, b[0], want)
					}
					got, n, err := ParseShortHeader(b, cid.Len())
					if err != nil || n != 1+cid.Len() || got != h {
						t.Fatalf("round trip %+v: %+v, %d, %v", h, got, n, err)
					}
					if tpn, ok := ParseTruncatedPacketNumber(b[n:], PacketNumberLenFromFirstByte(b[0])); !ok || tpn != 0x01020304&(1<<(8*pnLen)-1) {
						t.Fatalf("packet number %#x", tpn)
					}
					if pt, err := PacketTypeOf(b); err != nil || pt != PacketType1RTT {
						t.Fatalf("PacketTypeOf = %v, %v", pt, err)
					}
					if CheckReservedBits(b[0], false) != nil {
						t.Fatal("reserved bits set by Append")
					}
					// Every proper prefix of the header up to the
					// packet number fails.
					for i := 0; i < n; i++ {
						_, _, err := ParseShortHeader(b[:i], cid.Len())
						hdrWantProtocolViolation(t, "prefix", err)
					}
				}
			}
		}
	}
}

func TestShortHeaderErrors(t *testing.T) {
	b := hdrHex(t, "4101020304050607080a")
	for _, tc := range []struct {
		name string
		in   []byte
		n    int
	}{
		{"empty", nil, 0},
		{"long header", hdrHex(t, "c000000001"), 0},
		{"truncated DCID", b[:5], 8},
		{"negative length", b, -1},
		{"length 21", append(b, make([]byte, 20)...), 21},
	} {
		_, n, err := ParseShortHeader(tc.in, tc.n)
		if n != 0 {
			t.Errorf("%s: n = %d", tc.name, n)
		}
		hdrWantProtocolViolation(t, tc.name, err)
	}
	// The Fixed Bit is not enforced (RFC 9287).
	if _, n, err := ParseShortHeader([]byte{0x01, 9, 9}, 2); err != nil || n != 3 {
		t.Errorf("cleared Fixed Bit: %d, %v", n, err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Append with pnLen 0 did not panic")
			}
		}()
		(&ShortHeader{}).Append(nil, 0, 0)
	}()
}

func TestShortHeaderAllocs(t *testing.T) {
	h := ShortHeader{DstConnID: NewConnectionID(bytes.Repeat([]byte{7}, 20)), KeyPhase: true}
	in := h.Append(nil, 77, 2)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		b := h.Append(buf[:0], 77, 2)
		if _, _, err := ParseShortHeader(b, 20); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ParseShortHeader(in[:3], 20); err == nil {
			t.Fatal("truncated header parsed")
		}
	})
	if allocs != 0 {
		t.Fatalf("short header parse/append allocated %v times; want 0", allocs)
	}
}

func BenchmarkParseShortHeader(b *testing.B) {
	h := ShortHeader{DstConnID: NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})}
	in := append(h.Append(nil, 1000, 2), make([]byte, 1200)...)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseShortHeader(in, 8); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseShortHeader parses data[1:] as a short header with a connection
// ID of data[0]%21 bytes, and checks that an accepted header survives Append
// and a second parse unchanged.
func FuzzParseShortHeader(f *testing.F) {
	f.Add(append([]byte{0}, hdrHex(f, "4200bff4")...))
	f.Add(append([]byte{8}, hdrHex(f, "65010203040506070800bff4")...))
	f.Add(append([]byte{20}, (&ShortHeader{DstConnID: NewConnectionID(bytes.Repeat([]byte{3}, 20))}).Append(nil, 5, 4)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		cidLen := int(data[0] % 21)
		b := data[1:]
		h, n, err := ParseShortHeader(b, cidLen)
		if err != nil {
			return
		}
		if n != 1+cidLen || h.DstConnID.Len() != cidLen || !h.DstConnID.Equal(b[1:n]) {
			t.Fatalf("n=%d, DCID %v from %x", n, h.DstConnID, b)
		}
		if dcid, err := ParseDestConnectionID(b, cidLen); err != nil || dcid != h.DstConnID {
			t.Fatalf("ParseDestConnectionID = %v, %v", dcid, err)
		}
		pnLen := PacketNumberLenFromFirstByte(b[0])
		out := h.Append(nil, 0, pnLen)
		// Append sets the Fixed Bit and clears the Reserved Bits; the form,
		// Spin, Key Phase and Packet Number Length bits are kept.
		if len(out) != h.HeaderLen(pnLen) || out[0]&0xa7 != b[0]&0xa7 || !bytes.Equal(out[1:n], b[1:n]) {
			t.Fatalf("Append = %x from %x", out, b[:n])
		}
		h2, n2, err := ParseShortHeader(out, cidLen)
		if err != nil || n2 != n || h2 != h {
			t.Fatalf("round trip: %+v -> %+v, %d, %v", h, h2, n2, err)
		}
	})
}
