package handshake

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/quicstack/quic/wire"
)

// initialCase is one Initial packet of RFC 9001 / RFC 9369 Appendix A.2 or
// A.3 with everything needed to seal and open it.
type initialCase struct {
	name       string
	version    wire.Version
	fromClient bool
	pn         wire.PacketNumber
	header     []byte // unprotected header, ending with the packet number
	payload    []byte // plaintext payload
	sample     []byte
	protHeader []byte // header after header protection
	protected  []byte // the protected packet
	pnLen      int
	pnOffset   int
	paddedTo   int
}

func initialCases(t testing.TB) []initialCase {
	var cs []initialCase
	for _, vs := range rfcVectorSets {
		// A.2: "plus enough PADDING frames to make a 1162-byte payload";
		// PADDING frames are zero bytes (RFC 9000, Section 19.1).
		client := make([]byte, 1162)
		copy(client, unhex(t, vs.clientPayload))
		cs = append(cs,
			initialCase{
				name: vs.rfc + " A.2 client Initial", version: vs.version, fromClient: true, pn: 2,
				header: unhex(t, vs.clientHeader), payload: client, sample: unhex(t, vs.clientSample),
				protHeader: unhex(t, vs.clientProtectedHeader), protected: unhex(t, vs.clientProtected),
				pnLen: 4,
			},
			initialCase{
				name: vs.rfc + " A.3 server Initial", version: vs.version, fromClient: false, pn: 1,
				header: unhex(t, vs.serverHeader), payload: unhex(t, vs.serverPayload), sample: unhex(t, vs.serverSample),
				protHeader: unhex(t, vs.serverProtectedHeader), protected: unhex(t, vs.serverProtected),
				pnLen: 2,
			})
	}
	for i := range cs {
		cs[i].pnOffset = len(cs[i].header) - cs[i].pnLen
	}
	return cs
}

// TestSealInitialRFC protects the unprotected Initial packets of RFC 9001
// and RFC 9369, Appendix A.2 and A.3, and compares the result byte for byte
// with the protected packets given there.
func TestSealInitialRFC(t *testing.T) {
	cid := unhex(t, testConnID)
	for _, c := range initialCases(t) {
		seal, _ := NewInitialKeys(c.version, cid, c.fromClient)
		packet := withCap(append(append([]byte{}, c.header...), c.payload...), 16)
		got := seal.Seal(packet, c.pnOffset, c.pnLen, c.pn)
		if &got[0] != &packet[0] {
			t.Errorf("%s: Seal did not work in place", c.name)
		}
		if s := got[c.pnOffset+4 : c.pnOffset+20]; !bytes.Equal(s, c.sample) {
			t.Errorf("%s: sample = %x, want %x", c.name, s, c.sample)
		}
		if h := got[:len(c.header)]; !bytes.Equal(h, c.protHeader) {
			t.Errorf("%s: protected header = %x, want %x", c.name, h, c.protHeader)
		}
		if !bytes.Equal(got, c.protected) {
			t.Errorf("%s: protected packet differs\n got %x\nwant %x", c.name, got, c.protected)
		}
	}
}

// TestOpenInitialRFC removes protection from the protected Initial packets
// of RFC 9001 and RFC 9369, Appendix A.2 and A.3, as the peer does, and
// compares the header and payload byte for byte with the unprotected ones.
func TestOpenInitialRFC(t *testing.T) {
	cid := unhex(t, testConnID)
	for _, c := range initialCases(t) {
		_, open := NewInitialKeys(c.version, cid, !c.fromClient)
		packet := append([]byte{}, c.protected...)
		pnLen, err := open.RemoveHeaderProtection(packet, c.pnOffset)
		if err != nil || pnLen != c.pnLen {
			t.Fatalf("%s: RemoveHeaderProtection = %d, %v; want %d", c.name, pnLen, err, c.pnLen)
		}
		if h := packet[:len(c.header)]; !bytes.Equal(h, c.header) {
			t.Errorf("%s: header = %x, want %x", c.name, h, c.header)
		}
		trunc, _ := wire.ParseTruncatedPacketNumber(packet[c.pnOffset:], pnLen)
		pn := wire.DecodePacketNumber(wire.InvalidPacketNumber, trunc, pnLen)
		if pn != c.pn {
			t.Fatalf("%s: packet number %d, want %d", c.name, pn, c.pn)
		}
		payload, err := open.Open(packet, c.pnOffset, pnLen, pn)
		if err != nil {
			t.Fatalf("%s: Open: %v", c.name, err)
		}
		if !bytes.Equal(payload, c.payload) {
			t.Errorf("%s: payload differs\n got %x\nwant %x", c.name, payload, c.payload)
		}
		if &payload[0] != &packet[len(c.header)] {
			t.Errorf("%s: Open did not work in place", c.name)
		}
	}
}

