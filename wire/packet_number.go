package wire

// A PacketNumber is a full 62-bit QUIC packet number (RFC 9000, Section 12.3).
type PacketNumber int64

// InvalidPacketNumber stands for "no packet number", for example the largest
// acknowledged before any packet was acknowledged.
const InvalidPacketNumber PacketNumber = -1

// MaxPacketNumber is the largest packet number, 2^62-1
// (RFC 9000, Section 12.3).
const MaxPacketNumber PacketNumber = 1<<62 - 1

// PacketNumberLen returns the number of bytes (1 to 4) to encode pn with,
// given the largest packet number the peer has acknowledged in the same
// space (InvalidPacketNumber if none): enough to represent more than twice
// the number of packets in flight (RFC 9000, Section 17.1 and Appendix A.2).
func PacketNumberLen(pn, largestAcked PacketNumber) int {
	var unacked uint64
	if largestAcked == InvalidPacketNumber {
		unacked = uint64(pn) + 1
	} else {
		unacked = uint64(pn - largestAcked)
	}
	// "the sender MUST use a packet number size able to represent more than
	// twice as large a range as the difference" (Section 17.1).
	switch r := 2 * unacked; {
	case r < 1<<8:
		return 1
	case r < 1<<16:
		return 2
	case r < 1<<24:
		return 3
	}
	return 4
}

// AppendPacketNumber appends the n low-order bytes of pn (n is 1 to 4).
func AppendPacketNumber(b []byte, pn PacketNumber, n int) []byte {
	switch n {
	case 1:
		return append(b, byte(pn))
	case 2:
		return append(b, byte(pn>>8), byte(pn))
	case 3:
		return append(b, byte(pn>>16), byte(pn>>8), byte(pn))
	case 4:
		return append(b, byte(pn>>24), byte(pn>>16), byte(pn>>8), byte(pn))
	}
	panic("wire: packet number length must be 1 to 4")
}

// ParseTruncatedPacketNumber reads an n-byte truncated packet number from
// the start of b (n is 1 to 4, from the low two bits of the first byte once
// header protection is removed). It returns false if b is too short or n is
// out of range.
func ParseTruncatedPacketNumber(b []byte, n int) (uint64, bool) {
	if n < 1 || n > 4 || len(b) < n {
		return 0, false
	}
	var v uint64
	for _, c := range b[:n] {
		v = v<<8 | uint64(c)
	}
	return v, true
}

// DecodePacketNumber recovers a full packet number from its n-byte truncated
// form, given the largest packet number received so far in the same space
// (InvalidPacketNumber if none), following RFC 9000, Appendix A.3.
func DecodePacketNumber(largest PacketNumber, truncated uint64, n int) PacketNumber {
	expected := int64(largest) + 1
	win := int64(1) << (8 * n)
	hwin := win / 2
	mask := win - 1
	// The incoming packet number should be greater than expected-hwin and
	// less than or equal to expected+hwin.
	candidate := (expected &^ mask) | int64(truncated)
	if candidate <= expected-hwin && candidate < 1<<62-win {
		return PacketNumber(candidate + win)
	}
	if candidate > expected+hwin && candidate >= win {
		return PacketNumber(candidate - win)
	}
	return PacketNumber(candidate)
}
