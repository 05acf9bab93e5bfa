package handshake

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"

	"golang.org/x/crypto/chacha20poly1305"
)

// suiteParams describes a TLS 1.3 cipher suite as QUIC packet protection
// uses it (RFC 9001, Sections 5.1, 5.3 and 5.4).
type suiteParams struct {
	id uint16
	// hash is the hash function of the suite's HKDF; traffic secrets are
	// hash.size() bytes long.
	hash kdfHash
	// keyLen is the length of both the AEAD key and the header protection
	// key: "the Length provided to HKDF-Expand-Label along with these
	// labels is determined by the size of keys in the AEAD or header
	// protection algorithm" (RFC 9001, Section 5.1).
	keyLen int
	// chacha selects ChaCha20-Poly1305 packet protection and ChaCha20
	// header protection (RFC 9001, Section 5.4.4) instead of AES-GCM and
	// AES-ECB (Section 5.4.3).
	chacha bool
}

// newAEAD builds the suite's AEAD from a key of keyLen bytes. It calls the
// constructors directly rather than through a function value, so that the
// key, which the caller keeps on its stack, does not escape to the heap.
func (s *suiteParams) newAEAD(key []byte) (cipher.AEAD, error) {
	if s.chacha {
		return chacha20poly1305.New(key)
	}
	return newAESGCM(key)
}

func newAESGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

var (
	suiteAES128GCM = suiteParams{
		id:     tls.TLS_AES_128_GCM_SHA256,
		hash:   kdfSHA256,
		keyLen: 16,
	}
	suiteAES256GCM = suiteParams{
		id:     tls.TLS_AES_256_GCM_SHA384,
		hash:   kdfSHA384,
		keyLen: 32,
	}
	suiteChaCha20Poly1305 = suiteParams{
		id:     tls.TLS_CHACHA20_POLY1305_SHA256,
		hash:   kdfSHA256,
		keyLen: chacha20poly1305.KeySize,
		chacha: true,
	}
)

// suiteFor returns the parameters of the TLS cipher suite id, or nil if
// QUIC packet protection is not defined for it here. TLS_AES_128_CCM_SHA256
// is left out (crypto/tls never negotiates it), and so is
// TLS_AES_128_CCM_8_SHA256, which RFC 9001, Section 5.3 excludes: "QUIC can
// use any of the cipher suites defined in [TLS13] with the exception of
// TLS_AES_128_CCM_8_SHA256."
func suiteFor(id uint16) *suiteParams {
	switch id {
	case tls.TLS_AES_128_GCM_SHA256:
		return &suiteAES128GCM
	case tls.TLS_AES_256_GCM_SHA384:
		return &suiteAES256GCM
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return &suiteChaCha20Poly1305
	}
	return nil
}
