package wire

import "errors"

// ErrUnsupportedVersion is returned by ParseLongHeader, ParseRetryPacket and
// PacketTypeOf for a long header whose Version field is neither 0 (Version
// Negotiation) nor a version this package parses (Version1, Version2). It
// is not a protocol error: a server that receives it for a large enough
// datagram may answer with a Version Negotiation packet built from
// ParseInvariantHeader (RFC 9000, Sections 5.2.2 and 6.1; RFC 8999,
// Section 6). Test for it with errors.Is.
var ErrUnsupportedVersion = errors.New("wire: unsupported QUIC version")

// Errors for malformed packet headers. They are allocated once so that
// parsing garbage datagrams does not allocate either; the parsers return
// them as they are, and callers must not modify them. A packet whose header
// is malformed is normally dropped rather than answered (RFC 9000,
// Section 5.2); the code PROTOCOL_VIOLATION is what a caller would use if
// it chose to close the connection instead.
var (
	hdrErrEmpty          = hdrError("empty packet")
	hdrErrTruncated      = hdrError("truncated packet header")
	hdrErrNotLong        = hdrError("not a long header packet")
	hdrErrNotShort       = hdrError("not a short header packet")
	hdrErrConnIDTooLong  = hdrError("connection ID longer than 20 bytes")
	hdrErrBadConnIDLen   = hdrError("short header connection ID length out of range")
	hdrErrTokenTooLong   = hdrError("Initial token length exceeds the packet")
	hdrErrLengthTooLong  = hdrError("Length field exceeds the datagram")
	hdrErrIsVN           = hdrError("Version Negotiation packet, not Initial, 0-RTT or Handshake")
	hdrErrIsRetry        = hdrError("Retry packet, not Initial, 0-RTT or Handshake")
	hdrErrReservedLong   = hdrError("reserved bits 0x0c of long header set")
	hdrErrReservedShort  = hdrError("reserved bits 0x18 of short header set")
	hdrErrNotRetry       = hdrError("not a Retry packet")
	hdrErrEmptyRetryTok  = hdrError("Retry packet with empty token")
	hdrErrVNVersion      = hdrError("Version Negotiation packet with non-zero version")
	hdrErrVNVersionsList = hdrError("Version Negotiation packet with empty or truncated version list")
)

func hdrError(reason string) *TransportError {
	return &TransportError{Code: ProtocolViolation, Reason: reason}
}

// Bits of the first byte of a packet (RFC 9000, Sections 17.2 and 17.3.1).
const (
	hdrFormBit          = 0x80 // Header Form: 1 for long headers
	hdrFixedBit         = 0x40 // Fixed Bit (the "QUIC Bit" of RFC 9287)
	hdrLongReserved     = 0x0c // long header Reserved Bits
	hdrShortReserved    = 0x18 // short header Reserved Bits
	hdrShortSpinBit     = 0x20 // short header Spin Bit
	hdrShortKeyPhaseBit = 0x04 // short header Key Phase
	hdrPNLenMask        = 0x03 // Packet Number Length
	hdrVersionOffset    = 1    // offset of the 32-bit Version field
	hdrLongDCIDLenOff   = 5    // offset of the Destination Connection ID Length
)

// FixedBitSet reports whether the Fixed Bit (0x40) of a packet's first byte
// is set. RFC 9000, Sections 17.2 and 17.3.1, says packets with the bit
// cleared "are not valid packets in this version and MUST be discarded",
// but an endpoint that advertised the grease_quic_bit transport parameter
// "MUST accept packets with the QUIC Bit set to a value of 0" (RFC 9287,
// Section 3). The rule is therefore per connection, and the header parsers
// in this package do not enforce it: callers check FixedBitSet where they
// must. Version Negotiation packets have no Fixed Bit (RFC 9000,
// Section 17.2.1).
func FixedBitSet(first byte) bool { return first&hdrFixedBit != 0 }

// CheckReservedBits returns a PROTOCOL_VIOLATION *TransportError if the
// Reserved Bits of a first byte are not zero: the bits 0x0c of a long header
// (RFC 9000, Section 17.2) or 0x18 of a short header (RFC 9000,
// Section 17.3.1). Call it only once header protection is removed and the
// packet has been authenticated: "An endpoint MUST treat receipt of a packet
// that has a non-zero value for these bits after removing both packet and
// header protection as a connection error of type PROTOCOL_VIOLATION."
// The returned error is shared and must not be modified.
func CheckReservedBits(first byte, long bool) error {
	if long {
		if first&hdrLongReserved != 0 {
			return hdrErrReservedLong
		}
		return nil
	}
	if first&hdrShortReserved != 0 {
		return hdrErrReservedShort
	}
	return nil
}

