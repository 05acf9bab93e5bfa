package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestParseInvariantHeader(t *testing.T) {
	// A long header of an unknown version with 255-byte connection IDs,
	// which only the invariants allow (RFC 8999, Section 5.1).
	long := bytes.Repeat([]byte{0x11}, 255)
	src := bytes.Repeat([]byte{0x22}, 255)
	unknown := append(hdrHex(t, "c5 1a2a3a4a ff"), long...)
	unknown = append(append(unknown, 0xff), src...)
	unknown = append(unknown, 0xde, 0xad)
	h, err := ParseInvariantHeader(unknown, 8)
	if err != nil || !h.IsLong || h.Version != 0x1a2a3a4a || !bytes.Equal(h.DstConnID, long) || !bytes.Equal(h.SrcConnID, src) {
		t.Fatalf("unknown version: %+v, %v", h, err)
	}
	for i := 0; i < 1+4+1+255+1+255; i++ {
		_, err := ParseInvariantHeader(unknown[:i], 8)
		hdrWantProtocolViolation(t, "long prefix", err)
	}
	if _, err := ParseDestConnectionID(unknown, 8); err == nil {
		t.Error("ParseDestConnectionID accepted a 255-byte connection ID")
	} else {
		hdrWantProtocolViolation(t, "ParseDestConnectionID 255 bytes", err)
	}
	if _, err := PacketTypeOf(unknown); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("PacketTypeOf unknown version: %v", err)
	}
	// The answer to it is a Version Negotiation packet echoing the IDs.
	vn := AppendVersionNegotiation(nil, 0x40, h.SrcConnID, h.DstConnID, []Version{Version1, Version2})
	p, err := ParseVersionNegotiation(vn)
	if err != nil || !bytes.Equal(p.DstConnID, src) || !bytes.Equal(p.SrcConnID, long) {
		t.Fatalf("VN answer: %+v, %v", p, err)
	}

	// The RFC 9001 client Initial.
	initial := hdrHex(t, hdrLongVectors[0].hex)
	h, err = ParseInvariantHeader(initial, 0)
	if err != nil || !h.IsLong || h.Version != Version1 || !bytes.Equal(h.DstConnID, hdrHex(t, "8394c8f03e515708")) || len(h.SrcConnID) != 0 {
		t.Fatalf("Initial: %+v, %v", h, err)
	}
	dcid, err := ParseDestConnectionID(initial, 0)
	if err != nil || dcid != hdrLongVectors[0].want.DstConnID {
		t.Fatalf("ParseDestConnectionID = %v, %v", dcid, err)
	}
	for i := 0; i < 14; i++ {
		_, err := ParseDestConnectionID(initial[:i], 0)
		hdrWantProtocolViolation(t, "DCID prefix", err)
	}

	// A short header.
	short := hdrHex(t, "41 0102030405060708 00bff4")
	h, err = ParseInvariantHeader(short, 8)
	if err != nil || h.IsLong || h.Version != 0 || !bytes.Equal(h.DstConnID, short[1:9]) || h.SrcConnID != nil {
		t.Fatalf("short: %+v, %v", h, err)
	}
	if dcid, err := ParseDestConnectionID(short, 8); err != nil || !dcid.Equal(short[1:9]) {
		t.Fatalf("short ParseDestConnectionID = %v, %v", dcid, err)
	}
	for i := 0; i < 9; i++ {
		_, err := ParseInvariantHeader(short[:i], 8)
		hdrWantProtocolViolation(t, "short prefix", err)
		_, err = ParseDestConnectionID(short[:i], 8)
		hdrWantProtocolViolation(t, "short DCID prefix", err)
	}
	for _, n := range []int{-1} {
		_, err := ParseInvariantHeader(short, n)
		hdrWantProtocolViolation(t, "negative short length", err)
	}
	for _, n := range []int{-1, 21} {
		_, err := ParseDestConnectionID(append(short, make([]byte, 20)...), n)
		hdrWantProtocolViolation(t, "short length out of range", err)
	}
}

func TestPacketTypeOf(t *testing.T) {
	// Long Packet Type bits per version (RFC 9000, Table 5; RFC 9369,
	// Section 3.2).
	for _, tc := range []struct {
		first byte
		v     Version
		want  PacketType
	}{
		{0xc0, Version1, PacketTypeInitial},
		{0xd0, Version1, PacketType0RTT},
		{0xe0, Version1, PacketTypeHandshake},
		{0xf0, Version1, PacketTypeRetry},
		{0xd0, Version2, PacketTypeInitial},
		{0xe0, Version2, PacketType0RTT},
		{0xf0, Version2, PacketTypeHandshake},
		{0xc0, Version2, PacketTypeRetry},
		{0x80, VersionNegotiationVersion, PacketTypeVersionNegotiation},
		{0xff, VersionNegotiationVersion, PacketTypeVersionNegotiation},
		{0x8f, Version1, PacketTypeInitial}, // Fixed Bit clear (RFC 9287)
	} {
		b := []byte{tc.first, byte(tc.v >> 24), byte(tc.v >> 16), byte(tc.v >> 8), byte(tc.v)}
		if got, err := PacketTypeOf(b); err != nil || got != tc.want {
			t.Errorf("%#x %v: %v, %v; want %v", tc.first, tc.v, got, err, tc.want)
		}
		for i := 0; i < len(b); i++ {
			_, err := PacketTypeOf(b[:i])
			hdrWantProtocolViolation(t, "prefix", err)
		}
	}
	for _, first := range []byte{0x00, 0x40, 0x7f} {
		if got, err := PacketTypeOf([]byte{first}); err != nil || got != PacketType1RTT {
			t.Errorf("short %#x: %v, %v", first, got, err)
		}
	}
	if _, err := PacketTypeOf(hdrHex(t, "c0ff00001d")); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("draft version: %v", err)
	}
}

func TestInvariantAllocs(t *testing.T) {
	in := hdrHex(t, hdrLongVectors[0].hex)
	short := hdrHex(t, "41 0102030405060708 00bff4")
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ParseInvariantHeader(in, 8); err != nil {
			t.Fatal(err)
		}
		if _, err := ParseDestConnectionID(in, 8); err != nil {
			t.Fatal(err)
		}
		if _, err := ParseDestConnectionID(short, 8); err != nil {
			t.Fatal(err)
		}
		if _, err := PacketTypeOf(in); err != nil {
			t.Fatal(err)
		}
		if _, err := PacketTypeOf(in[:3]); err == nil {
			t.Fatal("truncated parsed")
		}
	})
	if allocs != 0 {
		t.Fatalf("invariant parsing allocated %v times; want 0", allocs)
	}
}
