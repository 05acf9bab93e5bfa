package wire

import (
	"bytes"
	"testing"
)

// hdrSplitAll splits a datagram with NextPacket until it is empty or fails,
// checking that the pieces are consecutive sub-slices of the datagram.
func hdrSplitAll(t testing.TB, d []byte, cidLen int) (pkts [][]byte, err error) {
	t.Helper()
	off := 0
	for rest := d; len(rest) > 0; {
		var p []byte
		p, rest, err = NextPacket(rest, cidLen)
		if err != nil {
			return pkts, err
		}
		if len(p) == 0 || &p[0] != &d[off] || len(p)+len(rest) != len(d)-off ||
			(len(rest) > 0 && &rest[0] != &d[off+len(p)]) {
			t.Fatalf("NextPacket at %d returned %d+%d bytes, not consecutive sub-slices", off, len(p), len(rest))
		}
		off += len(p)
		pkts = append(pkts, p)
	}
	return pkts, nil
}

// hdrCoalesced builds a datagram of an Initial (the protected server Initial
// of RFC 9001, Appendix A.3), a Handshake packet and a 1-RTT packet (the
// protected packet of RFC 9001, Appendix A.5), all to the same empty
// Destination Connection ID.
func hdrCoalesced(t testing.TB) (d []byte, parts [][]byte) {
	initial := hdrHex(t, hdrLongVectors[1].packet)
	hs := LongHeader{Type: PacketTypeHandshake, Version: Version1,
		SrcConnID: NewConnectionID(hdrHex(t, "f067a5502a4262b5")), Length: 300}
	handshake := hs.Append(nil, 0, 1)
	handshake = append(handshake, bytes.Repeat([]byte{0xa5}, 299)...)
	oneRTT := hdrHex(t, "4cfe4189655e5cd55c41f69080575d7999c25a5bfb")
	d = append(append(append(d, initial...), handshake...), oneRTT...)
	return d, [][]byte{initial, handshake, oneRTT}
}

func TestNextPacketCoalesced(t *testing.T) {
	d, parts := hdrCoalesced(t)
	pkts, err := hdrSplitAll(t, d, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkts) != 3 {
		t.Fatalf("split into %d packets; want 3", len(pkts))
	}
	for i := range parts {
		if !bytes.Equal(pkts[i], parts[i]) {
			t.Errorf("packet %d: %d bytes; want %d", i, len(pkts[i]), len(parts[i]))
		}
	}
	for i, want := range []PacketType{PacketTypeInitial, PacketTypeHandshake, PacketType1RTT} {
		if pt, err := PacketTypeOf(pkts[i]); err != nil || pt != want {
			t.Errorf("packet %d: %v, %v; want %v", i, pt, err, want)
		}
	}
	// Appending to a returned packet must not overwrite the next one.
	_ = append(pkts[0], 0xff)
	if !bytes.Equal(pkts[1], parts[1]) {
		t.Error("appending to a packet overwrote the following one")
	}
}

func TestNextPacketV2(t *testing.T) {
	cid := NewConnectionID([]byte{1, 2, 3, 4})
	var d []byte
	var sizes []int
	for _, typ := range []PacketType{PacketTypeInitial, PacketType0RTT, PacketTypeHandshake} {
		h := LongHeader{Type: typ, Version: Version2, DstConnID: cid, Token: []byte("tok"), Length: 64}
		start := len(d)
		d = h.Append(d, 5, 2)
		d = append(d, make([]byte, 62)...)
		sizes = append(sizes, len(d)-start)
	}
	pkts, err := hdrSplitAll(t, d, 4)
	if err != nil || len(pkts) != 3 {
		t.Fatalf("%d packets, %v", len(pkts), err)
	}
	for i := range pkts {
		if len(pkts[i]) != sizes[i] {
			t.Errorf("packet %d: %d bytes; want %d", i, len(pkts[i]), sizes[i])
		}
	}
}

func TestNextPacketTakesRest(t *testing.T) {
	retry := hdrHex(t, hdrRetryVectors[0].packet)
	vn := hdrHex(t, "ca 00000000 08 f067a5502a4262b5 08 8394c8f03e515708 6b3343cf 1a2a3a4a 00000001")
	unknown := hdrHex(t, "c0 1a2a3a4a ff 0102")                     // even a 255-byte DCID claim
	zeroPad := append(hdrHex(t, hdrLongVectors[1].packet), 0, 0, 0) // padding after a long header
	for _, tc := range []struct {
		name   string
		d      []byte
		cidLen int
		want   []int
	}{
		{"Retry", retry, 0, []int{len(retry)}},
		{"Retry then junk", append(append([]byte(nil), retry...), 1, 2, 3), 0, []int{len(retry) + 3}},
		{"Version Negotiation", vn, 0, []int{len(vn)}},
		{"unknown version", unknown, 0, []int{len(unknown)}},
		{"short header", hdrHex(t, "4cfe4189655e5cd55c41f69080575d7999c25a5bfb"), 0, []int{21}},
		{"short header, 8-byte DCID", hdrHex(t, "40 0102030405060708"), 8, []int{9}},
		{"trailing zero bytes", zeroPad, 20, nil},
	} {
		pkts, err := hdrSplitAll(t, tc.d, tc.cidLen)
		if tc.want == nil {
			// The zeros look like a short header that is too short for
			// a 20-byte connection ID: the Initial before is returned,
			// then an error stops the split.
			if err == nil || len(pkts) != 1 {
				t.Errorf("%s: %d packets, %v", tc.name, len(pkts), err)
			}
			continue
		}
		if err != nil || len(pkts) != len(tc.want) {
			t.Errorf("%s: %d packets, %v", tc.name, len(pkts), err)
			continue
		}
		for i := range pkts {
			if len(pkts[i]) != tc.want[i] {
				t.Errorf("%s: packet %d has %d bytes; want %d", tc.name, i, len(pkts[i]), tc.want[i])
			}
		}
	}
}

