package wire

import (
	"bytes"
	"testing"
)

// hdrVNVersions returns the Supported Version list of p.
func hdrVNVersions(p VersionNegotiationPacket) []Version {
	vs := make([]Version, p.NumVersions())
	for i := range vs {
		vs[i] = p.Version(i)
	}
	return vs
}

func TestVersionNegotiationHex(t *testing.T) {
	// A server's answer to the RFC 9001, Appendix A.2, client Initial if it
	// did not support version 1: the connection IDs are swapped (RFC 9000,
	// Section 17.2.1), the Unused bits have 0x40 set, and a reserved
	// version is included (RFC 9000, Section 6.3).
	dst := hdrHex(t, "f067a5502a4262b5")
	src := hdrHex(t, "8394c8f03e515708")
	versions := []Version{Version2, 0x1a2a3a4a, Version1}
	want := hdrHex(t, "ca 00000000 08 f067a5502a4262b5 08 8394c8f03e515708 6b3343cf 1a2a3a4a 00000001")
	got := AppendVersionNegotiation(nil, 0x4a, dst, src, versions)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendVersionNegotiation = %x; want %x", got, want)
	}
	p, err := ParseVersionNegotiation(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.DstConnID, dst) || !bytes.Equal(p.SrcConnID, src) || p.NumVersions() != 3 {
		t.Fatalf("parsed %+v", p)
	}
	for i, v := range versions {
		if p.Version(i) != v || !p.Contains(v) {
			t.Errorf("version %d: %v, Contains %v; want %v", i, p.Version(i), p.Contains(v), v)
		}
	}
	if p.Contains(0) || p.Contains(0x6b3343ce) || p.Contains(0x0000001a) {
		t.Error("Contains reports a version not in the list")
	}
	if pt, err := PacketTypeOf(want); err != nil || pt != PacketTypeVersionNegotiation {
		t.Errorf("PacketTypeOf = %v, %v", pt, err)
	}
	// The high bit is always set, whatever unused says.
	if b := AppendVersionNegotiation(nil, 0xff, nil, nil, versions); b[0] != 0xff {
		t.Errorf("first byte %#x", b[0])
	}
	if b := AppendVersionNegotiation(nil, 0, nil, nil, versions); b[0] != 0x80 {
		t.Errorf("first byte %#x", b[0])
	}
}

func TestVersionNegotiationRoundTrip(t *testing.T) {
	long := bytes.Repeat([]byte{0x42}, 255)
	for _, dst := range [][]byte{{}, {1}, long[:20], long[:21], long} {
		for _, src := range [][]byte{{}, long[:8], long} {
			for _, vs := range [][]Version{{Version1}, {Version1, Version2, 0xaaaaaaaa, 0}} {
				for _, unused := range []byte{0, 0x40, 0x7f} {
					b := AppendVersionNegotiation(nil, unused, dst, src, vs)
					p, err := ParseVersionNegotiation(b)
					if err != nil {
						t.Fatalf("%x: %v", b, err)
					}
					if !bytes.Equal(p.DstConnID, dst) || !bytes.Equal(p.SrcConnID, src) {
						t.Fatalf("connection IDs %x, %x", p.DstConnID, p.SrcConnID)
					}
					if got := hdrVNVersions(p); len(got) != len(vs) {
						t.Fatalf("versions %v; want %v", got, vs)
					} else {
						for i := range vs {
							if got[i] != vs[i] {
								t.Fatalf("versions %v; want %v", got, vs)
							}
						}
					}
					// Re-encoding reproduces the packet exactly.
					if again := AppendVersionNegotiation(nil, b[0], p.DstConnID, p.SrcConnID, hdrVNVersions(p)); !bytes.Equal(again, b) {
						t.Fatalf("re-encoded %x; want %x", again, b)
					}
					// A proper prefix fails unless it cuts the list at a
					// version boundary, which leaves a shorter valid list.
					hdrLen := 1 + 4 + 1 + len(dst) + 1 + len(src)
					for i := 0; i < len(b); i++ {
						_, err := ParseVersionNegotiation(b[:i])
						if shorter := i > hdrLen && (i-hdrLen)%4 == 0; shorter != (err == nil) {
							t.Fatalf("prefix %d/%d: %v", i, len(b), err)
						}
						if err != nil {
							hdrWantProtocolViolation(t, "prefix", err)
						}
					}
				}
			}
		}
	}
}

