package handshake

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"

	"golang.org/x/crypto/chacha20"
)

// sampleLen is the number of ciphertext bytes header protection samples:
// "The cipher suites defined in [TLS13] ... have 16-byte expansions and
// 16-byte header protection samples." RFC 9001, Section 5.4.2
const sampleLen = 16

// sampleOffset is where the sample starts relative to the Packet Number
// field: "The sample of ciphertext is taken starting from an offset of 4
// bytes after the start of the Packet Number field." RFC 9001, Section 5.4.2
const sampleOffset = 4

// headerProtector computes header protection masks (RFC 9001, Section 5.4).
// It holds a scratch area, so one value must not be used by two goroutines
// at once; copies of a headerProtector are independent.
type headerProtector struct {
	// block is AES-ECB with the "quic hp" key for the AES suites
	// (RFC 9001, Section 5.4.3); nil for ChaCha20.
	block cipher.Block
	// chachaKey is the "quic hp" key for ChaCha20 (RFC 9001, Section 5.4.4).
	chachaKey [32]byte
	// out is scratch for the mask; the first 5 bytes are used.
	out [16]byte
}

func newHeaderProtector(s *suiteParams, key []byte) (headerProtector, error) {
	var h headerProtector
	if s.chacha {
		copy(h.chachaKey[:], key)
		return h, nil
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return h, err
	}
	h.block = b
	return h, nil
}

// mask computes the 5-byte header protection mask for the 16-byte sample
// and returns it (valid until the next call). sample must be at least
// sampleLen bytes long.
func (h *headerProtector) mask(sample []byte) []byte {
	sample = sample[:sampleLen]
	if h.block != nil {
		// "header_protection(hp_key, sample):
		//    mask = AES-ECB(hp_key, sample)" RFC 9001, Section 5.4.3
		h.block.Encrypt(h.out[:], sample)
		return h.out[:5]
	}
	// "header_protection(hp_key, sample):
	//    counter = sample[0..3]
	//    nonce = sample[4..15]
	//    mask = ChaCha20(hp_key, counter, nonce, {0,0,0,0,0})"
	// RFC 9001, Section 5.4.4; the counter is little-endian.
	c, err := chacha20.NewUnauthenticatedCipher(h.chachaKey[:], sample[4:16])
	if err != nil {
		panic("handshake: " + err.Error()) // unreachable: key and nonce sizes are fixed
	}
	c.SetCounter(binary.LittleEndian.Uint32(sample[:4]))
	m := h.out[:5]
	clear(m)
	c.XORKeyStream(m, m)
	return m
}

// firstByteMask returns the bits of the first byte that header protection
// covers: "The four least significant bits of the first byte are protected
// for packets with long headers; the five least significant bits of the
// first byte are protected for packets with short headers." RFC 9001,
// Section 5.4
func firstByteMask(first byte) byte {
	if first&0x80 != 0 { // Header Form bit: long header
		return 0x0f
	}
	return 0x1f
}
