package quic

import (
	"encoding/binary"
	"sync"
	"time"
)

// A TokenReplayGuard makes the address-validation tokens a server sent in
// NEW_TOKEN frames single-use: "Attackers could replay tokens to use
// servers as amplifiers in DDoS attacks. To protect against such attacks,
// servers MUST ensure that replay of tokens is prevented or limited. ...
// Tokens that are provided in NEW_TOKEN frames (Section 19.7) need to be
// valid for longer but SHOULD NOT be accepted multiple times." (RFC 9000,
// Section 8.1.4) A token refused as used before leaves the client's
// address unvalidated, as if the client had none: the server may send a
// Retry, and sends at most three times what it received until the
// handshake validates the address (Section 8.1).
//
// The Transport asks it for each connection attempt with an authentic,
// unexpired NEW_TOKEN token, on its read loop: implementations must be
// safe for concurrent use and answer quickly. Servers of a fleet that
// share Transport.TokenKey accept each other's tokens; to refuse a token
// used on another server, they need a guard they share (a networked
// store with the same contract). Retry tokens are not asked about: they
// live 10 seconds and bind the client's address, port and connection ID.
type TokenReplayGuard interface {
	// UseToken reports whether the token identified by id, which expires
	// at expires, may validate an address now: true the first time,
	// false if it was used before (or may have been). The guard need not
	// remember a token after it expired. The id is the same on every
	// server sharing the token key.
	UseToken(id [16]byte, expires, now time.Time) bool
}

// DefaultTokenReplayCapacity is the number of tokens the default
// TokenReplayGuard of a Transport remembers.
const DefaultTokenReplayCapacity = 1 << 16

// NewTokenReplayGuard returns the in-process TokenReplayGuard, which
// remembers up to capacity used tokens (at least 1) until they expire, in
// about 30 bytes each, taken as tokens are used. When it is full, it
// forgets the token that expires first and from then on refuses every
// token that expires no later: a busy server refuses its oldest tokens
// rather than accept a replay, and those clients only lose the time a
// validated address saves. A token is known by 64 bits of its ID: two
// tokens of the same 64 bits, once in 2^64/capacity, make the second one
// refused.
func NewTokenReplayGuard(capacity int) TokenReplayGuard {
	return &tokenGuard{capacity: max(capacity, 1)}
}

// tokenGuard is the in-process TokenReplayGuard: the tokens used and not
// expired, in a set and in a heap ordered by expiry, and floor, the
// expiry (Unix nanoseconds) at or below which tokens are refused since
// one of them may have been forgotten.
type tokenGuard struct {
	mu       sync.Mutex
	capacity int
	seen     map[uint64]struct{}
	heap     []tokenUse
	floor    int64
}

type tokenUse struct {
	key     uint64
	expires int64
}

func (g *tokenGuard) UseToken(id [16]byte, expires, now time.Time) bool {
	key, exp, t := binary.LittleEndian.Uint64(id[:8]), expires.UnixNano(), now.UnixNano()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = make(map[uint64]struct{})
	}
	for len(g.heap) > 0 && g.heap[0].expires <= t {
		delete(g.seen, g.pop().key) // expired: Open refuses it now
	}
	if exp <= g.floor {
		return false
	}
	if _, ok := g.seen[key]; ok {
		return false
	}
	if len(g.heap) >= g.capacity {
		if exp <= g.heap[0].expires {
			return false // older than all it remembers: it would be forgotten first
		}
		old := g.pop()
		delete(g.seen, old.key)
		g.floor = max(g.floor, old.expires)
	}
	g.seen[key] = struct{}{}
	g.push(tokenUse{key, exp})
	return true
}

func (g *tokenGuard) push(u tokenUse) {
	g.heap = append(g.heap, u)
	h := g.heap
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].expires <= h[i].expires {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (g *tokenGuard) pop() tokenUse {
	h := g.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].expires < h[m].expires {
			m = l
		}
		if r := l + 1; r < n && h[r].expires < h[m].expires {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	g.heap = h
	return top
}
