package wire

// RetryIntegrityTagLen is the length of the Retry Integrity Tag, 128 bits
// (RFC 9000, Section 17.2.5; RFC 9001, Section 5.8).
const RetryIntegrityTagLen = 16

// A RetryPacket is a Retry packet of QUIC version 1 (RFC 9000,
// Section 17.2.5) or version 2 (RFC 9369, Section 3.2). A Retry packet has
// no Length field and takes the rest of its datagram.
//
// The Retry Integrity Tag is computed and verified by package handshake over
// the Retry Pseudo-Packet (RFC 9001, Section 5.8); see
// AppendRetryPseudoPacket.
type RetryPacket struct {
	// Version is Version1 or Version2.
	Version Version
	// DstConnID and SrcConnID are the Destination and Source Connection
	// IDs, 0 to 20 bytes each.
	DstConnID, SrcConnID ConnectionID
	// Token is the Retry Token, never empty in a valid packet. A parsed
	// Token is a sub-slice of the input.
	Token []byte
	// IntegrityTag is the Retry Integrity Tag.
	IntegrityTag [RetryIntegrityTagLen]byte
}

// ParseRetryPacket parses b, which holds a whole Retry packet: everything
// from its first byte to the end of the datagram (RFC 9000, Section 17.2.5).
// The token is everything between the Source Connection ID and the last 16
// bytes, which are the Retry Integrity Tag. The four Unused bits of the
// first byte are ignored ("a client MUST ignore these bits") and so is the
// Fixed Bit (see FixedBitSet).
//
// ParseRetryPacket returns ErrUnsupportedVersion for a version other than
// 0, 1 and 2, and a PROTOCOL_VIOLATION *TransportError if b is not a Retry
// packet, is truncated, has a connection ID longer than 20 bytes, or has an
// empty token: "A client MUST discard a Retry packet with a zero-length
// Retry Token field" (RFC 9000, Section 17.2.5.2). It never allocates.
//
// The caller still has to verify the integrity tag and check that the
// Source Connection ID differs from the Destination Connection ID it sent
// (RFC 9000, Section 17.2.5.1).
func ParseRetryPacket(b []byte) (RetryPacket, error) {
	var p RetryPacket
	if len(b) == 0 {
		return p, hdrErrEmpty
	}
	first := b[0]
	if first&hdrFormBit == 0 {
		return p, hdrErrNotLong
	}
	if len(b) < hdrLongDCIDLenOff {
		return p, hdrErrTruncated
	}
	p.Version = hdrVersionAt(b)
	if p.Version == VersionNegotiationVersion {
		return RetryPacket{}, hdrErrNotRetry
	}
	typ, ok := longHeaderPacketType(p.Version, first>>4)
	if !ok {
		return RetryPacket{}, ErrUnsupportedVersion
	}
	if typ != PacketTypeRetry {
		return RetryPacket{}, hdrErrNotRetry
	}
	r := newReader(b)
	r.off = hdrLongDCIDLenOff
	dcidLen := r.byte1()
	if dcidLen > MaxConnectionIDLen {
		return RetryPacket{}, hdrErrConnIDTooLong
	}
	dcid := r.bytes(uint64(dcidLen))
	scidLen := r.byte1()
	if scidLen > MaxConnectionIDLen {
		return RetryPacket{}, hdrErrConnIDTooLong
	}
	scid := r.bytes(uint64(scidLen))
	if !r.ok || len(b)-r.off < RetryIntegrityTagLen {
		return RetryPacket{}, hdrErrTruncated
	}
	if len(b)-r.off == RetryIntegrityTagLen {
		// RFC 9000, Section 17.2.5.2: "A client MUST discard a Retry
		// packet with a zero-length Retry Token field."
		return RetryPacket{}, hdrErrEmptyRetryTok
	}
	p.DstConnID = NewConnectionID(dcid)
	p.SrcConnID = NewConnectionID(scid)
	p.Token = r.bytes(uint64(len(b) - r.off - RetryIntegrityTagLen))
	copy(p.IntegrityTag[:], r.rest())
	return p, nil
}

// EncodedLen returns the number of bytes Append writes for p.
func (p *RetryPacket) EncodedLen() int {
	return 1 + 4 + 1 + p.DstConnID.Len() + 1 + p.SrcConnID.Len() + len(p.Token) + RetryIntegrityTagLen
}

// Append appends the Retry packet p to b and returns the extended slice
// (RFC 9000, Section 17.2.5; RFC 9369, Section 3.2). The first byte has the
// Header Form and Fixed Bit set, the Retry type bits of p.Version, and the
// Unused bits 0. A server sending a Retry typically appends it with a zero
// IntegrityTag, computes the tag over
// AppendRetryPseudoPacket(nil, odcid, out[:len(out)-16]) and copies it into
// the last 16 bytes. Append panics if p.Version is not Version1 or
// Version2. An empty Token is encoded, but receivers discard such packets.
func (p *RetryPacket) Append(b []byte) []byte {
	bits, ok := longHeaderTypeBits(p.Version, PacketTypeRetry)
	if !ok {
		panic("wire: RetryPacket.Append: version has no Retry packet")
	}
	b = append(b, hdrFormBit|hdrFixedBit|bits<<4)
	b = hdrAppendVersion(b, p.Version)
	b = appendConnectionIDWithLen(b, p.DstConnID)
	b = appendConnectionIDWithLen(b, p.SrcConnID)
	b = append(b, p.Token...)
	return append(b, p.IntegrityTag[:]...)
}

// AppendRetryPseudoPacket appends the Retry Pseudo-Packet of RFC 9001,
// Section 5.8, to b: the ODCID Length and Original Destination Connection
// ID (the Destination Connection ID of the client's Initial packet that the
// Retry answers), followed by retryWithoutTag, the transmitted Retry packet
// with its Retry Integrity Tag removed. The pseudo-packet is the associated
// data of the AEAD that computes the tag; it is never sent. Package
// handshake computes the tag itself.
func AppendRetryPseudoPacket(b []byte, odcid ConnectionID, retryWithoutTag []byte) []byte {
	b = appendConnectionIDWithLen(b, odcid)
	return append(b, retryWithoutTag...)
}
