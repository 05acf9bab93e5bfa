package wire

// A PacketType names the kind of a QUIC packet (RFC 9000, Section 17).
type PacketType uint8

const (
	// PacketTypeInitial is a long-header Initial packet (RFC 9000, Section 17.2.2).
	PacketTypeInitial PacketType = iota + 1
	// PacketType0RTT is a long-header 0-RTT packet (RFC 9000, Section 17.2.3).
	PacketType0RTT
	// PacketTypeHandshake is a long-header Handshake packet (RFC 9000, Section 17.2.4).
	PacketTypeHandshake
	// PacketTypeRetry is a long-header Retry packet (RFC 9000, Section 17.2.5).
	PacketTypeRetry
	// PacketTypeVersionNegotiation is a Version Negotiation packet
	// (RFC 9000, Section 17.2.1).
	PacketTypeVersionNegotiation
	// PacketType1RTT is a short-header 1-RTT packet (RFC 9000, Section 17.3.1).
	PacketType1RTT
)

// String returns the packet type's name as RFC 9000 spells it.
func (t PacketType) String() string {
	switch t {
	case PacketTypeInitial:
		return "Initial"
	case PacketType0RTT:
		return "0-RTT"
	case PacketTypeHandshake:
		return "Handshake"
	case PacketTypeRetry:
		return "Retry"
	case PacketTypeVersionNegotiation:
		return "VersionNegotiation"
	case PacketType1RTT:
		return "1-RTT"
	}
	return "unknown"
}

// longHeaderTypeBits returns the two Long Packet Type bits (bits 4-5 of the
// first byte) of t in version v. Version 2 rotates them
// (RFC 9369, Section 3.2). ok is false for types that have no long header
// form in v.
func longHeaderTypeBits(v Version, t PacketType) (bits byte, ok bool) {
	var b byte
	switch t {
	case PacketTypeInitial:
		b = 0
	case PacketType0RTT:
		b = 1
	case PacketTypeHandshake:
		b = 2
	case PacketTypeRetry:
		b = 3
	default:
		return 0, false
	}
	switch v {
	case Version1:
		return b, true
	case Version2:
		// Initial 0b01, 0-RTT 0b10, Handshake 0b11, Retry 0b00.
		return (b + 1) & 3, true
	}
	return 0, false
}

// longHeaderPacketType is the inverse of longHeaderTypeBits.
func longHeaderPacketType(v Version, bits byte) (PacketType, bool) {
	bits &= 3
	switch v {
	case Version1:
	case Version2:
		bits = (bits + 3) & 3
	default:
		return 0, false
	}
	return PacketTypeInitial + PacketType(bits), true
}
