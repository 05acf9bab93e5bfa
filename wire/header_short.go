package wire

// A ShortHeader is the header of a 1-RTT packet (RFC 9000, Section 17.3.1)
// up to its Packet Number field. The short header does not carry the length
// of the Destination Connection ID: the receiver knows it, because it chose
// the connection IDs it issued (RFC 8999, Section 5.2).
type ShortHeader struct {
	// DstConnID is the Destination Connection ID, 0 to 20 bytes.
	DstConnID ConnectionID
	// SpinBit is the latency spin bit, 0x20 of the first byte
	// (RFC 9000, Section 17.4). It is not protected.
	SpinBit bool
	// KeyPhase is the Key Phase bit, 0x04 of the first byte, which selects
	// the packet protection keys (RFC 9001, Section 6). It is protected by
	// header protection.
	KeyPhase bool
}

// ParseShortHeader parses the short header at the start of b, a 1-RTT
// packet whose Destination Connection ID is connIDLen bytes long (0 to 20),
// and returns the header and the offset of the Packet Number field,
// 1+connIDLen (RFC 9000, Section 17.3.1).
//
// SpinBit and KeyPhase are read from b[0] as given. The Key Phase bit is
// protected (RFC 9001, Section 5.4), so a caller that parses before removing
// header protection reads KeyPhase from the unprotected first byte (0x04)
// afterwards, or parses again. The packet number and the Reserved Bits are
// likewise protected; see PacketNumberLenFromFirstByte and
// CheckReservedBits.
//
// ParseShortHeader returns a PROTOCOL_VIOLATION *TransportError if b is
// empty, has the Header Form bit set, or is shorter than 1+connIDLen, and if
// connIDLen is out of range. It does not check the Fixed Bit (see
// FixedBitSet). It never allocates.
func ParseShortHeader(b []byte, connIDLen int) (ShortHeader, int, error) {
	if connIDLen < 0 || connIDLen > MaxConnectionIDLen {
		return ShortHeader{}, 0, hdrErrBadConnIDLen
	}
	if len(b) == 0 {
		return ShortHeader{}, 0, hdrErrEmpty
	}
	first := b[0]
	if first&hdrFormBit != 0 {
		return ShortHeader{}, 0, hdrErrNotShort
	}
	n := 1 + connIDLen
	if len(b) < n {
		return ShortHeader{}, 0, hdrErrTruncated
	}
	return ShortHeader{
		DstConnID: NewConnectionID(b[1:n]),
		SpinBit:   first&hdrShortSpinBit != 0,
		KeyPhase:  first&hdrShortKeyPhaseBit != 0,
	}, n, nil
}

// HeaderLen returns the number of bytes Append writes for h with a pnLen-byte
// packet number: 1 + h.DstConnID.Len() + pnLen.
func (h *ShortHeader) HeaderLen(pnLen int) int { return 1 + h.DstConnID.Len() + pnLen }

// Append appends the unprotected short header h with the pnLen-byte (1 to 4)
// truncation of packet number pn to b and returns the extended slice
// (RFC 9000, Section 17.3.1). The first byte has the Header Form 0, the
// Fixed Bit set, the Spin Bit and Key Phase from h, Reserved Bits 0 and the
// Packet Number Length pnLen-1. A sender that negotiated grease_quic_bit
// may clear the Fixed Bit afterwards (RFC 9287, Section 3). Header
// protection is applied by the caller (RFC 9001, Section 5.4). Append
// panics if pnLen is not 1 to 4.
func (h *ShortHeader) Append(b []byte, pn PacketNumber, pnLen int) []byte {
	if pnLen < 1 || pnLen > 4 {
		panic("wire: packet number length must be 1 to 4")
	}
	first := hdrFixedBit | byte(pnLen-1)
	if h.SpinBit {
		first |= hdrShortSpinBit
	}
	if h.KeyPhase {
		first |= hdrShortKeyPhaseBit
	}
	b = append(b, first)
	b = append(b, h.DstConnID.b[:h.DstConnID.len]...)
	return AppendPacketNumber(b, pn, pnLen)
}
