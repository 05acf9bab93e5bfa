package quic

import (
	"context"
	"errors"
	"sync"
	"time"
)

// An AntiReplay store lets a fleet of servers accept 0-RTT for each
// session ticket at most once. "0-RTT provides no protection against
// replay attacks" (RFC 8446, Section 8): an attacker who captured a
// client's first flight can send it again, to the same server or to
// another of the fleet, and the request in it is processed again; "the
// server's application needs to be able to handle replay of 0-RTT data"
// (RFC 9001, Section 9.2). With Config.AntiReplay set, a server accepts
// 0-RTT only for a ticket whose ID the store admits, so a replayed flight
// gets no 0-RTT anywhere the store reaches: its handshake goes on in
// 1-RTT, where the client's address and keys are proven ("single-use
// tickets", RFC 8446, Section 8.1). A genuine client loses nothing but
// the round trip: its 0-RTT data is sent again after the handshake.
//
// NewAntiReplayCache is an in-process store for one server; the module
// github.com/quicstack/quic/contrib/redis has one that a fleet shares
// through Redis.
type AntiReplay interface {
	// Admit records key and reports whether it was new: true the first
	// time, false while key is recorded. It keeps key for at least ttl.
	// It must return when ctx is done (the server gives it
	// Config.AntiReplayTimeout); an error, like a timeout, declines 0-RTT.
	// It is called from many connections' goroutines at once.
	Admit(ctx context.Context, key []byte, ttl time.Duration) (bool, error)
}

// antiReplayAt is an AntiReplay store that takes the time from its caller
// (AntiReplayCache): a server connection passes the time of its state
// machine, so that the store reads no clock.
type antiReplayAt interface {
	AdmitAt(ctx context.Context, now time.Time, key []byte, ttl time.Duration) (bool, error)
}

// Defaults of the anti-replay settings of Config.
const (
	defaultAntiReplayWindow  = time.Hour
	defaultAntiReplayTimeout = 50 * time.Millisecond
	// antiReplayClockSkew is how far in the future a ticket's issue time
	// may lie (servers of a fleet whose clocks differ).
	antiReplayClockSkew = time.Minute
)

// antiReplayOutcome is what the anti-replay check decided, for the
// Transport's statistics.
type antiReplayOutcome uint8

const (
	antiReplayNone     antiReplayOutcome = iota
	antiReplayAdmitted                   // the store admitted the ticket
	antiReplayReplayed                   // the store had seen it
	antiReplayTooOld                     // outside the window; not asked
	antiReplayFailed                     // error or timeout
)

// admitEarlyData returns the handshake's AdmitEarlyData hook for a server
// connection, or nil without Config.AntiReplay. The hook calls the store
// on the connection's goroutine: crypto/tls needs the answer before the
// handshake goes on. It waits at most Config.AntiReplayTimeout and
// declines 0-RTT on anything but a clear "new".
func (c *connState) admitEarlyData(connParams) func([]byte, time.Time, time.Time) bool {
	cfg := c.config
	store := cfg.AntiReplay
	if store == nil || !cfg.Allow0RTT {
		return nil
	}
	window, timeout := cfg.AntiReplayWindow, cfg.AntiReplayTimeout
	if window <= 0 {
		window = defaultAntiReplayWindow
	}
	if timeout <= 0 {
		timeout = defaultAntiReplayTimeout
	}
	return func(id []byte, issued, now time.Time) bool {
		age := now.Sub(issued)
		if age > window || age < -antiReplayClockSkew {
			c.obs.antiReplay = antiReplayTooOld
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var ok bool
		var err error
		if at, isAt := store.(antiReplayAt); isAt {
			ok, err = at.AdmitAt(ctx, now, id, window-age+antiReplayClockSkew)
		} else {
			ok, err = store.Admit(ctx, id, window-age+antiReplayClockSkew)
		}
		switch {
		case err != nil || ctx.Err() != nil:
			c.obs.antiReplay = antiReplayFailed
			return false
		case !ok:
			c.obs.antiReplay = antiReplayReplayed
			return false
		}
		c.obs.antiReplay = antiReplayAdmitted
		return true
	}
}

// ErrAntiReplayFull is returned by an AntiReplayCache that is full of
// keys not yet expired; 0-RTT is then declined.
var ErrAntiReplayFull = errors.New("quic: anti-replay cache full")

// DefaultAntiReplayCacheSize is the capacity of an AntiReplayCache made
// with size 0.
const DefaultAntiReplayCacheSize = 1 << 20

// An AntiReplayCache is an AntiReplay store in the process's memory, for
// a server whose 0-RTT no other server can be sent (a single server, or a
// fleet where each client's packets always reach the same server). It
// holds at most its size in keys; when it is full of keys not yet
// expired, it declines 0-RTT (fails closed). It is safe for concurrent
// use.
type AntiReplayCache struct {
	mu   sync.Mutex
	size int
	keys map[string]time.Time // key -> expiry
	// swept is when a full cache last looked for expired keys: it looks
	// at most once a second, so that a full cache refuses in constant
	// time rather than walking every key for every handshake.
	swept time.Time
}

// NewAntiReplayCache returns an AntiReplayCache of size keys (0 means
// DefaultAntiReplayCacheSize, about 100 MB at most).
func NewAntiReplayCache(size int) *AntiReplayCache {
	if size <= 0 {
		size = DefaultAntiReplayCacheSize
	}
	return &AntiReplayCache{size: size, keys: make(map[string]time.Time)}
}

// AdmitAt records key until ttl after now and reports whether it was new.
// A server connection calls it with the time of its state machine; Admit
// is the same with the clock's time.
func (a *AntiReplayCache) AdmitAt(_ context.Context, now time.Time, key []byte, ttl time.Duration) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if exp, ok := a.keys[string(key)]; ok && now.Before(exp) {
		return false, nil
	}
	if len(a.keys) >= a.size && now.Sub(a.swept) >= time.Second {
		a.swept = now
		for k, exp := range a.keys {
			if !now.Before(exp) {
				delete(a.keys, k)
			}
		}
	}
	if len(a.keys) >= a.size {
		return false, ErrAntiReplayFull
	}
	a.keys[string(key)] = now.Add(ttl)
	return true, nil
}

// Len returns the number of keys held, expired ones included until the
// cache fills up and sweeps them.
func (a *AntiReplayCache) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.keys)
}
