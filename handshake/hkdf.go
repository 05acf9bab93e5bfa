package handshake

import (
	"bytes"
	"crypto/fips140"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
)

// kdfHash is a hash function of QUIC's key schedule: SHA-256 for Initial
// keys (RFC 9001, Section 5.2) and the hash of the negotiated cipher suite
// otherwise (Section 5.1), which is SHA-256 or SHA-384 for the TLS 1.3
// suites QUIC uses.
//
// HKDF here (RFC 5869) is computed with sha256.Sum256 and sha512.Sum384
// over buffers on the stack, so that deriving keys allocates nothing:
// crypto/hkdf, through crypto/hmac, allocates two hash states and a few
// buffers per call, and a handshake derives keys some forty times. In
// FIPS 140-3 mode (crypto/fips140.Enabled) the key schedule goes through
// crypto/hkdf instead, so that the module's HMAC and its checks (such as
// the minimum key length of GODEBUG=fips140=only) apply unchanged.
type kdfHash uint8

const (
	kdfSHA256 kdfHash = iota
	kdfSHA384
)

// Bounds of the stack buffers: the largest hash output and block, the
// longest HkdfLabel (2 + 1 + 255 + 1 bytes, see appendHKDFLabel), and the
// longest HMAC input, that of HKDF-Expand: the previous output block, the
// HkdfLabel and the counter.
const (
	maxHashLen      = sha512.Size384
	maxHashBlockLen = sha512.BlockSize
	maxInfoLen      = 2 + 1 + 255 + 1
	maxHMACInput    = maxHashLen + maxInfoLen + 1
)

// size returns the length of the hash output in bytes.
func (h kdfHash) size() int {
	if h == kdfSHA384 {
		return sha512.Size384
	}
	return sha256.Size
}

// blockSize returns the block size of the hash in bytes, the length HMAC
// pads keys to.
func (h kdfHash) blockSize() int {
	if h == kdfSHA384 {
		return sha512.BlockSize
	}
	return sha256.BlockSize
}

// new returns a hash.Hash, for crypto/hkdf.
func (h kdfHash) new() hash.Hash {
	if h == kdfSHA384 {
		return sha512.New384()
	}
	return sha256.New()
}

// sum writes the hash of data to the first size() bytes of out.
func (h kdfHash) sum(out *[maxHashLen]byte, data []byte) {
	if h == kdfSHA384 {
		s := sha512.Sum384(data)
		copy(out[:], s[:])
		return
	}
	s := sha256.Sum256(data)
	copy(out[:], s[:])
}

// hmac writes HMAC(key, a || b) (RFC 2104) to the first size() bytes of
// out. a and b together must not exceed maxHMACInput bytes.
func (h kdfHash) hmac(out *[maxHashLen]byte, key, a, b []byte) {
	const (
		ipad = 0x36
		opad = 0x5c
	)
	var buf [maxHashBlockLen + maxHMACInput]byte
	bs, n := h.blockSize(), h.size()
	// "If the key is longer than the block size, hash it first" (RFC 2104,
	// Section 2); shorter keys are padded with zeros.
	var k [maxHashBlockLen]byte
	if len(key) > bs {
		var kh [maxHashLen]byte
		h.sum(&kh, key)
		copy(k[:], kh[:n])
		clear(kh[:])
	} else {
		copy(k[:], key)
	}
	// inner = H((K ^ ipad) || text)
	for i := range bs {
		buf[i] = k[i] ^ ipad
	}
	m := bs + copy(buf[bs:], a)
	m += copy(buf[m:], b)
	if len(a)+len(b) > m-bs {
		panic("handshake: HMAC input too long")
	}
	h.sum(out, buf[:m])
	// outer = H((K ^ opad) || inner)
	for i := range bs {
		buf[i] = k[i] ^ opad
	}
	copy(buf[bs:], out[:n])
	h.sum(out, buf[:bs+n])
	clear(k[:])
	clear(buf[:])
}

// hkdfExtract writes HKDF-Extract(salt, ikm) = HMAC(salt, ikm) (RFC 5869,
// Section 2.2) to the first size() bytes of out.
func (h kdfHash) hkdfExtract(out *[maxHashLen]byte, ikm, salt []byte) error {
	if fips140.Enabled() {
		// Copies, so that the inputs do not escape: callers keep
		// secrets on their stacks.
		prk, err := hkdf.Extract(h.new, bytes.Clone(ikm), bytes.Clone(salt))
		if err != nil {
			return err
		}
		copy(out[:], prk)
		return nil
	}
	if len(ikm) > maxHMACInput {
		return errHKDFInput
	}
	h.hmac(out, salt, ikm, nil)
	return nil
}

// hkdfExpandLabel fills dst with HKDF-Expand-Label(secret, label, "",
// len(dst)) of RFC 8446, Section 7.1:
//
//	HKDF-Expand-Label(Secret, Label, Context, Length) =
//	     HKDF-Expand(Secret, HkdfLabel, Length)
//
// with HKDF-Expand of RFC 5869, Section 2.3:
//
//	T(0) = empty string
//	T(i) = HMAC-Hash(PRK, T(i-1) | info | i)
//	OKM = first L octets of T(1) | T(2) | ...
//
// It fails only for lengths over 255 hash outputs and, in
// GODEBUG=fips140=only mode, for secrets shorter than 112 bits.
func (h kdfHash) hkdfExpandLabel(dst, secret []byte, label string) error {
	var ib [maxInfoLen + 1]byte
	info := appendHKDFLabel(ib[:0], len(dst), label)
	if fips140.Enabled() {
		okm, err := hkdf.Expand(h.new, bytes.Clone(secret), string(info), len(dst))
		if err != nil {
			return err
		}
		copy(dst, okm)
		return nil
	}
	n := h.size()
	if len(dst) > 255*n {
		return errHKDFLength
	}
	var t [maxHashLen]byte
	prev := t[:0]
	for i := 1; len(dst) > 0; i++ {
		in := append(info, byte(i))
		h.hmac(&t, secret, prev, in)
		dst = dst[copy(dst, t[:n]):]
		prev = t[:n]
	}
	clear(t[:])
	return nil
}
