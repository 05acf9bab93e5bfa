package wire

// IsLongHeader reports whether a packet whose first byte is first has a long
// header: "A QUIC packet with a long header has the high bit of the first
// byte set to 1" (RFC 8999, Section 5.1). This holds in every QUIC version.
func IsLongHeader(first byte) bool { return first&hdrFormBit != 0 }

// An InvariantHeader holds the fields of a QUIC packet header that are the
// same in every QUIC version (RFC 8999, Section 5): what a demultiplexer
// reads to route a packet, and what a server needs to answer a packet of an
// unknown version with a Version Negotiation packet.
type InvariantHeader struct {
	// IsLong reports whether the packet has a long header.
	IsLong bool
	// Version is the Version field of a long header; 0 for a short header
	// (and for a Version Negotiation packet).
	Version Version
	// DstConnID is the Destination Connection ID, a sub-slice of the input.
	// In a long header it is 0 to 255 bytes (RFC 8999, Section 5.1).
	DstConnID []byte
	// SrcConnID is the Source Connection ID of a long header, 0 to 255
	// bytes, a sub-slice of the input; nil for a short header.
	SrcConnID []byte
}

// ParseInvariantHeader parses the version-independent fields at the start of
// b (RFC 8999, Sections 5.1 and 5.2). For a short header, whose connection
// ID length is not encoded, the Destination Connection ID is taken to be
// shortConnIDLen bytes long, the length of the connection IDs the receiver
// issues. Long-header connection IDs may be up to 255 bytes, as other
// versions allow; version-specific limits "MUST NOT influence a decision
// about whether to send a Version Negotiation packet" (RFC 9000,
// Section 17.2.1).
//
// It returns a PROTOCOL_VIOLATION *TransportError if b is empty or truncated
// or shortConnIDLen is negative. It never allocates.
func ParseInvariantHeader(b []byte, shortConnIDLen int) (InvariantHeader, error) {
	if len(b) == 0 {
		return InvariantHeader{}, hdrErrEmpty
	}
	if !IsLongHeader(b[0]) {
		if shortConnIDLen < 0 {
			return InvariantHeader{}, hdrErrBadConnIDLen
		}
		if len(b)-1 < shortConnIDLen {
			return InvariantHeader{}, hdrErrTruncated
		}
		return InvariantHeader{DstConnID: b[1 : 1+shortConnIDLen : 1+shortConnIDLen]}, nil
	}
	if len(b) < hdrLongDCIDLenOff {
		return InvariantHeader{}, hdrErrTruncated
	}
	h := InvariantHeader{IsLong: true, Version: hdrVersionAt(b)}
	r := newReader(b)
	r.off = hdrLongDCIDLenOff
	h.DstConnID = r.bytes(uint64(r.byte1()))
	h.SrcConnID = r.bytes(uint64(r.byte1()))
	if !r.ok {
		return InvariantHeader{}, hdrErrTruncated
	}
	return h, nil
}

// ParseDestConnectionID returns the Destination Connection ID of the packet
// at the start of b, for routing it to its connection (RFC 9000,
// Section 5.2; RFC 8999, Section 5). For a short header the connection ID
// is shortConnIDLen bytes (0 to 20) long. It returns a PROTOCOL_VIOLATION
// *TransportError if b is empty or truncated, shortConnIDLen is out of
// range, or a long header's Destination Connection ID is longer than 20
// bytes; such a packet, if its version is unknown, can still be answered
// with the help of ParseInvariantHeader. It never allocates.
func ParseDestConnectionID(b []byte, shortConnIDLen int) (ConnectionID, error) {
	if len(b) == 0 {
		return ConnectionID{}, hdrErrEmpty
	}
	if !IsLongHeader(b[0]) {
		if shortConnIDLen < 0 || shortConnIDLen > MaxConnectionIDLen {
			return ConnectionID{}, hdrErrBadConnIDLen
		}
		if len(b)-1 < shortConnIDLen {
			return ConnectionID{}, hdrErrTruncated
		}
		return NewConnectionID(b[1 : 1+shortConnIDLen]), nil
	}
	if len(b) <= hdrLongDCIDLenOff {
		return ConnectionID{}, hdrErrTruncated
	}
	n := int(b[hdrLongDCIDLenOff])
	if n > MaxConnectionIDLen {
		return ConnectionID{}, hdrErrConnIDTooLong
	}
	start := hdrLongDCIDLenOff + 1
	if len(b)-start < n {
		return ConnectionID{}, hdrErrTruncated
	}
	return NewConnectionID(b[start : start+n]), nil
}

// PacketTypeOf classifies the packet at the start of b from its first byte
// and, for a long header, its Version field: PacketType1RTT for a short
// header (RFC 9000, Section 17.3), PacketTypeVersionNegotiation for version
// 0 (RFC 9000, Section 17.2.1), and PacketTypeInitial, PacketType0RTT,
// PacketTypeHandshake or PacketTypeRetry from the Long Packet Type bits of
// version 1 (RFC 9000, Section 17.2) or version 2 (RFC 9369, Section 3.2).
// It returns ErrUnsupportedVersion for any other version, and a
// PROTOCOL_VIOLATION *TransportError if b is empty or a long header is
// shorter than 5 bytes. It looks at nothing else: the parsers validate the
// rest. It never allocates.
func PacketTypeOf(b []byte) (PacketType, error) {
	if len(b) == 0 {
		return 0, hdrErrEmpty
	}
	if !IsLongHeader(b[0]) {
		return PacketType1RTT, nil
	}
	if len(b) < hdrLongDCIDLenOff {
		return 0, hdrErrTruncated
	}
	v := hdrVersionAt(b)
	if v == VersionNegotiationVersion {
		return PacketTypeVersionNegotiation, nil
	}
	t, ok := longHeaderPacketType(v, b[0]>>4)
	if !ok {
		return 0, ErrUnsupportedVersion
	}
	return t, nil
}