// TestChaChaShortHeaderRFC checks RFC 9001 and RFC 9369, Appendix A.5 in
// both directions: the 21-byte 1-RTT packet with a PING frame, packet number
// 654360564 encoded on 3 bytes, and an empty Destination Connection ID.
func TestChaChaShortHeaderRFC(t *testing.T) {
	for _, vs := range rfcVectorSets {
		seal, open, err := NewKeys(tls.TLS_CHACHA20_POLY1305_SHA256, vs.version, unhex(t, vs.chachaSecret))
		if err != nil {
			t.Fatal(err)
		}
		header := unhex(t, vs.chachaHeader)
		plaintext := unhex(t, vs.chachaPlaintext)
		const pnOffset, pnLen = 1, 3

		packet := withCap(append(append([]byte{}, header...), plaintext...), 16)
		got := seal.Seal(packet, pnOffset, pnLen, chachaPN)
		if ct := got[len(header):]; !bytes.Equal(ct, unhex(t, vs.chachaCiphertext)) {
			t.Errorf("%s: ciphertext = %x, want %s", vs.rfc, ct, vs.chachaCiphertext)
		}
		if h := got[:len(header)]; !bytes.Equal(h, unhex(t, vs.chachaProtectedHeader)) {
			t.Errorf("%s: protected header = %x, want %s", vs.rfc, h, vs.chachaProtectedHeader)
		}
		if !bytes.Equal(got, unhex(t, vs.chachaPacket)) {
			t.Errorf("%s: packet = %x, want %s", vs.rfc, got, vs.chachaPacket)
		}

		packet = unhex(t, vs.chachaPacket)
		n, err := open.RemoveHeaderProtection(packet, pnOffset)
		if err != nil || n != pnLen {
			t.Fatalf("%s: RemoveHeaderProtection = %d, %v", vs.rfc, n, err)
		}
		if !bytes.Equal(packet[:len(header)], header) {
			t.Errorf("%s: header = %x, want %x", vs.rfc, packet[:len(header)], header)
		}
		if KeyPhase(packet[0]) != 0 {
			t.Errorf("%s: key phase %d, want 0", vs.rfc, KeyPhase(packet[0]))
		}
		// 49140 is the 3-byte truncation of 654360564; decode it as a
		// receiver that has seen packet 654360563.
		trunc, _ := wire.ParseTruncatedPacketNumber(packet[pnOffset:], n)
		if pn := wire.DecodePacketNumber(chachaPN-1, trunc, n); pn != chachaPN {
			t.Fatalf("%s: decoded packet number %d", vs.rfc, pn)
		}
		payload, err := open.Open(packet, pnOffset, n, chachaPN)
		if err != nil || !bytes.Equal(payload, plaintext) {
			t.Errorf("%s: Open = %x, %v; want %x", vs.rfc, payload, err, plaintext)
		}
	}
}

// testPacket builds an unprotected packet with a long or short header, a
// pnLen-byte packet number and the given payload, with 16 bytes of spare
// capacity. It returns the packet and the packet number offset.
func testPacket(long bool, pnLen int, pn wire.PacketNumber, payload []byte, keyPhase byte) ([]byte, int) {
	b := make([]byte, 0, 64+len(payload)+16)
	if long {
		// Handshake packet, version 1: 1110 RRPP.
		b = append(b, 0xe0|byte(pnLen-1))
		b = append(b, 0, 0, 0, 1)
		b = append(b, 8, 1, 2, 3, 4, 5, 6, 7, 8) // DCID
		b = append(b, 4, 9, 9, 9, 9)             // SCID
		n := pnLen + len(payload) + 16
		b = append(b, 0x40|byte(n>>8), byte(n)) // 2-byte Length
	} else {
		// 1-RTT packet: 01SR RKPP, spin bit set.
		b = append(b, 0x60|keyPhase<<2|byte(pnLen-1))
		b = append(b, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8) // DCID
	}
	pnOffset := len(b)
	b = wire.AppendPacketNumber(b, pn, pnLen)
	return append(b, payload...), pnOffset
}

