package handshake

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"time"
)

// EpochKeys derives AES-256-GCM keys that rotate on a schedule from one
// secret: the key of epoch e (the e-th period since the Unix epoch) is
// HKDF-Expand(secret, label || e). Every holder of the secret derives the
// same keys for the same epoch without talking to the others, which is
// what servers of a fleet need to accept each other's session tickets and
// address tokens. Time is always the caller's: nothing here reads the
// clock. EpochKeys is safe for concurrent use and caches the AEADs of the
// last few epochs asked for, so that deriving costs nothing per use.
type EpochKeys struct {
	prk    []byte // HKDF pseudorandom key of the secret
	label  string
	period time.Duration
	cache  [4]atomic.Pointer[epochAEAD] // by epoch mod 4
}

type epochAEAD struct {
	epoch uint64
	aead  cipher.AEAD
}

// NewEpochKeys returns the keys labelled label (one label per purpose:
// tickets, tokens) of secret, rotating every period (at least a second).
// prk must be a pseudorandom key, such as one from hkdf.Extract.
func NewEpochKeys(prk []byte, label string, period time.Duration) (*EpochKeys, error) {
	if len(prk) < 16 {
		return nil, errors.New("handshake: epoch key secret shorter than 16 bytes")
	}
	if period < time.Second {
		return nil, errors.New("handshake: key rotation period shorter than a second")
	}
	return &EpochKeys{prk: append([]byte(nil), prk...), label: label, period: period}, nil
}

// Period returns the rotation period.
func (k *EpochKeys) Period() time.Duration { return k.period }

// Epoch returns the epoch of time t: the number of periods since the Unix
// epoch (0 before it).
func (k *EpochKeys) Epoch(t time.Time) uint64 {
	ns := t.UnixNano()
	if ns < 0 {
		return 0
	}
	return uint64(ns / int64(k.period))
}

// Key returns the 32-byte key of epoch e.
func (k *EpochKeys) Key(e uint64) []byte {
	info := make([]byte, len(k.label)+8)
	copy(info, k.label)
	binary.BigEndian.PutUint64(info[len(k.label):], e)
	key, err := hkdf.Expand(sha256.New, k.prk, string(info), 32)
	if err != nil {
		panic(err) // 32 bytes of SHA-256 HKDF never fail
	}
	return key
}

// AEAD returns the AES-256-GCM AEAD of epoch e.
func (k *EpochKeys) AEAD(e uint64) cipher.AEAD {
	slot := &k.cache[e%uint64(len(k.cache))]
	if c := slot.Load(); c != nil && c.epoch == e {
		return c.aead
	}
	block, err := aes.NewCipher(k.Key(e))
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	slot.Store(&epochAEAD{epoch: e, aead: aead})
	return aead
}
