package wire

import (
	"encoding/binary"
	"net/netip"
)

// A PreferredAddress is the value of the server's preferred_address transport
// parameter (RFC 9000, Section 18.2, Figure 22): an IPv4 and an IPv6 address
// to migrate to after the handshake (Section 9.6), and the connection ID with
// sequence number 1 and its stateless reset token.
//
// "Servers MAY choose to only send a preferred address of one address family
// by sending an all-zero address and port (0.0.0.0:0 or [::]:0) for the other
// family." A family that is not offered is the zero netip.AddrPort (IsValid
// reports false): ParsePreferredAddress returns it for an all-zero address
// and port, and Append encodes it as one. An all-zero address with a non-zero
// port, or the reverse, is kept as it was received.
type PreferredAddress struct {
	// IPv4 is the IPv4 address and port, or the zero AddrPort if none.
	IPv4 netip.AddrPort
	// IPv6 is the IPv6 address and port, or the zero AddrPort if none.
	IPv6 netip.AddrPort
	// ConnectionID is the connection ID with sequence number 1. It must not
	// be empty: "a server MUST NOT include a zero-length connection ID in
	// this transport parameter".
	ConnectionID ConnectionID
	// StatelessResetToken is the stateless reset token for ConnectionID.
	StatelessResetToken StatelessResetToken
}

// tpPreferredAddressFixedLen is the length of a preferred_address value
// without its connection ID: IPv4 address and port, IPv6 address and port,
// connection ID length, stateless reset token.
const tpPreferredAddressFixedLen = 4 + 2 + 16 + 2 + 1 + StatelessResetTokenLen

// ParsePreferredAddress parses the value of a preferred_address transport
// parameter (RFC 9000, Section 18.2, Figure 22); b must hold exactly that
// value. It returns a TRANSPORT_PARAMETER_ERROR if b is truncated or has
// trailing bytes, the connection ID is longer than 20 bytes, or it is empty.
// It never allocates.
func ParsePreferredAddress(b []byte) (PreferredAddress, error) {
	var a PreferredAddress
	if len(b) < tpPreferredAddressFixedLen {
		return a, tpError("preferred_address too short")
	}
	a.IPv4 = tpAddrPort(netip.AddrFrom4([4]byte(b[0:4])), binary.BigEndian.Uint16(b[4:6]))
	a.IPv6 = tpAddrPort(netip.AddrFrom16([16]byte(b[6:22])), binary.BigEndian.Uint16(b[22:24]))
	cidLen := int(b[24])
	if cidLen > MaxConnectionIDLen {
		// The Connection ID field is "identical in syntax and semantics"
		// to that of NEW_CONNECTION_ID, which limits it to 20 bytes
		// (RFC 9000, Sections 18.2 and 19.15).
		return PreferredAddress{}, tpError("preferred_address connection ID longer than 20 bytes")
	}
	if len(b) != tpPreferredAddressFixedLen+cidLen {
		return PreferredAddress{}, tpError("preferred_address length does not match its connection ID length")
	}
	if cidLen == 0 {
		// "a server MUST NOT include a zero-length connection ID in this
		// transport parameter. A client MUST treat a violation of these
		// requirements as a connection error of type
		// TRANSPORT_PARAMETER_ERROR." RFC 9000, Section 18.2
		return PreferredAddress{}, tpError("preferred_address with a zero-length connection ID")
	}
	a.ConnectionID = NewConnectionID(b[25 : 25+cidLen])
	a.StatelessResetToken = StatelessResetToken(b[25+cidLen:])
	return a, nil
}

// tpAddrPort returns the zero AddrPort for the all-zero address and port that
// stands for an address family that is not offered, and ip:port otherwise.
func tpAddrPort(ip netip.Addr, port uint16) netip.AddrPort {
	if port == 0 && ip.IsUnspecified() {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ip, port)
}

// EncodedLen returns the length of the preferred_address value that Append
// writes.
func (a PreferredAddress) EncodedLen() int {
	return tpPreferredAddressFixedLen + a.ConnectionID.Len()
}

// Append appends the preferred_address value (RFC 9000, Section 18.2,
// Figure 22), without the parameter's ID and length, to b. A zero IPv4 or
// IPv6 AddrPort is written as the all-zero address and port. Append panics if
// IPv4 holds an address that is not IPv4 (or IPv4-mapped IPv6) or IPv6 holds
// an IPv4 address. It does not reject an empty connection ID, so that tests
// can produce one; a server must not send it. Zones are not encoded.
func (a PreferredAddress) Append(b []byte) []byte {
	var v4 [4]byte
	if a.IPv4.IsValid() {
		ip := a.IPv4.Addr().Unmap()
		if !ip.Is4() {
			panic("wire: PreferredAddress.IPv4 is not an IPv4 address")
		}
		v4 = ip.As4()
	}
	b = append(b, v4[:]...)
	b = binary.BigEndian.AppendUint16(b, a.IPv4.Port())
	var v6 [16]byte
	if a.IPv6.IsValid() {
		ip := a.IPv6.Addr()
		if !ip.Is6() {
			panic("wire: PreferredAddress.IPv6 is not an IPv6 address")
		}
		v6 = ip.As16()
	}
	b = append(b, v6[:]...)
	b = binary.BigEndian.AppendUint16(b, a.IPv6.Port())
	b = appendConnectionIDWithLen(b, a.ConnectionID)
	return append(b, a.StatelessResetToken[:]...)
}
