package handshake

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"hash"
	"sync"

	"github.com/quicstack/quic/wire"
)

// A StatelessResetter derives stateless reset tokens from a static key and a
// connection ID (RFC 9000, Section 10.3): token = the first 16 bytes of
// HMAC-SHA256(key, connection ID). "An endpoint that uses this design MUST
// either use the same connection ID length for all connections or encode
// the length of the connection ID such that it can be recovered without
// state" (Section 10.3.2): the HMAC covers exactly the connection ID's
// bytes, so IDs of different lengths give unrelated tokens.
//
// Any server holding the key can therefore reset a connection whose state it
// lost, for example after a restart or behind a load balancer. The key must
// stay secret: whoever knows it can reset every connection. A
// StatelessResetter is safe for concurrent use and does not allocate per
// token once warm.
type StatelessResetter struct {
	pool sync.Pool // of *resetHMAC
}

type resetHMAC struct {
	mac hash.Hash
	in  [wire.MaxConnectionIDLen]byte
	sum [sha256.Size]byte
}

// NewStatelessResetter returns a StatelessResetter for key, which should
// hold at least 32 bytes of secret randomness.
func NewStatelessResetter(key []byte) (*StatelessResetter, error) {
	if len(key) == 0 {
		return nil, errors.New("handshake: empty stateless reset key")
	}
	k := append([]byte(nil), key...)
	s := &StatelessResetter{}
	s.pool.New = func() any { return &resetHMAC{mac: hmac.New(sha256.New, k)} }
	return s, nil
}

// Token returns the stateless reset token for the connection ID cid.
func (s *StatelessResetter) Token(cid wire.ConnectionID) wire.StatelessResetToken {
	h := s.pool.Get().(*resetHMAC)
	h.mac.Reset()
	n := copy(h.in[:], cid.Bytes())
	h.mac.Write(h.in[:n])
	sum := h.mac.Sum(h.sum[:0])
	var t wire.StatelessResetToken
	copy(t[:], sum)
	s.pool.Put(h)
	return t
}

// MinStatelessResetLen is the shortest datagram an endpoint treats as a
// possible stateless reset: "Endpoints MUST discard packets that are too
// small to be valid QUIC packets. ... the smallest possible short header
// packet ... is 21 bytes" (RFC 9000, Section 10.3).
const MinStatelessResetLen = 21

// IsStatelessReset reports whether datagram ends with token, compared in
// constant time: "an endpoint MUST ... compare the last 16 bytes of the
// datagram with all stateless reset tokens associated with the remote
// address" (RFC 9000, Section 10.3.1), and "When comparing a datagram to
// stateless reset token values, endpoints MUST perform the comparison
// without leaking information about the value of the token" (Section 10.3).
func IsStatelessReset(datagram []byte, token wire.StatelessResetToken) bool {
	if len(datagram) < MinStatelessResetLen {
		return false
	}
	return subtle.ConstantTimeCompare(datagram[len(datagram)-wire.StatelessResetTokenLen:], token[:]) == 1
}