// PacketNumberLenFromFirstByte returns the length in bytes (1 to 4) of the
// Packet Number field given by the low two bits of a long or short header's
// first byte: "the length of the Packet Number field is the value of this
// field plus one" (RFC 9000, Sections 17.2 and 17.3.1). The bits are
// protected, so the first byte must have had header protection removed
// (RFC 9001, Section 5.4).
func PacketNumberLenFromFirstByte(first byte) int { return int(first&hdrPNLenMask) + 1 }

// LengthFieldLen returns the number of bytes LongHeader.Append uses for a
// Length field of the given value: 2 below 16384, otherwise 4 (8 for values
// of 2^30 and more, which no UDP datagram can carry). See LongHeader.Append
// for why the width is fixed rather than minimal.
func LengthFieldLen(length uint64) int {
	if length < 1<<14 {
		return 2
	}
	if length < 1<<30 {
		return 4
	}
	return 8
}

// A LongHeader is the header of an Initial, 0-RTT or Handshake packet of
// QUIC version 1 (RFC 9000, Sections 17.2.2 to 17.2.4) or version 2
// (RFC 9369, Section 3), up to and including the Length field. The Reserved
// Bits and Packet Number Length in the first byte and the Packet Number
// itself are protected by header protection (RFC 9001, Section 5.4), so
// they are not part of a parsed LongHeader; see PacketNumberLenFromFirstByte
// and CheckReservedBits for reading them once protection is removed.
//
// Retry and Version Negotiation packets have their own types: RetryPacket
// and VersionNegotiationPacket.
type LongHeader struct {
	// Type is PacketTypeInitial, PacketType0RTT or PacketTypeHandshake.
	Type PacketType
	// Version is Version1 or Version2; it determines the Long Packet Type
	// bits (RFC 9369, Section 3.2).
	Version Version
	// DstConnID and SrcConnID are the Destination and Source Connection
	// IDs, 0 to 20 bytes each in versions 1 and 2 (RFC 9000, Section 17.2).
	DstConnID, SrcConnID ConnectionID
	// Token is the Token field of an Initial packet (RFC 9000,
	// Section 17.2.2), empty if none. A parsed Token is a sub-slice of the
	// input. It is nil after parsing, and ignored by Append, for 0-RTT and
	// Handshake packets, which have no Token field.
	Token []byte
	// Length is the value of the Length field: the length in bytes of the
	// Packet Number and Packet Payload fields, the payload including the
	// AEAD tag (RFC 9000, Section 17.2).
	Length uint64
}

// ParseLongHeader parses the long header at the start of b, an Initial,
// 0-RTT or Handshake packet of QUIC version 1 or 2 (RFC 9000, Section 17.2;
// RFC 9369, Section 3), through its Length field. It returns the header and
// the number of bytes consumed, which is the offset of the still protected
// Packet Number field; the packet ends at that offset plus h.Length
// (RFC 9000, Section 12.2). It does not read the packet number.
//
// b may extend past the packet, as it does in a datagram of coalesced
// packets. ParseLongHeader returns ErrUnsupportedVersion for a version other
// than 0, 1 and 2, and a PROTOCOL_VIOLATION *TransportError if b is not a
// long header, is truncated, is a Retry or Version Negotiation packet, has a
// connection ID longer than 20 bytes, or its token or Length runs past the
// end of b. It does not check the Fixed Bit (see FixedBitSet). It never
// allocates.
func ParseLongHeader(b []byte) (LongHeader, int, error) {
	var h LongHeader
	if len(b) == 0 {
		return h, 0, hdrErrEmpty
	}
	first := b[0]
	if first&hdrFormBit == 0 {
		return h, 0, hdrErrNotLong
	}
	if len(b) < hdrLongDCIDLenOff {
		return h, 0, hdrErrTruncated
	}
	h.Version = hdrVersionAt(b)
	if h.Version == VersionNegotiationVersion {
		return LongHeader{}, 0, hdrErrIsVN
	}
	typ, ok := longHeaderPacketType(h.Version, first>>4)
	if !ok {
		return LongHeader{}, 0, ErrUnsupportedVersion
	}
	if typ == PacketTypeRetry {
		return LongHeader{}, 0, hdrErrIsRetry
	}
	h.Type = typ

	r := newReader(b)
	r.off = hdrLongDCIDLenOff
	// RFC 9000, Section 17.2: "Endpoints that receive a version 1 long
	// header with a value larger than 20 MUST drop the packet."
	dcidLen := r.byte1()
	if dcidLen > MaxConnectionIDLen {
		return LongHeader{}, 0, hdrErrConnIDTooLong
	}
	dcid := r.bytes(uint64(dcidLen))
	scidLen := r.byte1()
	if scidLen > MaxConnectionIDLen {
		return LongHeader{}, 0, hdrErrConnIDTooLong
	}
	scid := r.bytes(uint64(scidLen))
	if !r.ok {
		return LongHeader{}, 0, hdrErrTruncated
	}
	h.DstConnID = NewConnectionID(dcid)
	h.SrcConnID = NewConnectionID(scid)

	if typ == PacketTypeInitial {
		tokenLen := r.varint()
		if !r.ok {
			return LongHeader{}, 0, hdrErrTruncated
		}
		if tokenLen > uint64(len(b)-r.off) {
			return LongHeader{}, 0, hdrErrTokenTooLong
		}
		h.Token = r.bytes(tokenLen)
	}
	h.Length = r.varint()
	if !r.ok {
		return LongHeader{}, 0, hdrErrTruncated
	}
	// RFC 9000, Section 17.2: Length is "the length of the remainder of the
	// packet (that is, the Packet Number and Payload fields)".
	if h.Length > uint64(len(b)-r.off) {
		return LongHeader{}, 0, hdrErrLengthTooLong
	}
	return h, r.off, nil
}

