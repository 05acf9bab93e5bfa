package wire

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"testing"
)

// RFC 9001, Appendix A.4, and RFC 9369, Appendix A.4: a Retry packet in
// response to the client Initial with Destination Connection ID
// 0x8394c8f03e515708, and the AEAD key and nonce of the Retry Integrity Tag
// (RFC 9001, Section 5.8; RFC 9369, Section 3.3.3).
var hdrRetryVectors = []struct {
	name, packet, key, nonce string
	version                  Version
}{
	{"RFC 9001 A.4", "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba",
		"be0c690b9f66575a1d766b54e368c84e", "461599d35d632bf2239825bb", Version1},
	{"RFC 9369 A.4", "cf6b3343cf0008f067a5502a4262b5746f6b656ec8646ce8bfe33952d955543665dcc7b6",
		"8fb4b01b56ac48e260fbcbcead7ccc92", "d86969bc2d7c6d9990efb04a", Version2},
}

var hdrRetryODCID = NewConnectionID([]byte{0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08})

func hdrRetryEqual(a, b RetryPacket) bool {
	return a.Version == b.Version && a.DstConnID == b.DstConnID && a.SrcConnID == b.SrcConnID &&
		bytes.Equal(a.Token, b.Token) && a.IntegrityTag == b.IntegrityTag
}

func TestRetryRFCVectors(t *testing.T) {
	for _, tc := range hdrRetryVectors {
		t.Run(tc.name, func(t *testing.T) {
			pkt := hdrHex(t, tc.packet)
			p, err := ParseRetryPacket(pkt)
			if err != nil {
				t.Fatal(err)
			}
			if p.Version != tc.version || p.DstConnID.Len() != 0 ||
				p.SrcConnID != NewConnectionID(hdrHex(t, "f067a5502a4262b5")) ||
				string(p.Token) != "token" || !bytes.Equal(p.IntegrityTag[:], pkt[len(pkt)-16:]) {
				t.Fatalf("parsed %+v", p)
			}
			if pt, err := PacketTypeOf(pkt); err != nil || pt != PacketTypeRetry {
				t.Fatalf("PacketTypeOf = %v, %v", pt, err)
			}
			// Append writes the Unused bits (0x0f, all set in the
			// vectors) as 0 and everything else identically.
			out := p.Append(nil)
			if len(out) != p.EncodedLen() || out[0] != pkt[0]&0xf0 || !bytes.Equal(out[1:], pkt[1:]) {
				t.Fatalf("Append = %x; want %x with unused bits 0", out, pkt)
			}
			// The Retry Pseudo-Packet authenticates under the RFC's key
			// and nonce to exactly the tag in the vector.
			pseudo := AppendRetryPseudoPacket(nil, hdrRetryODCID, pkt[:len(pkt)-16])
			wantPseudo := append(hdrHex(t, "088394c8f03e515708"), pkt[:len(pkt)-16]...)
			if !bytes.Equal(pseudo, wantPseudo) {
				t.Fatalf("pseudo-packet %x; want %x", pseudo, wantPseudo)
			}
			block, err := aes.NewCipher(hdrHex(t, tc.key))
			if err != nil {
				t.Fatal(err)
			}
			aead, err := cipher.NewGCM(block)
			if err != nil {
				t.Fatal(err)
			}
			tag := aead.Seal(nil, hdrHex(t, tc.nonce), nil, pseudo)
			if !bytes.Equal(tag, p.IntegrityTag[:]) {
				t.Fatalf("integrity tag over pseudo-packet = %x; want %x", tag, p.IntegrityTag)
			}
		})
	}
}

func TestRetryRoundTrip(t *testing.T) {
	cid20 := NewConnectionID(bytes.Repeat([]byte{0xcd}, 20))
	for _, v := range []Version{Version1, Version2} {
		for _, dcid := range []ConnectionID{{}, cid20} {
			for _, scid := range []ConnectionID{{}, NewConnectionID([]byte{1, 2, 3, 4}), cid20} {
				for _, tok := range [][]byte{{0x01}, []byte("token"), bytes.Repeat([]byte{0x77}, 2000)} {
					p := RetryPacket{Version: v, DstConnID: dcid, SrcConnID: scid, Token: tok}
					for i := range p.IntegrityTag {
						p.IntegrityTag[i] = byte(i * 17)
					}
					b := p.Append(nil)
					if len(b) != p.EncodedLen() {
						t.Fatalf("%d bytes; EncodedLen %d", len(b), p.EncodedLen())
					}
					bits, _ := longHeaderTypeBits(v, PacketTypeRetry)
					if b[0] != 0xc0|bits<<4 {
						t.Fatalf("first byte %#x", b[0])
					}
					got, err := ParseRetryPacket(b)
					if err != nil || !hdrRetryEqual(got, p) {
						t.Fatalf("round trip %+v: %+v, %v", p, got, err)
					}
					// Proper prefixes: those that cut into the header or
					// leave no token fail; longer ones are a different,
					// shorter Retry (only the tag can tell), and never
					// panic.
					minLen := 1 + 4 + 1 + dcid.Len() + 1 + scid.Len() + 1 + 16
					for i := 0; i < len(b); i++ {
						q, err := ParseRetryPacket(b[:i])
						if i < minLen {
							hdrWantProtocolViolation(t, "prefix", err)
						} else if err != nil || hdrRetryEqual(q, p) {
							t.Fatalf("prefix %d: %+v, %v", i, q, err)
						}
					}
				}
			}
		}
	}
}

