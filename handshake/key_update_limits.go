package handshake

import (
	"crypto/tls"

	"github.com/quicstack/quic/wire"
)

// Key update arithmetic (RFC 9001, Sections 6.1 and 6.6): the next phase's
// secret and the confidentiality and integrity limits of each AEAD. The
// key-update state machine is one_rtt_key_update.go.

// NextSecret returns the traffic secret of the next key phase for the 1-RTT
// secret of the cipher suite suite in QUIC version v (RFC 9001, Section 6.1;
// RFC 9369, Section 3.3.2):
//
//	secret_<n+1> = HKDF-Expand-Label(secret_<n>, "quic ku", "", Hash.length)
//
// with the label "quicv2 ku" in version 2. The corresponding key and IV come
// from the new secret as for any secret, and the header protection key stays
// the same; [Sealer.Next] and [Opener.Next] do both steps. "Keys of packets
// other than the 1-RTT packets are never updated."
//
// NextSecret returns [ErrUnsupportedCipherSuite] or [ErrUnsupportedVersion]
// for a suite or version it does not know, and an error if secret is not as
// long as the suite's hash output.
func NextSecret(suite uint16, v wire.Version, secret []byte) ([]byte, error) {
	s := suiteFor(suite)
	if s == nil {
		return nil, ErrUnsupportedCipherSuite
	}
	vp := paramsFor(v)
	if vp == nil {
		return nil, ErrUnsupportedVersion
	}
	n := s.hash.size()
	if len(secret) != n {
		return nil, errSecretLen
	}
	return expandLabel(s.hash, secret, vp.kuLabel, n)
}

// AEAD usage limits of RFC 9001, Section 6.6, in packets.
//
// "Endpoints MUST count the number of encrypted packets for each set of
// keys. If the total number of encrypted packets with the same key exceeds
// the confidentiality limit for the selected AEAD, the endpoint MUST stop
// using those keys."
//
// "If the total number of received packets that fail authentication within
// the connection, across all keys, exceeds the integrity limit for the
// selected AEAD, the endpoint MUST immediately close the connection with a
// connection error of type AEAD_LIMIT_REACHED and not process any more
// packets."
const (
	// AESGCMConfidentialityLimit is the number of packets that may be
	// encrypted with one AEAD_AES_128_GCM or AEAD_AES_256_GCM key: "the
	// confidentiality limit is 2^23 encrypted packets".
	AESGCMConfidentialityLimit uint64 = 1 << 23

	// AESGCMIntegrityLimit is the number of packets that may fail
	// authentication in a connection using AEAD_AES_128_GCM or
	// AEAD_AES_256_GCM: "the integrity limit is 2^52 invalid packets".
	AESGCMIntegrityLimit uint64 = 1 << 52

	// ChaCha20Poly1305ConfidentialityLimit stands for "no limit": "For
	// AEAD_CHACHA20_POLY1305, the confidentiality limit is greater than the
	// number of possible packets (2^62) and so can be disregarded." Its
	// value, 2^62, is more packets than one key can ever protect, since
	// packet numbers are below 2^62.
	ChaCha20Poly1305ConfidentialityLimit uint64 = 1 << 62

	// ChaCha20Poly1305IntegrityLimit is the number of packets that may fail
	// authentication in a connection using AEAD_CHACHA20_POLY1305: "the
	// integrity limit is 2^36 invalid packets".
	ChaCha20Poly1305IntegrityLimit uint64 = 1 << 36
)

// ConfidentialityLimit returns the confidentiality limit of RFC 9001,
// Section 6.6 for the AEAD of the TLS cipher suite suite: the number of
// packets one key may encrypt. "Endpoints MUST initiate a key update before
// sending more protected packets than the confidentiality limit for the
// selected AEAD permits." It returns 0 for a suite this package does not
// support.
func ConfidentialityLimit(suite uint16) uint64 {
	switch suite {
	case tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384:
		return AESGCMConfidentialityLimit
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return ChaCha20Poly1305ConfidentialityLimit
	}
	return 0
}

// IntegrityLimit returns the integrity limit of RFC 9001, Section 6.6 for
// the AEAD of the TLS cipher suite suite: the number of received packets
// that may fail authentication across all keys of a connection. It returns
// 0 for a suite this package does not support.
func IntegrityLimit(suite uint16) uint64 {
	switch suite {
	case tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384:
		return AESGCMIntegrityLimit
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return ChaCha20Poly1305IntegrityLimit
	}
	return 0
}
