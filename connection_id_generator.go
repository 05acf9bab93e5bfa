package quic

import (
	"crypto/rand"
	"fmt"

	"github.com/quicstack/quic/wire"
)

// A ConnectionID is a QUIC connection ID of 0 to 20 bytes (RFC 9000,
// Section 5.1). It is a comparable value type; build one with
// wire.NewConnectionID.
type ConnectionID = wire.ConnectionID

// A ConnectionIDGenerator makes the connection IDs a Transport's connections
// issue: the Source Connection ID of the handshake, the one in a server's
// preferred_address, and those sent in NEW_CONNECTION_ID frames
// (RFC 9000, Section 5.1.1).
//
// Plug one in to put routing information into connection IDs, for example
// the server ID a QUIC-aware load balancer reads
// (draft-ietf-quic-load-balancers). Whatever the scheme, "Connection IDs
// MUST NOT contain any information that can be used by an external observer
// (that is, one that does not cooperate with the issuer) to correlate them
// with other connection IDs for the same connection" (RFC 9000,
// Section 5.1): encrypt or randomize everything but what the load balancer
// needs.
//
// A generator is shared by all connections of a Transport, so its methods
// may be called from many goroutines at once. A connection never issues the
// same ID twice and the Transport refuses IDs already routed to another
// connection; the connection then asks the generator again, a few times,
// before failing with an INTERNAL_ERROR.
type ConnectionIDGenerator interface {
	// GenerateConnectionID returns a new connection ID of ConnectionIDLen()
	// bytes. An error closes the connection that asked for it.
	GenerateConnectionID() (ConnectionID, error)
	// ConnectionIDLen is the length of every ID it generates (0 to 20);
	// a Transport needs it to parse short headers, whose Destination
	// Connection ID has no length field (RFC 9000, Section 17.3). It
	// must never change.
	ConnectionIDLen() int
}

// DefaultConnectionIDLen is the length of the connection IDs a
// RandomConnectionIDGenerator's zero value makes, and of those a Transport
// issues when it is given no generator: 8 bytes, 64 random bits.
const DefaultConnectionIDLen = 8

// A RandomConnectionIDGenerator is a ConnectionIDGenerator that fills
// connection IDs with bytes from crypto/rand. Its zero value makes IDs of
// DefaultConnectionIDLen (8) bytes; NewRandomConnectionIDGenerator chooses
// another length. It is safe for concurrent use and does not allocate.
type RandomConnectionIDGenerator struct {
	n   uint8 // length when set
	set bool  // n was chosen; otherwise DefaultConnectionIDLen
}

// NewRandomConnectionIDGenerator returns a generator of n-byte random
// connection IDs. It panics unless 0 <= n <= 20.
//
// n = 0 makes zero-length connection IDs, which suit a client that does not
// share its UDP socket: "An endpoint MUST NOT use the same IP address and
// port for multiple concurrent connections with zero-length connection
// IDs" (RFC 9000, Section 5.1), and an endpoint that uses them cannot give
// its peer new IDs, so it cannot be reached by a new ID after the peer
// migrates. At least 8 bytes are advisable otherwise, so that IDs are hard
// to guess.
func NewRandomConnectionIDGenerator(n int) *RandomConnectionIDGenerator {
	if n < 0 || n > wire.MaxConnectionIDLen {
		panic(fmt.Sprintf("quic: connection ID length %d not in 0..20", n))
	}
	return &RandomConnectionIDGenerator{n: uint8(n), set: true}
}

// ConnectionIDLen returns the length of the IDs g generates.
func (g *RandomConnectionIDGenerator) ConnectionIDLen() int {
	if !g.set {
		return DefaultConnectionIDLen
	}
	return int(g.n)
}

// GenerateConnectionID returns ConnectionIDLen() random bytes. It never
// fails: crypto/rand.Read does not return errors.
func (g *RandomConnectionIDGenerator) GenerateConnectionID() (ConnectionID, error) {
	var b [wire.MaxConnectionIDLen]byte
	n := g.ConnectionIDLen()
	if n > 0 {
		rand.Read(b[:n])
	}
	return wire.NewConnectionID(b[:n]), nil
}
