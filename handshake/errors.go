package handshake

import "errors"

var (
	// ErrPacketTooShort is returned by [Opener.RemoveHeaderProtection] and
	// [Opener.Open] for a packet too short to hold a header protection
	// sample or an authentication tag. RFC 9001, Section 5.4.2: "An
	// endpoint MUST discard packets that are not long enough to contain a
	// complete sample."
	ErrPacketTooShort = errors.New("handshake: packet too short to remove protection")

	// ErrDecryptionFailed is returned by [Opener.Open] when the packet does
	// not authenticate. RFC 9001, Section 5.5: "Failure to unprotect a
	// packet does not necessarily indicate the existence of a protocol
	// error in a peer or an attack"; the packet is discarded, and the
	// failure counts toward the integrity limit of Section 6.6.
	ErrDecryptionFailed = errors.New("handshake: packet decryption failed")

	// ErrUnsupportedCipherSuite is returned for a TLS cipher suite that has
	// no QUIC header protection scheme here. RFC 9001, Section 5.3: "A
	// cipher suite MUST NOT be negotiated unless a header protection scheme
	// is defined for the cipher suite."
	ErrUnsupportedCipherSuite = errors.New("handshake: unsupported cipher suite")

	// ErrUnsupportedVersion is returned for a QUIC version other than
	// version 1 and version 2, whose key schedule this package does not
	// know.
	ErrUnsupportedVersion = errors.New("handshake: unsupported QUIC version")
)

var errSecretLen = errors.New("handshake: traffic secret length does not match the cipher suite's hash")
