package http3

import (
	"bufio"
	"errors"
	"io"
)

// CapsuleTypeDatagram is the DATAGRAM capsule (RFC 9297, Section 3.5),
// which carries an HTTP Datagram on the request stream instead of in a
// QUIC DATAGRAM frame.
const CapsuleTypeDatagram = 0x00

// DefaultMaxCapsuleSize is the largest capsule value ReadCapsule accepts
// when given a limit of zero.
const DefaultMaxCapsuleSize = 64 << 10

// A Capsule is one unit of the Capsule Protocol (RFC 9297, Section 3.2):
//
//	Capsule {
//	  Capsule Type (i),
//	  Capsule Length (i),
//	  Capsule Value (..),
//	}
type Capsule struct {
	Type  uint64
	Value []byte
}

var (
	// ErrCapsuleTruncated is a capsule cut short by the end of the
	// stream: "If the receive side of a stream carrying capsules is
	// terminated cleanly ... and the last capsule on the stream was
	// truncated, this MUST be treated as if it were a malformed or
	// incomplete message" (RFC 9297, Section 3.3).
	ErrCapsuleTruncated = errors.New("http3: truncated capsule")
	// ErrCapsuleTooLarge is a capsule whose value exceeds the reader's
	// limit.
	ErrCapsuleTooLarge = errors.New("http3: capsule too large")
)

// AppendCapsule appends a capsule of type typ with value to b. typ must
// be below 2^62.
func AppendCapsule(b []byte, typ uint64, value []byte) []byte {
	b = appendVarint(b, typ)
	b = appendVarint(b, uint64(len(value)))
	return append(b, value...)
}

// ParseCapsule parses the capsule at the start of b and returns it (its
// Value aliases b) and its encoded length. It returns ErrCapsuleTruncated
// if b ends inside the capsule and ErrCapsuleTooLarge if the value is
// longer than max (DefaultMaxCapsuleSize if max is 0).
func ParseCapsule(b []byte, max int) (Capsule, int, error) {
	if max <= 0 {
		max = DefaultMaxCapsuleSize
	}
	typ, n1, err := parseVarint(b)
	if err != nil {
		return Capsule{}, 0, ErrCapsuleTruncated
	}
	length, n2, err := parseVarint(b[n1:])
	if err != nil {
		return Capsule{}, 0, ErrCapsuleTruncated
	}
	if length > uint64(max) {
		return Capsule{}, 0, ErrCapsuleTooLarge
	}
	start := n1 + n2
	if uint64(len(b)-start) < length {
		return Capsule{}, 0, ErrCapsuleTruncated
	}
	end := start + int(length)
	return Capsule{Type: typ, Value: b[start:end:end]}, end, nil
}

// ReadCapsule reads the next capsule from r. It returns io.EOF if r ends
// cleanly between capsules, ErrCapsuleTruncated if it ends inside one,
// and ErrCapsuleTooLarge, without reading the value, if the value is
// longer than max (DefaultMaxCapsuleSize if max is 0). The value is a
// new slice.
func ReadCapsule(r *bufio.Reader, max int) (Capsule, error) {
	if max <= 0 {
		max = DefaultMaxCapsuleSize
	}
	typ, err := readVarint(r)
	if err != nil {
		if err == io.ErrUnexpectedEOF {
			err = ErrCapsuleTruncated
		}
		return Capsule{}, err
	}
	length, err := readVarint(r)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = ErrCapsuleTruncated
		}
		return Capsule{}, err
	}
	if length > uint64(max) {
		return Capsule{}, ErrCapsuleTooLarge
	}
	value := make([]byte, length)
	if _, err := io.ReadFull(r, value); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = ErrCapsuleTruncated
		}
		return Capsule{}, err
	}
	return Capsule{Type: typ, Value: value}, nil
}