// A malformed later packet ends the split but leaves the earlier packets
// intact (RFC 9000, Section 12.2).
func TestNextPacketBadLaterPacket(t *testing.T) {
	d, parts := hdrCoalesced(t)
	// Make the Handshake packet's Length exceed the datagram.
	bad := append([]byte(nil), d[:len(parts[0])+len(parts[1])-100]...)
	pkts, err := hdrSplitAll(t, bad, 0)
	if err == nil || len(pkts) != 1 || !bytes.Equal(pkts[0], parts[0]) {
		t.Fatalf("%d packets, %v; want the Initial and an error", len(pkts), err)
	}
	hdrWantProtocolViolation(t, "truncated Handshake", err)
	for _, tc := range []struct {
		name   string
		d      []byte
		cidLen int
	}{
		{"empty", nil, 0},
		{"truncated version", hdrHex(t, "c00000"), 0},
		{"short header shorter than its DCID", hdrHex(t, "400102"), 8},
		{"short length out of range", hdrHex(t, "400102"), 21},
		{"v1 DCID 21 bytes", append(hdrHex(t, "c00000000115"), make([]byte, 40)...), 0},
	} {
		p, rest, err := NextPacket(tc.d, tc.cidLen)
		if p != nil || rest != nil {
			t.Errorf("%s: returned %d+%d bytes with the error", tc.name, len(p), len(rest))
		}
		hdrWantProtocolViolation(t, tc.name, err)
	}
}

func TestNextPacketAllocs(t *testing.T) {
	d, _ := hdrCoalesced(t)
	allocs := testing.AllocsPerRun(100, func() {
		n := 0
		for rest := d; len(rest) > 0; n++ {
			var err error
			if _, rest, err = NextPacket(rest, 0); err != nil {
				t.Fatal(err)
			}
		}
		if n != 3 {
			t.Fatal("bad split")
		}
		if _, _, err := NextPacket(d[:30], 0); err == nil {
			t.Fatal("truncated datagram split")
		}
	})
	if allocs != 0 {
		t.Fatalf("NextPacket allocated %v times; want 0", allocs)
	}
}

func BenchmarkNextPacket(b *testing.B) {
	d, _ := hdrCoalesced(b)
	b.ReportAllocs()
	for b.Loop() {
		for rest := d; len(rest) > 0; {
			var err error
			if _, rest, err = NextPacket(rest, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// FuzzNextPacket splits data[1:] with a short-header connection ID length of
// data[0]%21. It checks that NextPacket never panics, always makes progress,
// that the packets it returns are consecutive pieces of the datagram whose
// concatenation is the datagram (up to an error), and that each long-header
// packet it sized by its Length field parses back to that size.
func FuzzNextPacket(f *testing.F) {
	d, _ := hdrCoalesced(f)
	f.Add(append([]byte{0}, d...))
	f.Add(append([]byte{0}, hdrHex(f, hdrRetryVectors[1].packet)...))
	f.Add(append([]byte{8}, hdrHex(f, "ca 00000000 08 f067a5502a4262b5 08 8394c8f03e515708 6b3343cf")...))
	f.Add(append([]byte{4}, hdrHex(f, "d06b3343cf04010203040003746f6b01aa e06b3343cf040102030400020102 41010203040506")...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		cidLen := int(data[0] % 21)
		dg := data[1:]
		pkts, err := hdrSplitAll(t, dg, cidLen)
		var joined []byte
		for _, p := range pkts {
			joined = append(joined, p...)
		}
		if err == nil && !bytes.Equal(joined, dg) {
			t.Fatalf("packets join to %x; datagram %x", joined, dg)
		}
		if !bytes.Equal(joined, dg[:len(joined)]) {
			t.Fatalf("packets join to %x; not a prefix of %x", joined, dg)
		}
		for _, p := range pkts {
			pt, err := PacketTypeOf(p)
			if err != nil || pt == PacketTypeRetry || pt == PacketTypeVersionNegotiation || pt == PacketType1RTT {
				continue
			}
			h, n, err := ParseLongHeader(p)
			if err != nil || n+int(h.Length) != len(p) {
				t.Fatalf("packet %x: n=%d Length=%d, %v", p, n, h.Length, err)
			}
			// Round trip: re-encoding the header and appending the rest
			// yields a packet that splits the same way.
			pnLen := PacketNumberLenFromFirstByte(p[0])
			out := h.Append(nil, 0, pnLen)
			out = append(out[:len(out)-pnLen], p[n:]...)
			q, rest, err := NextPacket(out, cidLen)
			if err != nil || len(rest) != 0 || len(q) != len(out) {
				t.Fatalf("re-encoded packet %x split as %d+%d, %v", out, len(q), len(rest), err)
			}
		}
	})
}
