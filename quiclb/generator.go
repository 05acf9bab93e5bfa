package quiclb

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/quicstack/quic/wire"
)

// A Generator makes the QUIC-LB connection IDs of one server. It
// implements quic.ConnectionIDGenerator: set it as a Transport's
// ConnectionIDGenerator. It is safe for concurrent use, and generating a
// connection ID allocates nothing.
//
// With a key, nonces are a counter that starts at a random value, as the
// draft recommends: "If servers simply increment the nonce by one with
// each generated connection ID, then it is safe to use the existing keys
// until any server's nonce counter exhausts the allocated space and rolls
// over. To maximize entropy, servers SHOULD start with a random nonce
// value" (draft-ietf-quic-load-balancers, Section 9.6). Once every nonce
// has been used (2^32 connection IDs with the minimum 4-byte nonce) the
// Generator issues unroutable connection IDs (config rotation 0b111), since
// a server "MUST NOT reuse a nonce until it switches to a configuration
// with new keys"; Exhausted reports it, and SetConfig moves to a new
// configuration. Without a key, nonces are random bytes, since "the server
// MUST fill the Nonce field with bytes that have no observable
// relationship to the field in previously issued connection IDs"
// (Section 5.4).
type Generator struct {
	st  atomic.Pointer[genState]
	len int // connection ID length; never changes
}

// genState is one configuration and server ID of a Generator.
type genState struct {
	k        *codec
	serverID [MaxPlaintext]byte
	// next counts the nonces issued; nonce i is start+i modulo 2^(8*m),
	// m = min(NonceLen, 8), in the last m bytes of the nonce, after the
	// random prefix.
	next   atomic.Uint64
	start  uint64
	limit  uint64 // nonces available: 2^(8*m), or 2^64-1 for m = 8
	prefix [MaxPlaintext]byte
}

// NewGenerator returns a Generator of connection IDs of configuration c
// that carry serverID (c.ServerIDLen bytes).
func NewGenerator(c Config, serverID []byte) (*Generator, error) {
	st, err := newGenState(c, serverID)
	if err != nil {
		return nil, err
	}
	g := &Generator{len: c.Len()}
	g.st.Store(st)
	return g, nil
}

func newGenState(c Config, serverID []byte) (*genState, error) {
	k, err := newCodec(c)
	if err != nil {
		return nil, err
	}
	if len(serverID) != c.ServerIDLen {
		return nil, fmt.Errorf("quiclb: server ID of %d bytes, the configuration has %d", len(serverID), c.ServerIDLen)
	}
	st := &genState{k: k}
	copy(st.serverID[:], serverID)
	m := min(c.NonceLen, 8)
	st.limit = ^uint64(0)
	if m < 8 {
		st.limit = 1 << (8 * m)
	}
	var r [8]byte
	rand.Read(r[:])
	st.start = binary.BigEndian.Uint64(r[:])
	rand.Read(st.prefix[:c.NonceLen-m])
	return st, nil
}

// SetConfig makes g generate connection IDs of configuration c with
// serverID from now on: "Servers MUST NOT generate new connection IDs
// using an old configuration after receiving a new one from the
// configuration agent" (Section 3.1). The connection IDs must keep their
// length, which a Transport relies on to parse short headers: c.Len() must
// equal ConnectionIDLen().
func (g *Generator) SetConfig(c Config, serverID []byte) error {
	if c.Len() != g.len {
		return fmt.Errorf("quiclb: new configuration makes %d-byte connection IDs, the generator's are %d bytes", c.Len(), g.len)
	}
	st, err := newGenState(c, serverID)
	if err != nil {
		return err
	}
	g.st.Store(st)
	return nil
}

// Config returns the configuration g currently uses (with a copy of the
// key).
func (g *Generator) Config() Config {
	c := g.st.Load().k.cfg
	c.Key = append([]byte(nil), c.Key...)
	if len(c.Key) == 0 {
		c.Key = nil
	}
	return c
}

// ConnectionIDLen returns the length of the connection IDs g makes:
// 1 + ServerIDLen + NonceLen.
func (g *Generator) ConnectionIDLen() int { return g.len }

// Exhausted reports whether g ran out of nonces for its configuration
// and issues unroutable connection IDs until SetConfig gives it another.
func (g *Generator) Exhausted() bool {
	st := g.st.Load()
	return st.k.block != nil && st.next.Load() >= st.limit
}

// GenerateConnectionID returns a new connection ID. It never fails.
func (g *Generator) GenerateConnectionID() (wire.ConnectionID, error) {
	st := g.st.Load()
	c := &st.k.cfg
	s := getScratch()
	defer putScratch(s)
	b := s.b[:]
	rand.Read(b[:1])
	block := b[1 : 1+st.k.plen]
	copy(block, st.serverID[:c.ServerIDLen])
	nonce := block[c.ServerIDLen:]
	if st.k.block == nil {
		rand.Read(nonce)
	} else {
		i := st.next.Add(1) - 1
		if i >= st.limit {
			// "A server that has exhausted its nonces MUST either switch
			// to a different configuration, or if none exists, use the
			// 4-tuple routing config rotation codepoint." (Section 9.6)
			st.next.Store(st.limit) // no wrap-around of the count
			return Unroutable(g.len), nil
		}
		m := min(c.NonceLen, 8)
		v := s.in[:8]
		binary.BigEndian.PutUint64(v, st.start+i)
		copy(nonce, st.prefix[:c.NonceLen-m])
		copy(nonce[c.NonceLen-m:], v[8-m:])
	}
	b[0] = c.firstOctet(b[0])
	st.k.encrypt(block, s)
	return wire.NewConnectionID(b[:1+st.k.plen]), nil
}

// Unroutable returns a random connection ID of n bytes (1 to 20) with the
// config rotation codepoint 0b111, which no load balancer routes by its
// content (Section 3.2): "These connection IDs MUST self-encode their
// length" and "all bytes but the first SHOULD have no larger of a chance
// of collision as random bytes".
func Unroutable(n int) wire.ConnectionID {
	s := getScratch()
	defer putScratch(s)
	b := s.b[:wire.MaxConnectionIDLen]
	n = min(max(n, 1), len(b))
	rand.Read(b[1:n])
	b[0] = UnroutableConfigID<<5 | byte(n-1)
	return wire.NewConnectionID(b[:n])
}
