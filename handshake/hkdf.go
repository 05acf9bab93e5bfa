package handshake

import (
	"bytes"
	"crypto/fips140"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"encoding"
	"hash"
	"sync"
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

// maxStateLen bounds the marshaled state of a SHA-256 or SHA-384 digest
// (crypto/sha512 writes 4 + 64 + 128 + 8 bytes).
const maxStateLen = 256

// keyedHMAC computes HMAC (RFC 2104) with one key for several messages.
// The padded key blocks are hashed once, as RFC 2104, Section 4 suggests:
// "the intermediate results of the compression function on the B-byte
// blocks (K XOR ipad) and (K XOR opad) can be precomputed only once at the
// time of generation of the key K", and each message then costs one
// compression function call for the inner hash and one for the outer hash
// (when it fits in a block) instead of two each. The digest states are
// kept marshaled (encoding.BinaryAppender), the digest is reused, and
// keyedHMACs are pooled, so that computing HMACs allocates nothing.
type keyedHMAC struct {
	hash           kdfHash
	d              hash.Hash
	inner, outer   []byte // marshaled states after the padded key blocks
	istate, ostate [maxStateLen]byte
	// scratch holds what is written to d: slices of the callers'
	// stack arrays would escape through the hash.Hash interface.
	scratch [maxHashBlockLen + maxHMACInput]byte
	sum     [maxHashLen]byte
}

var keyedHMACPools = [...]sync.Pool{
	kdfSHA256: {New: func() any { return &keyedHMAC{hash: kdfSHA256, d: sha256.New()} }},
	kdfSHA384: {New: func() any { return &keyedHMAC{hash: kdfSHA384, d: sha512.New384()} }},
}

// keyed returns a keyedHMAC of h for key, to be given back with release.
func (h kdfHash) keyed(key []byte) *keyedHMAC {
	k := keyedHMACPools[h].Get().(*keyedHMAC)
	const (
		ipad = 0x36
		opad = 0x5c
	)
	bs := h.blockSize()
	pad := k.scratch[:bs]
	// "If the key is longer than the block size, hash it first" (RFC 2104,
	// Section 2); shorter keys are padded with zeros.
	clear(pad)
	if len(key) > bs {
		var kh [maxHashLen]byte
		h.sum(&kh, key)
		copy(pad, kh[:h.size()])
		clear(kh[:])
	} else {
		copy(pad, key)
	}
	for i := range pad {
		pad[i] ^= ipad
	}
	k.d.Reset()
	k.d.Write(pad)
	k.inner = k.state(k.istate[:0])
	for i := range pad {
		pad[i] ^= ipad ^ opad
	}
	k.d.Reset()
	k.d.Write(pad)
	k.outer = k.state(k.ostate[:0])
	clear(pad)
	return k
}

// state appends the digest's marshaled state to b.
func (k *keyedHMAC) state(b []byte) []byte {
	b, err := k.d.(encoding.BinaryAppender).AppendBinary(b)
	if err != nil {
		panic("handshake: " + err.Error()) // unreachable: SHA-2 digests marshal
	}
	return b
}

// restore sets the digest to a state from state.
func (k *keyedHMAC) restore(state []byte) {
	if err := k.d.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		panic("handshake: " + err.Error()) // unreachable: the state came from state
	}
}

// mac computes HMAC(key, msg) into k.sum, where msg is k.scratch[:n].
func (k *keyedHMAC) mac(n int) []byte {
	size := k.hash.size()
	k.restore(k.inner)
	k.d.Write(k.scratch[:n])
	inner := k.d.Sum(k.sum[:0])
	k.restore(k.outer)
	k.d.Write(inner)
	return k.d.Sum(k.sum[:0])[:size]
}

// release clears k's key material and gives it back to the pool.
func (k *keyedHMAC) release() {
	clear(k.istate[:])
	clear(k.ostate[:])
	clear(k.scratch[:])
	clear(k.sum[:])
	k.d.Reset()
	k.inner, k.outer = nil, nil
	keyedHMACPools[k.hash].Put(k)
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
	k := h.keyed(salt)
	defer k.release()
	copy(out[:], k.mac(copy(k.scratch[:], ikm)))
	return nil
}

// A labelOut asks hkdfExpandLabels for HKDF-Expand-Label(secret, label,
// "", len(dst)) in dst.
type labelOut struct {
	dst   []byte
	label string
}

// hkdfExpandLabels fills the dst of each out with HKDF-Expand-Label of its
// label from secret (see hkdfExpandLabel), hashing the secret's padded
// key blocks once for all (keyedHMAC).
func (h kdfHash) hkdfExpandLabels(secret []byte, outs ...labelOut) error {
	if fips140.Enabled() {
		for _, o := range outs {
			if err := h.hkdfExpandLabel(o.dst, secret, o.label); err != nil {
				return err
			}
		}
		return nil
	}
	for _, o := range outs {
		if len(o.dst) > 255*h.size() {
			return errHKDFLength
		}
	}
	k := h.keyed(secret)
	defer k.release()
	for _, o := range outs {
		k.expandLabel(o.dst, o.label)
	}
	return nil
}

// expandLabel fills dst with HKDF-Expand-Label(key, label, "", len(dst)),
// at most 255 hash outputs.
func (k *keyedHMAC) expandLabel(dst []byte, label string) {
	n := k.hash.size()
	var ib [maxInfoLen]byte
	info := appendHKDFLabel(ib[:0], len(dst), label)
	var prev []byte // T(i-1), in k.sum
	for i := 1; len(dst) > 0; i++ {
		m := copy(k.scratch[:], prev)
		m += copy(k.scratch[m:], info)
		k.scratch[m] = byte(i)
		t := k.mac(m + 1)
		dst = dst[copy(dst, t):]
		prev = t[:n]
	}
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
	if len(dst) > 255*h.size() {
		return errHKDFLength
	}
	k := h.keyed(secret)
	defer k.release()
	k.expandLabel(dst, label)
	return nil
}
