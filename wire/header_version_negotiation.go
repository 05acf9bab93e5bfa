package wire

// hdrMaxVNConnIDLen is the longest connection ID a Version Negotiation
// packet can carry: its length is an 8-bit field (RFC 8999, Section 6).
const hdrMaxVNConnIDLen = 255

// A VersionNegotiationPacket is a Version Negotiation packet (RFC 9000,
// Section 17.2.1; RFC 8999, Section 6). It is version independent, so its
// connection IDs may be up to 255 bytes long and are kept as sub-slices of
// the parsed input rather than ConnectionID values. A Version Negotiation
// packet has no Length field and takes the rest of its datagram.
type VersionNegotiationPacket struct {
	// DstConnID and SrcConnID are the Destination and Source Connection
	// IDs, 0 to 255 bytes each. A client checks that they echo the Source
	// and Destination Connection IDs it sent (RFC 9000, Section 17.2.1).
	DstConnID, SrcConnID []byte
	// versions is the raw Supported Version list, a non-empty multiple of
	// 4 bytes.
	versions []byte
}

// ParseVersionNegotiation parses b, which holds a whole Version Negotiation
// packet: everything from its first byte to the end of the datagram
// (RFC 9000, Section 17.2.1). The seven Unused bits of the first byte are
// ignored ("Clients MUST ignore the value of this field").
//
// It returns a PROTOCOL_VIOLATION *TransportError if b does not have the
// Header Form bit set, is truncated, has a Version field other than 0, or
// has a Supported Version list that is empty or not a multiple of 4 bytes:
// "An endpoint MUST ignore a packet that contains no Supported Version
// fields or contains a truncated Supported Version value" (RFC 8999,
// Section 6). It never allocates.
func ParseVersionNegotiation(b []byte) (VersionNegotiationPacket, error) {
	if len(b) == 0 {
		return VersionNegotiationPacket{}, hdrErrEmpty
	}
	if b[0]&hdrFormBit == 0 {
		return VersionNegotiationPacket{}, hdrErrNotLong
	}
	if len(b) < hdrLongDCIDLenOff {
		return VersionNegotiationPacket{}, hdrErrTruncated
	}
	// RFC 9000, Section 17.2.1: "The Version field of a Version
	// Negotiation packet MUST be set to 0x00000000."
	if hdrVersionAt(b) != VersionNegotiationVersion {
		return VersionNegotiationPacket{}, hdrErrVNVersion
	}
	r := newReader(b)
	r.off = hdrLongDCIDLenOff
	var p VersionNegotiationPacket
	p.DstConnID = r.bytes(uint64(r.byte1()))
	p.SrcConnID = r.bytes(uint64(r.byte1()))
	if !r.ok {
		return VersionNegotiationPacket{}, hdrErrTruncated
	}
	p.versions = r.rest()
	if len(p.versions) == 0 || len(p.versions)%4 != 0 {
		return VersionNegotiationPacket{}, hdrErrVNVersionsList
	}
	return p, nil
}

// NumVersions returns the number of versions in the Supported Version list.
func (p VersionNegotiationPacket) NumVersions() int { return len(p.versions) / 4 }

// Version returns the i-th Supported Version. It panics if i is out of the
// range [0, NumVersions()).
func (p VersionNegotiationPacket) Version(i int) Version {
	v := p.versions[4*i : 4*i+4]
	return Version(v[0])<<24 | Version(v[1])<<16 | Version(v[2])<<8 | Version(v[3])
}

// Contains reports whether v is in the Supported Version list. A client
// that receives a Version Negotiation packet listing the version it
// attempted must discard it (RFC 9000, Section 6.2).
func (p VersionNegotiationPacket) Contains(v Version) bool {
	for i := 0; i+4 <= len(p.versions); i += 4 {
		if Version(p.versions[i])<<24|Version(p.versions[i+1])<<16|
			Version(p.versions[i+2])<<8|Version(p.versions[i+3]) == v {
			return true
		}
	}
	return false
}

// AppendVersionNegotiation appends a Version Negotiation packet to b and
// returns the extended slice (RFC 9000, Section 17.2.1; RFC 8999,
// Section 6). The first byte is 0x80 | unused, where the low seven bits of
// unused are arbitrary; "servers SHOULD set the most significant bit of this
// field (0x40) to 1 so that Version Negotiation packets appear to have the
// Fixed Bit field" (RFC 9000, Section 17.2.1), so callers usually pass
// 0x40 plus random bits. dst must be the Source Connection ID of the packet
// being answered and src its Destination Connection ID. versions should be
// non-empty (receivers ignore an empty list); servers may add a reserved
// version (Version.IsReserved) to exercise negotiation (RFC 9000,
// Section 6.3). AppendVersionNegotiation panics if dst or src is longer than
// 255 bytes.
func AppendVersionNegotiation(b []byte, unused byte, dst, src []byte, versions []Version) []byte {
	if len(dst) > hdrMaxVNConnIDLen || len(src) > hdrMaxVNConnIDLen {
		panic("wire: Version Negotiation connection ID longer than 255 bytes")
	}
	b = append(b, hdrFormBit|unused&^hdrFormBit)
	b = hdrAppendVersion(b, VersionNegotiationVersion)
	b = append(b, byte(len(dst)))
	b = append(b, dst...)
	b = append(b, byte(len(src)))
	b = append(b, src...)
	for _, v := range versions {
		b = hdrAppendVersion(b, v)
	}
	return b
}
