package quiclb

import "sync"

// The encryption of a connection ID's plaintext block (server ID and
// nonce) in place, draft-ietf-quic-load-balancers, Sections 5.4 and 5.5.
// Nothing here allocates: the AES blocks live in a pooled scratch, since
// a slice of a stack array passed to cipher.Block's methods (an
// interface) would escape to the heap.

// A scratch holds the working memory of one encoding or decoding.
type scratch struct {
	in, out [16]byte
	b       [1 + MaxPlaintext]byte // a connection ID or plaintext block
	h       halves
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch  { return scratchPool.Get().(*scratch) }
func putScratch(s *scratch) { scratchPool.Put(s) }

// encrypt encrypts the plaintext block b (len k.plen) in place; s is its
// working memory, and b may be part of s.b.
func (k *codec) encrypt(b []byte, s *scratch) {
	switch {
	case k.block == nil:
	case k.plen == 16:
		// "When the nonce length and server ID length sum to exactly 16
		// octets, the server MUST use a single-pass encryption
		// algorithm. All connection ID octets except the first form an
		// AES-ECB block." (Section 5.4.1)
		k.block.Encrypt(b, b)
	default:
		k.feistelEncrypt(b, s)
	}
}

// decrypt decrypts the block b (len k.plen) in place. With the four-pass
// algorithm it stops after three passes when the server ID is entirely
// in the left half, unless full is set (Section 5.5.2); the nonce is then
// not recovered.
func (k *codec) decrypt(b []byte, full bool, s *scratch) {
	switch {
	case k.block == nil:
	case k.plen == 16:
		// "they form a ciphertext block. The load balancer decrypts the
		// block using the AES-ECB key" (Section 5.5.1)
		k.block.Decrypt(b, b)
	default:
		k.feistelDecrypt(b, full, s)
	}
}

// halves holds the two halves of a four-pass block; each is at most 10
// bytes ("a number between 3 and 10, inclusive", Section 5.4.2.2).
type halves struct {
	left, right [10]byte
	n           int  // half_len
	odd         bool // plaintext_len is odd
}

// split splits b into left and right halves of half_len bytes: "If
// plaintext_len is odd, right_0 clears its first four bits, and left_0
// clears its last four bits" (Section 5.4.2.3, step 2).
func (h *halves) split(b []byte) {
	h.n = (len(b) + 1) / 2
	h.odd = len(b)%2 == 1
	copy(h.left[:h.n], b[:h.n])
	copy(h.right[:h.n], b[len(b)-h.n:])
	h.clearLeft()
	h.clearRight()
}

// clearLeft clears the last four bits of the left half of an odd block.
func (h *halves) clearLeft() {
	if h.odd {
		h.left[h.n-1] &= 0xf0
	}
}

// clearRight clears the first four bits of the right half of an odd block.
func (h *halves) clearRight() {
	if h.odd {
		h.right[0] &= 0x0f
	}
}

// join writes the halves back into b: "If plaintext_len is odd, the four
// least significant bits of left_2 and four most significant bits of
// right_2, which are all zero, are stripped off before concatenation"
// (Section 5.4.2.3, step 12).
func (h *halves) join(b []byte) {
	copy(b, h.left[:h.n])
	if h.odd {
		b[h.n-1] |= h.right[0]
		copy(b[h.n:], h.right[1:h.n])
		return
	}
	copy(b[h.n:], h.right[:h.n])
}

// round XORs dst (half_len bytes) with the first half_len bytes of
// AES_ECB(key, expand(plaintext_len, pass, src)):
//
//	result = AES_ECB(key, expand(plaintext_len, pass, src))
//	dst = XOR(dst, truncate(result, half_len))
//
// "The expand(length, pass, input_bytes) function concatenates three
// arguments and outputs 16 zero-padded octets": input_bytes, zeros,
// length (the fifteenth octet) and pass (the sixteenth)
// (Section 5.4.2.2).
func (k *codec) round(s *scratch, dst, src *[10]byte, pass byte) {
	h := &s.h
	s.in = [16]byte{}
	copy(s.in[:h.n], src[:h.n])
	s.in[14] = byte(k.plen)
	s.in[15] = pass
	k.block.Encrypt(s.out[:], s.in[:])
	for i := range h.n {
		dst[i] ^= s.out[i]
	}
}

// feistelEncrypt runs the four-pass algorithm of Section 5.4.2.3 on b
// in place.
func (k *codec) feistelEncrypt(b []byte, s *scratch) {
	h := &s.h
	h.split(b)
	k.round(s, &h.right, &h.left, 1) // right_1
	h.clearRight()
	k.round(s, &h.left, &h.right, 2) // left_1
	h.clearLeft()
	k.round(s, &h.right, &h.left, 3) // right_2
	h.clearRight()
	k.round(s, &h.left, &h.right, 4) // left_2
	h.clearLeft()
	h.join(b)
}

// feistelDecrypt inverts feistelEncrypt on b in place (Section 5.5.2).
// Unless full is set it stops after three passes when the server ID is
// entirely in left_0; the bytes after the server ID are then not the
// nonce.
func (k *codec) feistelDecrypt(b []byte, full bool, s *scratch) {
	h := &s.h
	h.split(b)
	k.round(s, &h.left, &h.right, 4) // left_1
	h.clearLeft()
	// The draft's pseudocode clears the first bits of left_1 after this
	// pass; the half just computed is right_1, whose first bits are the
	// ones to clear (see TestFourPassDraftErrata).
	k.round(s, &h.right, &h.left, 3) // right_1
	h.clearRight()
	k.round(s, &h.left, &h.right, 2) // left_0
	h.clearLeft()
	// "As the load balancer has no need for the nonce, it can conclude
	// after 3 passes as long as the server ID is entirely contained in
	// left_0 (i.e., the nonce is at least as large as the server ID). If
	// the server ID is longer, a fourth pass is necessary"
	if full || k.cfg.ServerIDLen > k.cfg.NonceLen {
		k.round(s, &h.right, &h.left, 1) // right_0
		h.clearRight()
	}
	h.join(b)
}
