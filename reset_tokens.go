package quic

import (
	"sync"

	"github.com/quicstack/quic/wire"
)

// A stateless reset (RFC 9000, Section 10.3) starts with random bytes, not
// a connection ID of ours, so it cannot be routed like other packets:
// "An endpoint detects a potential Stateless Reset using the trailing 16
// bytes of the UDP datagram" (Section 10.3.1). The Transport therefore
// keeps the stateless reset tokens of the peer connection IDs its
// connections used, and hands a short-header datagram that routes nowhere
// to the connection whose token it ends with; the connection then checks
// it as a stateless reset (connState.isStatelessReset) in constant time.

// maxResetTokensPerConn bounds the tokens a connection registers: those of
// the peer IDs it used and has not retired, a few at most.
const maxResetTokensPerConn = 8

// resetTokenMap maps peer stateless reset tokens to connections.
type resetTokenMap struct {
	mu sync.RWMutex
	m  map[wire.StatelessResetToken]*Conn
}

// lookup returns the connection a datagram that routes nowhere may be a
// stateless reset for, or nil.
func (r *resetTokenMap) lookup(d []byte) *Conn {
	if len(d) < minStatelessResetLen {
		return nil
	}
	var tok wire.StatelessResetToken
	copy(tok[:], d[len(d)-len(tok):])
	r.mu.RLock()
	c := r.m[tok]
	r.mu.RUnlock()
	return c
}

// update replaces the tokens c registered (old) with cur.
func (r *resetTokenMap) update(c *Conn, old, cur []wire.StatelessResetToken) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range old {
		if r.m[t] == c {
			delete(r.m, t)
		}
	}
	if len(cur) > 0 && r.m == nil {
		r.m = make(map[wire.StatelessResetToken]*Conn)
	}
	for _, t := range cur {
		r.m[t] = c
	}
}

// minStatelessResetLen is the smallest datagram that can be a stateless
// reset: "Endpoints MUST discard packets that are too small to be valid
// QUIC packets ... an endpoint SHOULD NOT process ... as a Stateless Reset
// [datagrams] smaller than 21 bytes" (RFC 9000, Section 10.3).
const minStatelessResetLen = 21

// syncResetTokens registers the tokens of the peer IDs the connection used
// with the Transport when they changed. It runs on the connection's
// goroutine after each batch of events, and allocates nothing when nothing
// changed.
func (c *Conn) syncResetTokens() {
	var buf [maxResetTokensPerConn]wire.StatelessResetToken
	cur := c.state.peerIDs.usedResetTokens(buf[:0])
	if len(cur) == len(c.resetTokens) {
		same := true
		for i := range cur {
			if cur[i] != c.resetTokens[i] {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	c.t.resetTokens.update(c, c.resetTokens, cur)
	c.resetTokens = append(c.resetTokens[:0], cur...)
}

// usedResetTokens appends the stateless reset tokens of the peer IDs that
// were used and not retired (the ones isStatelessReset checks), at most
// cap(dst) of them.
func (s *peerConnIDs) usedResetTokens(dst []wire.StatelessResetToken) []wire.StatelessResetToken {
	for i := range s.ids {
		if e := &s.ids[i]; e.hasToken && e.used && len(dst) < cap(dst) {
			dst = append(dst, e.token)
		}
	}
	return dst
}
