package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// RFC 9000, Section 17.1: "if an endpoint has received an acknowledgment for
// packet 0xabe8b3 and is sending a packet with a number of 0xac5c02, there
// are 29,519 (0x734f) outstanding packet numbers. In order to represent at
// least twice this range (59,038 packets, or 0xe69e), 16 bits are required.
// In the same state, sending a packet with a number of 0xace8fe uses the
// 24-bit encoding".
func TestPacketNumberLenRFCExample(t *testing.T) {
	if n := PacketNumberLen(0xac5c02, 0xabe8b3); n != 2 {
		t.Errorf("PacketNumberLen(0xac5c02, 0xabe8b3) = %d; want 2", n)
	}
	if n := PacketNumberLen(0xace8fe, 0xabe8b3); n != 3 {
		t.Errorf("PacketNumberLen(0xace8fe, 0xabe8b3) = %d; want 3", n)
	}
	if n := PacketNumberLen(0, InvalidPacketNumber); n != 1 {
		t.Errorf("first packet uses %d bytes; want 1", n)
	}
	if n := PacketNumberLen(1<<40, 0); n != 4 {
		t.Errorf("huge gap uses %d bytes; want 4", n)
	}
}

// RFC 9000, Appendix A.3: "if the highest successfully authenticated packet
// had a packet number of 0xa82f30ea, then a packet containing a 16-bit value
// of 0x9b32 will be decoded as 0xa82f9b32."
func TestDecodePacketNumberRFCExample(t *testing.T) {
	if pn := DecodePacketNumber(0xa82f30ea, 0x9b32, 2); pn != 0xa82f9b32 {
		t.Fatalf("DecodePacketNumber = %#x; want 0xa82f9b32", pn)
	}
}

func TestPacketNumberRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		largestAcked := PacketNumber(r.Int64N(1 << 40))
		if i%10 == 0 {
			largestAcked = InvalidPacketNumber
		}
		// The receiver has seen something between largestAcked and pn-1.
		pn := largestAcked + 1 + PacketNumber(r.Int64N(1<<20))
		largestRecv := pn - 1 - PacketNumber(r.Int64N(int64(pn-largestAcked)))
		n := PacketNumberLen(pn, largestAcked)
		b := AppendPacketNumber(nil, pn, n)
		if len(b) != n {
			t.Fatalf("AppendPacketNumber wrote %d bytes; want %d", len(b), n)
		}
		trunc, ok := ParseTruncatedPacketNumber(b, n)
		if !ok {
			t.Fatal("ParseTruncatedPacketNumber failed")
		}
		if got := DecodePacketNumber(largestRecv, trunc, n); got != pn {
			t.Fatalf("pn %d (acked %d, recv %d, len %d) decoded as %d", pn, largestAcked, largestRecv, n, got)
		}
	}
}

func TestPacketNumberEdges(t *testing.T) {
	if !bytes.Equal(AppendPacketNumber(nil, 0x01020304, 3), []byte{2, 3, 4}) {
		t.Error("AppendPacketNumber did not truncate")
	}
	if _, ok := ParseTruncatedPacketNumber([]byte{1, 2}, 3); ok {
		t.Error("short input accepted")
	}
	if _, ok := ParseTruncatedPacketNumber([]byte{1, 2, 3, 4, 5}, 5); ok {
		t.Error("length 5 accepted")
	}
	// Near the top of the space the candidate must not overflow 2^62.
	if pn := DecodePacketNumber(MaxPacketNumber-1, 0xff, 1); pn != MaxPacketNumber {
		t.Errorf("decode near 2^62 = %#x", pn)
	}
	// The first packet, with nothing received.
	if pn := DecodePacketNumber(InvalidPacketNumber, 0, 1); pn != 0 {
		t.Errorf("first packet decoded as %d", pn)
	}
}
