package quic

import (
	"hash/maphash"
	"sync"

	"github.com/quicstack/quic/wire"
)

// The Transport's routing table: connection ID -> connection (RFC 9000,
// Section 5.2), sharded so that the read loop never takes a global lock.
// Connections add and retire their IDs through connRoutes; closed
// connections' IDs route to their records (closed_conn.go).

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

// connRoutes is a connection's connIDRoutes: it adds and removes the
// connection's IDs in its Transport's table.
type connRoutes struct {
	h *packetHandlerMap
	c *Conn
}

func (r connRoutes) addConnID(cid ConnectionID, _ wire.StatelessResetToken) bool {
	if cid.Len() == 0 {
		return true
	}
	if !r.h.add(cid, r.c) {
		return false
	}
	// The connection's other Transports route it too (conn_driver_migrate.go).
	for _, t := range r.c.extra {
		t.handlers.add(cid, r.c)
	}
	return true
}

func (r connRoutes) removeConnID(cid ConnectionID) {
	r.h.remove(cid, r.c)
	for _, t := range r.c.extra {
		t.handlers.remove(cid, r.c)
	}
}