// TestRoundTrip seals and opens random payloads with every suite, both
// versions, both header forms and every packet number length.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range suites {
		for _, v := range versions {
			seal, open, err := NewKeys(s.id, v, testSecret(s.id, 9))
			if err != nil {
				t.Fatal(err)
			}
			for _, long := range []bool{true, false} {
				for pnLen := 1; pnLen <= 4; pnLen++ {
					for _, size := range []int{MinPayloadLen(pnLen), MinPayloadLen(pnLen) + 1, 37, rng.IntN(1400), 1400} {
						size = max(size, MinPayloadLen(pnLen))
						payload := make([]byte, size)
						for i := range payload {
							payload[i] = byte(rng.Uint32())
						}
						pn := wire.PacketNumber(rng.Int64N(1 << (8 * pnLen)))
						kp := byte(rng.IntN(2))
						packet, pnOffset := testPacket(long, pnLen, pn, payload, kp)
						orig := append([]byte{}, packet...)
						name := fmt.Sprintf("%s/%v/long=%v/pnLen=%d/size=%d", s.name, v, long, pnLen, size)

						sealed := seal.Seal(packet, pnOffset, pnLen, pn)
						if len(sealed) != len(orig)+seal.Overhead() {
							t.Fatalf("%s: sealed length %d", name, len(sealed))
						}
						// Only the low 4 (long) or 5 (short) bits of the first
						// byte are protected.
						if keep := ^firstByteMask(orig[0]); sealed[0]&keep != orig[0]&keep {
							t.Fatalf("%s: unprotected bits of the first byte changed: %#x -> %#x", name, orig[0], sealed[0])
						}
						if !bytes.Equal(sealed[1:pnOffset], orig[1:pnOffset]) {
							t.Fatalf("%s: header outside first byte and packet number changed", name)
						}

						n, err := open.RemoveHeaderProtection(sealed, pnOffset)
						if err != nil || n != pnLen {
							t.Fatalf("%s: RemoveHeaderProtection = %d, %v", name, n, err)
						}
						if !bytes.Equal(sealed[:pnOffset+pnLen], orig[:pnOffset+pnLen]) {
							t.Fatalf("%s: header not restored", name)
						}
						if !long && KeyPhase(sealed[0]) != kp {
							t.Fatalf("%s: key phase %d, want %d", name, KeyPhase(sealed[0]), kp)
						}
						got, err := open.Open(sealed, pnOffset, n, pn)
						if err != nil || !bytes.Equal(got, payload) {
							t.Fatalf("%s: Open = %v, payload equal %v", name, err, bytes.Equal(got, payload))
						}
					}
				}
			}
		}
	}
}

// openAny removes header protection and opens packet, decoding the packet
// number as the truncated value itself. It reports whether both succeeded.
func openAny(o *Opener, packet []byte, pnOffset int) bool {
	pnLen, err := o.RemoveHeaderProtection(packet, pnOffset)
	if err != nil {
		return false
	}
	trunc, ok := wire.ParseTruncatedPacketNumber(packet[pnOffset:], pnLen)
	if !ok {
		return false
	}
	_, err = o.Open(packet, pnOffset, pnLen, wire.PacketNumber(trunc))
	return err == nil
}

