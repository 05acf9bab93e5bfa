package handshake

import (
	"bytes"
	"crypto/hkdf"
	"crypto/rand"
	"testing"
)

// TestHKDFMatchesCryptoHKDF checks the stack-buffer HKDF against
// crypto/hkdf for both hashes, secrets and salts shorter and longer than
// a hash block (RFC 2104 hashes longer keys first), and outputs of one
// and of several hash blocks (RFC 5869, Section 2.3).
func TestHKDFMatchesCryptoHKDF(t *testing.T) {
	labels := []string{"", "quic key", "client in", string(bytes.Repeat([]byte{'x'}, 249))}
	for _, h := range []kdfHash{kdfSHA256, kdfSHA384} {
		for _, keyLen := range []int{0, 1, 20, h.size(), h.blockSize(), h.blockSize() + 1, 300} {
			key := make([]byte, keyLen)
			rand.Read(key)
			for _, label := range labels {
				for _, n := range []int{0, 1, 12, 16, h.size(), h.size() + 1, 3*h.size() + 5} {
					got, err := expandLabel(h, key, label, n)
					if err != nil {
						t.Fatal(err)
					}
					want, err := hkdf.Expand(h.new, key, string(appendHKDFLabel(nil, n, label)), n)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("hash %d, key %d bytes, label %q, length %d: %x, want %x", h, keyLen, label, n, got, want)
					}
				}
			}
			ikm := make([]byte, 20)
			rand.Read(ikm)
			var prk [maxHashLen]byte
			if err := h.hkdfExtract(&prk, ikm, key); err != nil {
				t.Fatal(err)
			}
			want, err := hkdf.Extract(h.new, ikm, key)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(prk[:h.size()], want) {
				t.Errorf("hash %d, salt %d bytes: Extract = %x, want %x", h, keyLen, prk[:h.size()], want)
			}
		}
	}
}

func TestHKDFLimits(t *testing.T) {
	if _, err := expandLabel(kdfSHA256, make([]byte, 32), "x", 255*32+1); err == nil {
		t.Error("HKDF-Expand of more than 255 blocks did not fail")
	}
	var prk [maxHashLen]byte
	if err := kdfSHA256.hkdfExtract(&prk, make([]byte, maxHMACInput+1), nil); err == nil {
		t.Error("HKDF-Extract of an overlong input did not fail")
	}
}

// TestHKDFExpandLabelAllocs checks that deriving a key into a buffer of
// the caller allocates nothing (keyedHMACs are pooled).
func TestHKDFExpandLabelAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop keyedHMACs")
	}
	secret := make([]byte, 48)
	var key [maxKeyLen]byte
	var prk [maxHashLen]byte
	allocs := testing.AllocsPerRun(100, func() {
		kdfSHA256.hkdfExpandLabel(key[:16], secret[:32], "quic key")
		kdfSHA384.hkdfExpandLabel(key[:32], secret, "quic hp")
		kdfSHA256.hkdfExtract(&prk, secret[:8], secret[:20])
	})
	if allocs != 0 {
		t.Errorf("%v allocations, want 0", allocs)
	}
}
