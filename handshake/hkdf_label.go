package handshake

import "errors"

// hkdfLabelPrefix is prepended to every label: "The label ... is prefixed
// with the string "tls13 "" (RFC 8446, Section 7.1).
const hkdfLabelPrefix = "tls13 "

var (
	errHKDFLength = errors.New("handshake: HKDF output too long")
	errHKDFInput  = errors.New("handshake: HKDF input too long")
)

// appendHKDFLabel appends the HkdfLabel structure of RFC 8446, Section 7.1
// to b, with an empty Context, as RFC 9001, Section 5.1 requires: "All uses
// of HKDF-Expand-Label in QUIC use a zero-length Context."
//
//	struct {
//	    uint16 length = Length;
//	    opaque label<7..255> = "tls13 " + Label;
//	    opaque context<0..255> = Context;
//	} HkdfLabel;
//
// RFC 9001, Section 5.1: "labels ... are encoded as bytes using ASCII
// without quotes or any trailing NUL byte." The result is at most
// maxInfoLen bytes long.
func appendHKDFLabel(b []byte, length int, label string) []byte {
	n := len(hkdfLabelPrefix) + len(label)
	if length < 0 || length > 0xffff || n > 255 {
		panic("handshake: HKDF label out of range")
	}
	b = append(b, byte(length>>8), byte(length), byte(n))
	b = append(b, hkdfLabelPrefix...)
	b = append(b, label...)
	return append(b, 0) // zero-length Context
}

// expandLabel returns HKDF-Expand-Label(secret, label, "", length) with
// the hash function h, in a new slice: for secrets, which are kept.
// Keys that are used once and dropped are better derived into buffers of
// the caller with [kdfHash.hkdfExpandLabel]. It fails only if HKDF-Expand
// refuses the input (see there).
func expandLabel(h kdfHash, secret []byte, label string, length int) ([]byte, error) {
	if length < 0 {
		return nil, errHKDFLength
	}
	b := make([]byte, length)
	if err := h.hkdfExpandLabel(b, secret, label); err != nil {
		return nil, err
	}
	return b, nil
}