// TestTamper flips every bit of sealed packets, one at a time, and checks
// that the packet never opens: header protection is not authenticated by
// itself, but the header it reveals is the AEAD's associated data.
func TestTamper(t *testing.T) {
	payload := []byte("tamper-evident QUIC payload, 0123456789abcdef")
	for _, s := range suites {
		seal, open, err := NewKeys(s.id, wire.Version1, testSecret(s.id, 5))
		if err != nil {
			t.Fatal(err)
		}
		for _, long := range []bool{true, false} {
			for _, pnLen := range []int{1, 4} {
				const pn = 0x42 // fits every length, so truncated == full
				packet, pnOffset := testPacket(long, pnLen, pn, payload, 1)
				sealed := seal.Seal(packet, pnOffset, pnLen, pn)
				if !openAny(open, append([]byte{}, sealed...), pnOffset) {
					t.Fatalf("%s long=%v: untampered packet does not open", s.name, long)
				}
				buf := make([]byte, len(sealed))
				for bit := range 8 * len(sealed) {
					copy(buf, sealed)
					buf[bit/8] ^= 1 << (bit % 8)
					if openAny(open, buf, pnOffset) {
						t.Errorf("%s long=%v pnLen=%d: packet with bit %d flipped opened", s.name, long, pnLen, bit)
					}
				}
			}
		}
	}
}

// TestWrongKeys checks that packets do not open under another secret,
// another version or another suite.
func TestWrongKeys(t *testing.T) {
	seal, _, err := NewKeys(tls.TLS_AES_128_GCM_SHA256, wire.Version1, testSecret(tls.TLS_AES_128_GCM_SHA256, 1))
	if err != nil {
		t.Fatal(err)
	}
	packet, pnOffset := testPacket(false, 2, 7, make([]byte, 30), 0)
	sealed := seal.Seal(packet, pnOffset, 2, 7)
	for _, c := range []struct {
		name   string
		suite  uint16
		v      wire.Version
		secret []byte
	}{
		{"other secret", tls.TLS_AES_128_GCM_SHA256, wire.Version1, testSecret(tls.TLS_AES_128_GCM_SHA256, 2)},
		{"other version", tls.TLS_AES_128_GCM_SHA256, wire.Version2, testSecret(tls.TLS_AES_128_GCM_SHA256, 1)},
		{"other suite", tls.TLS_CHACHA20_POLY1305_SHA256, wire.Version1, testSecret(tls.TLS_AES_128_GCM_SHA256, 1)},
	} {
		open, err := NewOpener(c.suite, c.v, c.secret)
		if err != nil {
			t.Fatal(err)
		}
		if openAny(open, append([]byte{}, sealed...), pnOffset) {
			t.Errorf("%s: packet opened", c.name)
		}
	}
}

// TestOpenWrongPacketNumber checks that the full packet number is bound
// into the nonce: the right truncated bytes with the wrong full packet
// number do not open.
func TestOpenWrongPacketNumber(t *testing.T) {
	seal, open, err := NewKeys(tls.TLS_AES_128_GCM_SHA256, wire.Version1, testSecret(tls.TLS_AES_128_GCM_SHA256, 1))
	if err != nil {
		t.Fatal(err)
	}
	const pn = 0x10007
	packet, pnOffset := testPacket(false, 2, pn, make([]byte, 30), 0)
	sealed := seal.Seal(packet, pnOffset, 2, pn)
	n, err := open.RemoveHeaderProtection(sealed, pnOffset)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.Open(sealed, pnOffset, n, pn&0xffff); !errors.Is(err, ErrDecryptionFailed) {
		t.Errorf("Open with truncated packet number: %v, want ErrDecryptionFailed", err)
	}
}

// TestShortPackets checks every prefix of a sealed packet: "An endpoint
// MUST discard packets that are not long enough to contain a complete
// sample." Prefixes too short for a sample fail with ErrPacketTooShort and
// stay unchanged; none opens and none panics.
func TestShortPackets(t *testing.T) {
	cid := unhex(t, testConnID)
	seal, _ := NewInitialKeys(wire.Version1, cid, true)
	_, open := NewInitialKeys(wire.Version1, cid, false)
	packet, pnOffset := testPacket(true, 1, 3, make([]byte, MinPayloadLen(1)), 0)
	sealed := seal.Seal(packet, pnOffset, 1, 3)
	if len(sealed) != pnOffset+20 {
		t.Fatalf("minimal packet is %d bytes, want %d", len(sealed), pnOffset+20)
	}
	for n := range len(sealed) {
		prefix := append([]byte{}, sealed[:n]...)
		if _, err := open.RemoveHeaderProtection(prefix, pnOffset); !errors.Is(err, ErrPacketTooShort) {
			t.Errorf("prefix %d: RemoveHeaderProtection error %v, want ErrPacketTooShort", n, err)
		}
		if !bytes.Equal(prefix, sealed[:n]) {
			t.Errorf("prefix %d: modified by a failed RemoveHeaderProtection", n)
		}
		for pnLen := 1; pnLen <= 4; pnLen++ {
			if _, err := open.Open(prefix, pnOffset, pnLen, 3); err == nil {
				t.Errorf("prefix %d: Open succeeded", n)
			}
		}
	}
	if !openAny(open, append([]byte{}, sealed...), pnOffset) {
		t.Error("minimal packet does not open")
	}
}