func TestRetryErrors(t *testing.T) {
	pkt := hdrHex(t, hdrRetryVectors[0].packet)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), pkt...)) }
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short header", mod(func(b []byte) []byte { b[0] = 0x7f; return b })},
		{"v1 Initial", mod(func(b []byte) []byte { b[0] = 0xcf; return b })},
		{"v1 Handshake", mod(func(b []byte) []byte { b[0] = 0xef; return b })},
		{"v2 type bits 0b11 (Handshake)", hdrHex(t, "ff6b3343cf0008f067a5502a4262b5746f6b656ec8646ce8bfe33952d955543665dcc7b6")},
		{"version negotiation", mod(func(b []byte) []byte { b[4] = 0; return b })},
		// "A client MUST discard a Retry packet with a zero-length Retry
		// Token field."
		{"empty token", mod(func(b []byte) []byte { return append(b[:15], b[len(b)-16:]...) })},
		{"no tag", mod(func(b []byte) []byte { return b[:15] })},
		{"DCID 21 bytes", append(hdrHex(t, "f00000000115"), make([]byte, 60)...)},
		{"SCID 21 bytes", append(hdrHex(t, "f0000000010015"), make([]byte, 60)...)},
	} {
		_, err := ParseRetryPacket(tc.in)
		hdrWantProtocolViolation(t, tc.name, err)
	}
	b := append([]byte(nil), pkt...)
	b[4] = 2
	if _, err := ParseRetryPacket(b); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("unknown version: %v", err)
	}
	// The Unused and Fixed bits are ignored.
	b = append([]byte(nil), pkt...)
	b[0] = 0xb5
	if _, err := ParseRetryPacket(b); err != nil {
		t.Errorf("Unused bits 0x5 and Fixed Bit 0: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Append of an unknown version did not panic")
			}
		}()
		(&RetryPacket{Version: 7, Token: []byte{1}}).Append(nil)
	}()
}

func TestRetryAllocs(t *testing.T) {
	pkt := hdrHex(t, hdrRetryVectors[1].packet)
	p, _ := ParseRetryPacket(pkt)
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ParseRetryPacket(pkt); err != nil {
			t.Fatal(err)
		}
		b := p.Append(buf[:0])
		b = AppendRetryPseudoPacket(b, hdrRetryODCID, pkt[:len(pkt)-16])
		if _, err := ParseRetryPacket(pkt[:20]); err == nil {
			t.Fatal("truncated Retry parsed")
		}
	})
	if allocs != 0 {
		t.Fatalf("Retry parse/append allocated %v times; want 0", allocs)
	}
}

// FuzzParseRetryPacket checks that ParseRetryPacket never panics and that
// a Retry it accepts is re-encoded byte for byte (but for the Unused and
// Fixed bits) and parses again to the same value.
func FuzzParseRetryPacket(f *testing.F) {
	for _, tc := range hdrRetryVectors {
		f.Add(hdrHex(f, tc.packet))
	}
	f.Add(hdrHex(f, "f0000000011401010101010101010101010101010101010101010114020202020202020202020202020202020202020201ffffffffffffffffffffffffffffffff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseRetryPacket(data)
		if err != nil {
			return
		}
		if len(p.Token) == 0 {
			t.Fatal("empty token accepted")
		}
		out := p.Append(nil)
		if len(out) != len(data) || len(out) != p.EncodedLen() || out[0] != data[0]&0xb0|0x40 || !bytes.Equal(out[1:], data[1:]) {
			t.Fatalf("Append = %x; input %x", out, data)
		}
		p2, err := ParseRetryPacket(out)
		if err != nil || !hdrRetryEqual(p, p2) {
			t.Fatalf("round trip: %+v -> %+v, %v", p, p2, err)
		}
		if pkt, rest, err := NextPacket(data, 0); err != nil || len(pkt) != len(data) || len(rest) != 0 {
			t.Fatalf("NextPacket split a Retry: %d, %d, %v", len(pkt), len(rest), err)
		}
	})
}
