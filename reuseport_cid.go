package quic

import (
	"errors"
	"sync/atomic"

	"github.com/quicstack/quic/wire"
)

// reusePortIDGenerator makes the connection IDs of a process in a
// ReusePortGroup: those of the inner generator (QUIC-LB's, or random)
// followed by one byte, the group index of one of the process's sockets,
// which the group's BPF program steers the ID's packets to. The sockets
// take turns, so that the connections spread over the process's read
// goroutines. QUIC-LB lets a server append bytes "for its own use"
// (draft-ietf-quic-load-balancers, Section 5.4): load balancers read
// only the bytes before. The byte tells an observer which process (not
// which connection) an ID belongs to, as a plaintext server ID does:
// classic BPF cannot decrypt, so it cannot be hidden (Section 7.2
// discusses the same trade-off).
type reusePortIDGenerator struct {
	inner   ConnectionIDGenerator
	sockets []byte // group indices of the process's sockets
	next    atomic.Uint32
}

func newReusePortIDGenerator(inner ConnectionIDGenerator, sockets []byte) (*reusePortIDGenerator, error) {
	if inner == nil {
		inner = NewRandomConnectionIDGenerator(DefaultConnectionIDLen)
	}
	if n := inner.ConnectionIDLen(); n < 4 || n >= wire.MaxConnectionIDLen {
		return nil, errors.New("quic: a reuseport group needs connection IDs of 4 to 19 bytes before its socket byte")
	}
	return &reusePortIDGenerator{inner: inner, sockets: sockets}, nil
}

// ConnectionIDLen is the inner generator's length plus one.
func (g *reusePortIDGenerator) ConnectionIDLen() int { return g.inner.ConnectionIDLen() + 1 }

// GenerateConnectionID returns an ID of the inner generator with a socket
// index appended.
func (g *reusePortIDGenerator) GenerateConnectionID() (ConnectionID, error) {
	cid, err := g.inner.GenerateConnectionID()
	if err != nil {
		return ConnectionID{}, err
	}
	var b [wire.MaxConnectionIDLen]byte
	n := copy(b[:], cid.Bytes())
	b[n] = g.sockets[int(g.next.Add(1))%len(g.sockets)]
	return wire.NewConnectionID(b[:n+1]), nil
}
