package quic

import (
	"container/list"
	"net"
	"sync"
)

// A TokenStore keeps, on a client, the address-validation tokens servers
// give in NEW_TOKEN frames (RFC 9000, Section 8.1.3), so that the next
// connection to the same server presents one in its first Initial packet
// and skips the Retry round trip and the server's anti-amplification
// limit. Keys name a server and a QUIC version, as "name|version": the
// TLS server name, so that the servers of a fleet sharing a token key
// (Transport.TokenKey) accept each other's tokens, or the address when the
// tls.Config has no ServerName; and the version, since tokens are specific
// to the version of the connection that got them (RFC 9369, Section 5). A
// TokenStore must be safe for concurrent use.
type TokenStore interface {
	// Get returns and removes a token for key, or nil: "A client SHOULD
	// NOT reuse a token" (RFC 9000, Section 8.1.3) across connections,
	// since reuse lets observers link them.
	Get(key string) []byte
	// Put stores a token for key.
	Put(key string, token []byte)
}

// NewLRUTokenStore returns a TokenStore holding up to maxServers servers,
// the least recently used dropped first, and up to tokensPerServer tokens
// for each, the oldest dropped first.
func NewLRUTokenStore(maxServers, tokensPerServer int) TokenStore {
	return &lruTokenStore{max: max(maxServers, 1), perServer: max(tokensPerServer, 1),
		m: make(map[string]*list.Element), l: list.New()}
}

type lruTokenStore struct {
	mu             sync.Mutex
	max, perServer int
	m              map[string]*list.Element // of *lruTokenEntry
	l              *list.List               // most recently used first
}

type lruTokenEntry struct {
	key    string
	tokens [][]byte // newest last
}

func (s *lruTokenStore) Get(key string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok {
		return nil
	}
	ent := e.Value.(*lruTokenEntry)
	tok := ent.tokens[len(ent.tokens)-1]
	ent.tokens = ent.tokens[:len(ent.tokens)-1]
	if len(ent.tokens) == 0 {
		s.l.Remove(e)
		delete(s.m, key)
	} else {
		s.l.MoveToFront(e)
	}
	return tok
}

func (s *lruTokenStore) Put(key string, token []byte) {
	token = append([]byte(nil), token...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[key]; ok {
		ent := e.Value.(*lruTokenEntry)
		ent.tokens = append(ent.tokens, token)
		if len(ent.tokens) > s.perServer {
			ent.tokens = ent.tokens[1:]
		}
		s.l.MoveToFront(e)
		return
	}
	s.m[key] = s.l.PushFront(&lruTokenEntry{key: key, tokens: [][]byte{token}})
	if s.l.Len() > s.max {
		last := s.l.Back()
		s.l.Remove(last)
		delete(s.m, last.Value.(*lruTokenEntry).key)
	}
}

// tokenStoreKey names a server in a TokenStore, without the version: its
// TLS server name or, without one, its address (as crypto/tls names
// sessions in a ClientSessionCache).
func tokenStoreKey(serverName string, addr net.Addr) string {
	if serverName != "" {
		return serverName
	}
	return addr.String()
}