func TestOpenerArgumentRange(t *testing.T) {
	_, open := NewInitialKeys(wire.Version1, unhex(t, testConnID), false)
	packet := make([]byte, 100)
	for _, off := range []int{-1 << 62, -1, 0, 81, 100, 1 << 62} {
		if _, err := open.RemoveHeaderProtection(packet, off); !errors.Is(err, ErrPacketTooShort) {
			t.Errorf("RemoveHeaderProtection(pnOffset %d): %v", off, err)
		}
	}
	for _, c := range [][2]int{{0, 1}, {-5, 2}, {1, 0}, {1, 5}, {82, 4}, {1 << 62, 1}, {10, -1 << 62}} {
		if _, err := open.Open(packet, c[0], c[1], 0); !errors.Is(err, ErrPacketTooShort) {
			t.Errorf("Open(pnOffset %d, pnLen %d): %v", c[0], c[1], err)
		}
	}
}

func TestSealPanics(t *testing.T) {
	seal, _ := NewInitialKeys(wire.Version1, unhex(t, testConnID), true)
	for _, c := range []struct {
		name     string
		packet   func() []byte
		pnOffset int
		pnLen    int
		pn       wire.PacketNumber
	}{
		{"no capacity", func() []byte { p, _ := testPacket(false, 2, 1, make([]byte, 20), 0); return p[:len(p):len(p)] }, 9, 2, 1},
		{"pnLen disagrees with first byte", func() []byte { p, _ := testPacket(false, 2, 1, make([]byte, 20), 0); return p }, 9, 3, 1},
		{"pnLen 0", func() []byte { p, _ := testPacket(false, 1, 1, make([]byte, 20), 0); return p }, 9, 0, 1},
		{"pnLen 5", func() []byte { p, _ := testPacket(false, 4, 1, make([]byte, 20), 0); return p }, 9, 5, 1},
		{"pnOffset 0", func() []byte { p, _ := testPacket(false, 1, 1, make([]byte, 20), 0); return p }, 0, 1, 1},
		{"pnOffset past end", func() []byte { p, _ := testPacket(false, 1, 1, make([]byte, 20), 0); return p }, 40, 1, 1},
		{"payload too short", func() []byte { p, _ := testPacket(false, 2, 1, make([]byte, 1), 0); return p }, 9, 2, 1},
		{"negative pn", func() []byte { p, _ := testPacket(false, 2, 1, make([]byte, 20), 0); return p }, 9, 2, -1},
		{"pn 2^62", func() []byte { p, _ := testPacket(false, 2, 1, make([]byte, 20), 0); return p }, 9, 2, 1 << 62},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Seal did not panic", c.name)
				}
			}()
			seal.Seal(c.packet(), c.pnOffset, c.pnLen, c.pn)
		}()
	}
}

func TestMinPayloadLen(t *testing.T) {
	// "at least 3 bytes of frames in the unprotected payload if the packet
	// number is encoded on a single byte, or 2 bytes of frames for a 2-byte
	// packet number encoding." RFC 9001, Section 5.4.2
	for pnLen, want := range map[int]int{1: 3, 2: 2, 3: 1, 4: 0} {
		if got := MinPayloadLen(pnLen); got != want {
			t.Errorf("MinPayloadLen(%d) = %d, want %d", pnLen, got, want)
		}
	}
}

func TestKeyPhase(t *testing.T) {
	if KeyPhase(0x44) != 1 || KeyPhase(0x40) != 0 || KeyPhase(0xfb) != 0 || KeyPhase(0x04) != 1 {
		t.Error("KeyPhase reads the wrong bit")
	}
}

