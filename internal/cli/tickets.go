package cli

import (
	"context"
	"crypto/tls"
	"sync"
)

// TicketCache is a client session cache that lets a program wait for a
// session ticket before it reconnects to resume.
type TicketCache struct {
	tls.ClientSessionCache
	mu    sync.Mutex
	puts  int
	added chan struct{}
}

// NewTicketCache returns an empty cache.
func NewTicketCache() *TicketCache {
	return &TicketCache{ClientSessionCache: tls.NewLRUClientSessionCache(64), added: make(chan struct{})}
}

// Put stores a session and wakes WaitTicket.
func (c *TicketCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs == nil {
		return
	}
	c.mu.Lock()
	c.puts++
	close(c.added)
	c.added = make(chan struct{})
	c.mu.Unlock()
}

// WaitTicket waits until the cache received more than n tickets in all,
// or ctx is done, and reports whether it did.
func (c *TicketCache) WaitTicket(ctx context.Context, n int) bool {
	for {
		c.mu.Lock()
		puts, added := c.puts, c.added
		c.mu.Unlock()
		if puts > n {
			return true
		}
		select {
		case <-added:
		case <-ctx.Done():
			return false
		}
	}
}

// Tickets returns how many tickets the cache received.
func (c *TicketCache) Tickets() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.puts
}
