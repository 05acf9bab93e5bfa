package wire

import "encoding/hex"

// MaxConnectionIDLen is the longest connection ID QUIC version 1 and 2 allow,
// in bytes (RFC 9000, Section 17.2). Version Negotiation packets may carry
// longer ones (RFC 8999, Section 5.1); see InvariantHeader.
const MaxConnectionIDLen = 20

// A ConnectionID is a QUIC connection ID of 0 to 20 bytes
// (RFC 9000, Section 5.1). It is a comparable value type: it can be compared
// with == and used as a map key without allocating. The zero value is the
// empty connection ID.
type ConnectionID struct {
	len uint8
	b   [MaxConnectionIDLen]byte
}

// NewConnectionID returns a ConnectionID holding a copy of b. It panics if b
// is longer than MaxConnectionIDLen; parsers check lengths before calling it.
func NewConnectionID(b []byte) ConnectionID {
	if len(b) > MaxConnectionIDLen {
		panic("wire: connection ID longer than 20 bytes")
	}
	var c ConnectionID
	c.len = uint8(copy(c.b[:], b))
	return c
}

// Len returns the length of the connection ID in bytes.
func (c ConnectionID) Len() int { return int(c.len) }

// Bytes returns the connection ID's bytes. The slice aliases c, so it is
// valid as long as c is and must not be modified.
func (c *ConnectionID) Bytes() []byte { return c.b[:c.len] }

// Equal reports whether c holds exactly the bytes b.
func (c ConnectionID) Equal(b []byte) bool {
	return int(c.len) == len(b) && string(c.b[:c.len]) == string(b)
}

// String returns the connection ID in hexadecimal, or "(empty)".
func (c ConnectionID) String() string {
	if c.len == 0 {
		return "(empty)"
	}
	return hex.EncodeToString(c.b[:c.len])
}

// appendConnectionIDWithLen appends the one-byte length and bytes of c, as
// used by long headers and NEW_CONNECTION_ID frames.
func appendConnectionIDWithLen(b []byte, c ConnectionID) []byte {
	b = append(b, c.len)
	return append(b, c.b[:c.len]...)
}

// StatelessResetTokenLen is the length of a stateless reset token
// (RFC 9000, Section 10.3).
const StatelessResetTokenLen = 16

// A StatelessResetToken is the 16-byte token that ends a stateless reset and
// is bound to a connection ID (RFC 9000, Section 10.3).
type StatelessResetToken [StatelessResetTokenLen]byte