// TestAllocs asserts that Seal, RemoveHeaderProtection and Open do not
// allocate, for every suite.
func TestAllocs(t *testing.T) {
	for _, s := range suites {
		seal, open, err := NewKeys(s.id, wire.Version1, testSecret(s.id, 4))
		if err != nil {
			t.Fatal(err)
		}
		template, pnOffset := testPacket(false, 2, 77, make([]byte, 1150), 0)
		buf := make([]byte, len(template), len(template)+16)
		var sealed []byte
		if n := testing.AllocsPerRun(100, func() {
			copy(buf, template)
			sealed = seal.Seal(buf[:len(template)], pnOffset, 2, 77)
		}); n != 0 {
			t.Errorf("%s: Seal allocates %v times", s.name, n)
		}
		protected := append([]byte{}, sealed...)
		if n := testing.AllocsPerRun(100, func() {
			copy(buf[:cap(buf)], protected)
			if _, err := open.RemoveHeaderProtection(buf[:cap(buf)], pnOffset); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: RemoveHeaderProtection allocates %v times", s.name, n)
		}
		copy(buf[:cap(buf)], protected)
		pnLen, _ := open.RemoveHeaderProtection(buf[:cap(buf)], pnOffset)
		unprotected := append([]byte{}, buf[:cap(buf)]...)
		if n := testing.AllocsPerRun(100, func() {
			copy(buf[:cap(buf)], unprotected)
			if _, err := open.Open(buf[:cap(buf)], pnOffset, pnLen, 77); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: Open allocates %v times", s.name, n)
		}
	}
}

// benchPacketLen is the size of the protected packets in the benchmarks:
// the smallest datagram size every QUIC path supports (RFC 9000,
// Section 14).
const benchPacketLen = 1200

// benchmarkSeal measures sealing a 1200-byte 1-RTT packet (8-byte
// connection ID, 2-byte packet number). Each iteration restores the 11
// header bytes that header protection changed and seals the buffer again.
func benchmarkSeal(b *testing.B, suite uint16) {
	seal, err := NewSealer(suite, wire.Version1, testSecret(suite, 1))
	if err != nil {
		b.Fatal(err)
	}
	const pnLen = 2
	template, pnOffset := testPacket(false, pnLen, 1, make([]byte, benchPacketLen-1-8-pnLen-16), 0)
	hdrLen := pnOffset + pnLen
	buf := make([]byte, len(template), benchPacketLen)
	copy(buf, template)
	b.SetBytes(benchPacketLen)
	b.ReportAllocs()
	for b.Loop() {
		copy(buf[:hdrLen], template)
		seal.Seal(buf[:len(template)], pnOffset, pnLen, 1)
	}
}

// benchmarkOpen measures removing header protection from and opening a
// 1200-byte 1-RTT packet; each iteration first copies the protected packet
// back into the buffer (1200 bytes, a few tens of nanoseconds).
func benchmarkOpen(b *testing.B, suite uint16) {
	seal, open, err := NewKeys(suite, wire.Version1, testSecret(suite, 1))
	if err != nil {
		b.Fatal(err)
	}
	const pnLen = 2
	packet, pnOffset := testPacket(false, pnLen, 1, make([]byte, benchPacketLen-1-8-pnLen-16), 0)
	protected := seal.Seal(packet, pnOffset, pnLen, 1)
	buf := make([]byte, len(protected))
	b.SetBytes(benchPacketLen)
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, protected)
		n, err := open.RemoveHeaderProtection(buf, pnOffset)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := open.Open(buf, pnOffset, n, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSealAES128GCM1200(b *testing.B) { benchmarkSeal(b, tls.TLS_AES_128_GCM_SHA256) }
func BenchmarkOpenAES128GCM1200(b *testing.B) { benchmarkOpen(b, tls.TLS_AES_128_GCM_SHA256) }
func BenchmarkSealAES256GCM1200(b *testing.B) { benchmarkSeal(b, tls.TLS_AES_256_GCM_SHA384) }
func BenchmarkSealChaCha20Poly1305_1200(b *testing.B) {
	benchmarkSeal(b, tls.TLS_CHACHA20_POLY1305_SHA256)
}
func BenchmarkOpenChaCha20Poly1305_1200(b *testing.B) {
	benchmarkOpen(b, tls.TLS_CHACHA20_POLY1305_SHA256)
}