// hdrVersionAt reads the Version field of a long header; len(b) >= 5.
func hdrVersionAt(b []byte) Version {
	_ = b[4]
	return Version(b[1])<<24 | Version(b[2])<<16 | Version(b[3])<<8 | Version(b[4])
}

// hdrAppendVersion appends v as a 32-bit big-endian integer.
func hdrAppendVersion(b []byte, v Version) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// HeaderLen returns the number of bytes Append writes for h with a pnLen-byte
// packet number: the long header through the Packet Number field.
func (h *LongHeader) HeaderLen(pnLen int) int {
	n := 1 + 4 + 1 + h.DstConnID.Len() + 1 + h.SrcConnID.Len()
	if h.Type == PacketTypeInitial {
		n += VarintLen(uint64(len(h.Token))) + len(h.Token)
	}
	return n + LengthFieldLen(h.Length) + pnLen
}

// Append appends the unprotected long header h with the pnLen-byte (1 to 4)
// truncation of packet number pn to b and returns the extended slice
// (RFC 9000, Section 17.2; RFC 9369, Section 3.2). The first byte has the
// Header Form and Fixed Bit set, the Long Packet Type bits of h.Type in
// h.Version, Reserved Bits 0 and the Packet Number Length pnLen-1. Initial
// packets get the Token Length and Token fields. Header protection is
// applied afterwards by the caller (RFC 9001, Section 5.4).
//
// The Length field is written in 2 bytes if h.Length < 16384 and in 4 bytes
// otherwise, not in its minimal width: a packer appends the header before it
// knows the final payload size, with h.Length set to an upper bound, and
// then patches the field in place with PutVarintWithLen using the width
// LengthFieldLen returned for that bound ("values do not need to be encoded
// on the minimum number of bytes necessary", RFC 9000, Section 16). Two
// bytes cover every packet that fits a typical datagram, so the Length of a
// full-size packet never changes width while it is being filled.
//
// Append panics if h.Type is not Initial, 0-RTT or Handshake, h.Version is
// not Version1 or Version2, or pnLen is not 1 to 4: such headers have no
// encoding. HeaderLen returns the number of bytes Append writes.
func (h *LongHeader) Append(b []byte, pn PacketNumber, pnLen int) []byte {
	if h.Type == PacketTypeRetry {
		panic("wire: LongHeader.Append of a Retry packet; use RetryPacket")
	}
	bits, ok := longHeaderTypeBits(h.Version, h.Type)
	if !ok {
		panic("wire: LongHeader.Append: no long header for this type and version")
	}
	if pnLen < 1 || pnLen > 4 {
		panic("wire: packet number length must be 1 to 4")
	}
	b = append(b, hdrFormBit|hdrFixedBit|bits<<4|byte(pnLen-1))
	b = hdrAppendVersion(b, h.Version)
	b = appendConnectionIDWithLen(b, h.DstConnID)
	b = appendConnectionIDWithLen(b, h.SrcConnID)
	if h.Type == PacketTypeInitial {
		b = AppendVarint(b, uint64(len(h.Token)))
		b = append(b, h.Token...)
	}
	b = AppendVarintWithLen(b, h.Length, LengthFieldLen(h.Length))
	return AppendPacketNumber(b, pn, pnLen)
}
