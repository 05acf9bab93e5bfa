package handshake

import (
	"crypto/hkdf"
	"hash"
)

// hkdfLabelPrefix is prepended to every label: "The label ... is prefixed
// with the string "tls13 "" (RFC 8446, Section 7.1).
const hkdfLabelPrefix = "tls13 "

// hkdfLabel returns the HkdfLabel structure of RFC 8446, Section 7.1, with
// an empty Context, as RFC 9001, Section 5.1 requires: "All uses of
// HKDF-Expand-Label in QUIC use a zero-length Context."
//
//	struct {
//	    uint16 length = Length;
//	    opaque label<7..255> = "tls13 " + Label;
//	    opaque context<0..255> = Context;
//	} HkdfLabel;
//
// RFC 9001, Section 5.1: "labels ... are encoded as bytes using ASCII
// without quotes or any trailing NUL byte."
func hkdfLabel(length int, label string) []byte {
	n := len(hkdfLabelPrefix) + len(label)
	if length < 0 || length > 0xffff || n > 255 {
		panic("handshake: HKDF label out of range")
	}
	b := make([]byte, 0, 2+1+n+1)
	b = append(b, byte(length>>8), byte(length), byte(n))
	b = append(b, hkdfLabelPrefix...)
	b = append(b, label...)
	return append(b, 0) // zero-length Context
}

// hkdfExpandLabel is HKDF-Expand-Label(secret, label, "", length) of
// RFC 8446, Section 7.1, with the hash function h:
//
//	HKDF-Expand-Label(Secret, Label, Context, Length) =
//	     HKDF-Expand(Secret, HkdfLabel, Length)
//
// It fails only if crypto/hkdf refuses the input, which happens for lengths
// over 255 hash blocks and, in GODEBUG=fips140=only mode, for secrets
// shorter than 112 bits.
func hkdfExpandLabel(h func() hash.Hash, secret []byte, label string, length int) ([]byte, error) {
	return hkdf.Expand(h, secret, string(hkdfLabel(length, label)), length)
}
