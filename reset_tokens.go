package quic

import (
	"bytes"
	"crypto/rand"
	"errors"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/quicstack/quic/handshake"
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
	// A reset reaches whichever socket the peer sends to: every
	// Transport of the connection knows the tokens.
	c.t.ep.resetTokens.update(c, c.resetTokens, cur)
	for _, t := range c.extra {
		t.ep.resetTokens.update(c, c.resetTokens, cur)
	}
	c.resetTokens = append(c.resetTokens[:0], cur...)
}

// forgetResetTokens removes the tokens c registered from its Transports.
func (c *Conn) forgetResetTokens() {
	c.t.ep.resetTokens.update(c, c.resetTokens, nil)
	for _, t := range c.extra {
		t.ep.resetTokens.update(c, c.resetTokens, nil)
	}
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

// The stateless reset key. A connection's reset tokens are derived from
// the key of the Transport that made it (HMAC of the connection ID, RFC
// 9000, Section 10.3.2), and any socket the connection's IDs reach may
// have to send the reset: a preferred-address Transport
// (Listener.SetPreferredAddress), or the one a client migrated to
// (Conn.Migrate). "A single static key can be used across all connections
// to the same endpoint" (Section 10.3.2): such a Transport shares the key
// of the connection's home, unless it has a key of its own configured or
// already in use, which must then be the same key.
//
// Sharing a key has a cost the RFC points out: "A denial-of-service
// attack is possible if ... an attacker can cause a packet to be routed
// to an instance that has no state but the same static key" (Sections
// 10.3.2 and 21.11), which would answer it with the connection's token.
// Transports sharing a key are a group, and a Transport sends no reset for
// a connection ID another member routes.

// resetKey is the stateless reset key of a group of Transports.
type resetKey struct {
	resetter *handshake.StatelessResetter
	key      []byte // as configured (Transport.StatelessResetKey), or nil for a random one
	used     atomic.Bool
	mu       sync.Mutex
	members  []weak.Pointer[Transport]
}

// newResetKey makes the key of t: key, or a random one if key is empty.
func newResetKey(t *Transport, key []byte) (*resetKey, error) {
	k := &resetKey{}
	if len(key) > 0 {
		k.key = bytes.Clone(key)
	} else {
		key = make([]byte, 32)
		rand.Read(key)
	}
	r, err := handshake.NewStatelessResetter(key)
	if err != nil {
		return nil, err
	}
	k.resetter = r
	k.members = []weak.Pointer[Transport]{weak.Make(t)}
	return k, nil
}

// statelessResetter returns the resetter of t's key, which is then in
// use: from now on it cannot give way to another key (shareResetKey).
func (t *Transport) statelessResetter() *handshake.StatelessResetter {
	t.resetMu.Lock()
	k := t.resetKey
	k.used.Store(true)
	t.resetMu.Unlock()
	return k.resetter
}

// errResetKeyMismatch is returned when a Transport that would carry
// connections of another one has a different stateless reset key in use.
var errResetKeyMismatch = errors.New("quic: the Transport uses another stateless reset key than the connection's Transport (set the same StatelessResetKey on both)")

// shareResetKey makes t, which is to carry connections of home, use
// home's stateless reset key, and join its group. It fails if t has
// another key configured or in use.
func (t *Transport) shareResetKey(home *Transport) error {
	if t == home {
		return nil
	}
	home.resetMu.Lock()
	hk := home.resetKey
	home.resetMu.Unlock()
	t.resetMu.Lock()
	defer t.resetMu.Unlock()
	tk := t.resetKey
	if tk == hk {
		return nil
	}
	if tk.key != nil || tk.used.Load() {
		if tk.key == nil || hk.key == nil || !bytes.Equal(tk.key, hk.key) {
			return errResetKeyMismatch
		}
	}
	t.resetKey = hk
	hk.mu.Lock()
	live := hk.members[:0]
	for _, m := range hk.members {
		if m.Value() != nil {
			live = append(live, m)
		}
	}
	hk.members = append(live, weak.Make(t))
	hk.mu.Unlock()
	return nil
}

// routedElsewhere reports whether another Transport sharing t's key
// routes cid: t must not reveal its stateless reset token.
func (t *Transport) routedElsewhere(cid wire.ConnectionID) bool {
	t.resetMu.Lock()
	k := t.resetKey
	t.resetMu.Unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, m := range k.members {
		if o := m.Value(); o != nil && o != t {
			if r := o.ep.routes.get(cid); r.c != nil || r.closed != nil {
				return true
			}
		}
	}
	return false
}
