package wire

import "strconv"

// A Version is a QUIC version number (RFC 9000, Section 15).
type Version uint32

const (
	// VersionNegotiationVersion is the version field of a Version
	// Negotiation packet (RFC 8999, Section 6).
	VersionNegotiationVersion Version = 0
	// Version1 is QUIC version 1 (RFC 9000).
	Version1 Version = 0x00000001
	// Version2 is QUIC version 2 (RFC 9369, Section 3.1).
	Version2 Version = 0x6b3343cf
)

// IsSupported reports whether v is a version this package can parse long
// headers of: Version1 or Version2.
func (v Version) IsSupported() bool { return v == Version1 || v == Version2 }

// IsReserved reports whether v follows the 0x?a?a?a?a pattern reserved for
// exercising version negotiation (RFC 9000, Section 15).
func (v Version) IsReserved() bool { return v&0x0f0f0f0f == 0x0a0a0a0a }

// String returns "v1", "v2", or the version in hexadecimal.
func (v Version) String() string {
	switch v {
	case Version1:
		return "v1"
	case Version2:
		return "v2"
	}
	return "0x" + strconv.FormatUint(uint64(v), 16)
}
