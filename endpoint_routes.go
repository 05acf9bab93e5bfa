package quic

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/quicstack/quic/wire"
)

// The endpoint's routing table: connection ID -> connection (RFC 9000,
// Section 5.2), sharded so that the read loop never takes a global lock.
// The endpoint owns it as data (endpoint.routes): it routes a new
// connection's first IDs (newConnID) and applies the issue and retire
// events its connections queue (handleConnIDEvent); closed connections'
// IDs route to their records (closed_conn.go). Its concurrency
// discipline: the shards' locks, one at a time and never across a call;
// the Transport's read loops look IDs up, connection goroutines apply
// their own events.

// handlerShards is the number of independently locked parts of the
// connection-ID table, so that the read loop's lookups and connections
// adding or retiring IDs rarely meet on one lock.
const handlerShards = 64

// packetHandlerMap routes connection IDs to connections. Lookups take one
// shard's read lock and allocate nothing.
type packetHandlerMap struct {
	seed   maphash.Seed
	shards [handlerShards]handlerShard
}

type handlerShard struct {
	mu sync.RWMutex
	m  map[wire.ConnectionID]routeTarget
}

// routeTarget is where a connection ID routes: a connection, or what is
// left of one in the closing or draining state (closed_conn.go).
type routeTarget struct {
	c      *Conn
	closed *closedConn
}

func (h *packetHandlerMap) init() {
	h.seed = maphash.MakeSeed()
	for i := range h.shards {
		h.shards[i].m = make(map[wire.ConnectionID]routeTarget)
	}
}

func (h *packetHandlerMap) shard(cid *wire.ConnectionID) *handlerShard {
	return &h.shards[maphash.Bytes(h.seed, cid.Bytes())%handlerShards]
}

// get returns what cid routes to.
func (h *packetHandlerMap) get(cid wire.ConnectionID) routeTarget {
	s := h.shard(&cid)
	s.mu.RLock()
	r := s.m[cid]
	s.mu.RUnlock()
	return r
}

// add routes cid to c unless it already routes somewhere.
func (h *packetHandlerMap) add(cid wire.ConnectionID, c *Conn) bool {
	s := h.shard(&cid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[cid]; ok {
		return false
	}
	s.m[cid] = routeTarget{c: c}
	return true
}

// remove stops routing cid, if it routes to c.
func (h *packetHandlerMap) remove(cid wire.ConnectionID, c *Conn) {
	s := h.shard(&cid)
	s.mu.Lock()
	if c != nil && s.m[cid].c == c {
		delete(s.m, cid)
	}
	s.mu.Unlock()
}

// hand routes cid to cc instead of c, if it routes to c.
func (h *packetHandlerMap) hand(cid wire.ConnectionID, c *Conn, cc *closedConn) {
	s := h.shard(&cid)
	s.mu.Lock()
	if c != nil && s.m[cid].c == c {
		s.m[cid] = routeTarget{closed: cc}
	}
	s.mu.Unlock()
}

// removeClosed stops routing cid, if it routes to cc.
func (h *packetHandlerMap) removeClosed(cid wire.ConnectionID, cc *closedConn) {
	s := h.shard(&cid)
	s.mu.Lock()
	if cc != nil && s.m[cid].closed == cc {
		delete(s.m, cid)
	}
	s.mu.Unlock()
}

// all returns every connection, once each (not the closed ones).
func (h *packetHandlerMap) all() []*Conn {
	seen := make(map[*Conn]bool)
	var list []*Conn
	for i := range h.shards {
		s := &h.shards[i]
		s.mu.RLock()
		for _, r := range s.m {
			if c := r.c; c != nil && !seen[c] {
				seen[c] = true
				list = append(list, c)
			}
		}
		s.mu.RUnlock()
	}
	return list
}

// routeKind is where endpoint.handle sends a datagram.
type routeKind uint8

const (
	routeNone    routeKind = iota // no connection: endpoint.handleUnrouted decides
	routeInvalid                  // no Destination Connection ID to parse: drop
	routeConn                     // its Destination Connection ID routes to routeResult.c
	routeClosed                   // it routes to a closed connection's record
	routeReset                    // it may be a stateless reset for routeResult.c
)

// routeResult is where a datagram goes.
type routeResult struct {
	kind   routeKind
	c      *Conn
	closed *closedConn
	cid    wire.ConnectionID // the datagram's Destination Connection ID
}

// handle routes datagram d: to the connection its Destination Connection
// ID routes to (RFC 9000, Section 5.2), to what is left of a closed one,
// or, for a short header that routes nowhere, to the connection whose
// peer's stateless reset token it ends with: "An endpoint detects a
// potential Stateless Reset using the trailing 16 bytes of the UDP
// datagram" (RFC 9000, Section 10.3.1); the connection checks it. Anything
// else is for handleUnrouted. It reads no clock, takes one shard's read
// lock (and the reset tokens' for an unrouted short header) and allocates
// nothing; it is safe for concurrent use.
func (e *endpoint) handle(d []byte) routeResult {
	if len(d) == 0 {
		return routeResult{kind: routeInvalid}
	}
	cid, err := wire.ParseDestConnectionID(d, e.cidGen.ConnectionIDLen())
	if err != nil {
		return routeResult{kind: routeInvalid}
	}
	if r := e.routes.get(cid); r.c != nil {
		return routeResult{kind: routeConn, c: r.c, cid: cid}
	} else if r.closed != nil {
		return routeResult{kind: routeClosed, closed: r.closed, cid: cid}
	}
	if !wire.IsLongHeader(d[0]) {
		if c := e.resetTokens.lookup(d); c != nil {
			return routeResult{kind: routeReset, c: c, cid: cid}
		}
	}
	return routeResult{cid: cid}
}

// newConnID generates the connection ID of sequence number 0 of a
// connection about to start (or 1, for a preferred address) and routes it
// to c, generating again while an ID routes elsewhere already, as
// quinn-proto's Endpoint::new_cid does. Zero-length IDs are not routed:
// such an endpoint routes by address.
func (e *endpoint) newConnID(c *Conn) (ConnectionID, error) {
	n := e.cidGen.ConnectionIDLen()
	for range connIDGenerateAttempts {
		cid, err := e.cidGen.GenerateConnectionID()
		if err != nil {
			return ConnectionID{}, fmt.Errorf("quic: generating a connection ID: %w", err)
		}
		if cid.Len() != n {
			return ConnectionID{}, fmt.Errorf("quic: connection ID generator returned %d bytes, want %d", cid.Len(), n)
		}
		if n == 0 || e.routes.add(cid, c) {
			return cid, nil
		}
	}
	return ConnectionID{}, errors.New("quic: connection ID generator keeps returning IDs in use")
}

// handleConnIDEvent applies a connection's routing change (connIDEvent):
// an issued ID is routed to c unless it routes elsewhere already, which
// it reports with false (the connection then picks another); a retired
// one stops routing to c. The driver hands it every event the connection
// queued before it polls the connection for datagrams, so an ID routes
// before a frame can carry it to the peer (RFC 9000, Section 5.1.1).
func (e *endpoint) handleConnIDEvent(c *Conn, ev connIDEvent) bool {
	if ev.cid.Len() == 0 {
		return true
	}
	if ev.retire {
		e.routes.remove(ev.cid, c)
		return true
	}
	return e.routes.add(ev.cid, c)
}