func TestVersionNegotiationErrors(t *testing.T) {
	for _, tc := range []struct{ name, hex string }{
		{"empty", ""},
		{"short header", "40 00000000 00 00 00000001"},
		{"version not 0", "c0 00000001 00 00 00000001"},
		{"no versions", "c0 00000000 00 00"},
		{"truncated version", "c0 00000000 00 00 000000"},
		{"5 bytes of versions", "c0 00000000 00 00 0000000100"},
		{"truncated DCID", "c0 00000000 08 0102"},
		{"missing SCID length", "c0 00000000 01 01"},
		{"truncated header", "c0 000000"},
	} {
		_, err := ParseVersionNegotiation(hdrHex(t, tc.hex))
		hdrWantProtocolViolation(t, tc.name, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("256-byte connection ID did not panic")
		}
	}()
	AppendVersionNegotiation(nil, 0x40, make([]byte, 256), nil, []Version{Version1})
}

func TestVersionNegotiationAllocs(t *testing.T) {
	dst := bytes.Repeat([]byte{1}, 200)
	vs := []Version{Version1, Version2, 0x5a6a7a8a}
	in := AppendVersionNegotiation(nil, 0x40, dst, dst[:8], vs)
	buf := make([]byte, 0, 512)
	allocs := testing.AllocsPerRun(100, func() {
		p, err := ParseVersionNegotiation(in)
		if err != nil || !p.Contains(Version2) || p.NumVersions() != 3 || p.Version(2) != 0x5a6a7a8a {
			t.Fatal("bad parse")
		}
		_ = AppendVersionNegotiation(buf[:0], 0x40, p.DstConnID, p.SrcConnID, vs)
		if _, err := ParseVersionNegotiation(in[:len(in)-1]); err == nil {
			t.Fatal("truncated list parsed")
		}
	})
	if allocs != 0 {
		t.Fatalf("Version Negotiation parse/append allocated %v times; want 0", allocs)
	}
}

// FuzzParseVersionNegotiation checks that ParseVersionNegotiation never
// panics and that a packet it accepts is re-encoded byte for byte.
func FuzzParseVersionNegotiation(f *testing.F) {
	f.Add(hdrHex(f, "ca 00000000 08 f067a5502a4262b5 08 8394c8f03e515708 6b3343cf 1a2a3a4a 00000001"))
	f.Add(hdrHex(f, "80 00000000 00 00 00000001"))
	f.Add(AppendVersionNegotiation(nil, 0x7f, bytes.Repeat([]byte{9}, 255), bytes.Repeat([]byte{8}, 255), []Version{Version1, Version2}))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseVersionNegotiation(data)
		if err != nil {
			return
		}
		vs := hdrVNVersions(p)
		if len(vs) == 0 {
			t.Fatal("empty version list accepted")
		}
		for _, v := range vs {
			if !p.Contains(v) {
				t.Fatalf("Contains(%v) false", v)
			}
		}
		out := AppendVersionNegotiation(nil, data[0], p.DstConnID, p.SrcConnID, vs)
		if !bytes.Equal(out, data) {
			t.Fatalf("re-encoded %x; input %x", out, data)
		}
		p2, err := ParseVersionNegotiation(out)
		if err != nil || !bytes.Equal(p2.DstConnID, p.DstConnID) || !bytes.Equal(p2.SrcConnID, p.SrcConnID) || p2.NumVersions() != p.NumVersions() {
			t.Fatalf("round trip: %+v -> %+v, %v", p, p2, err)
		}
		if pt, err := PacketTypeOf(data); err != nil || pt != PacketTypeVersionNegotiation {
			t.Fatalf("PacketTypeOf = %v, %v", pt, err)
		}
	})
}
