// Package redis is a quic.AntiReplay store backed by Redis
// (github.com/redis/go-redis/v9), which the servers of a fleet share so
// that a session ticket is admitted to 0-RTT once across all of them:
// a first flight replayed to another server gets no 0-RTT there. It is a
// module of its own, so that the quic module does not depend on a Redis
// client.
//
//	rdb := goredis.NewClient(&goredis.Options{Addr: "redis.internal:6379"})
//	conf := &quic.Config{Allow0RTT: true, AntiReplay: redis.NewAntiReplay(rdb, "")}
//
// Each admission is one SET key 1 PX ttl NX: atomic on one Redis server,
// expiring on its own, nothing else to clean up. A Redis that is down,
// slow or full costs 0-RTT only: the server declines 0-RTT when Admit
// fails or outlasts quic.Config.AntiReplayTimeout, and the handshake
// continues in 1-RTT. Configure the client for that: a refused connection
// should fail at once (redis.Options.DialerRetries 1) rather than retry
// until the timeout.
package redis

import (
	"context"
	"encoding/hex"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// DefaultPrefix is the key prefix of an AntiReplay made with an empty
// prefix.
const DefaultPrefix = "quic:0rtt:"

// An AntiReplay is a quic.AntiReplay store in Redis. It is safe for
// concurrent use.
type AntiReplay struct {
	client goredis.UniversalClient
	prefix string
}

// NewAntiReplay returns an AntiReplay that keeps its keys in client
// under prefix (DefaultPrefix if empty). client may be a *redis.Client, a
// cluster or a ring: keys are independent of each other.
func NewAntiReplay(client goredis.UniversalClient, prefix string) *AntiReplay {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &AntiReplay{client: client, prefix: prefix}
}

// Admit records key in Redis for ttl, unless it is already there, and
// reports whether it was new. It returns when ctx is done at the latest.
func (a *AntiReplay) Admit(ctx context.Context, key []byte, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		ttl = time.Millisecond
	}
	return a.client.SetNX(ctx, a.prefix+hex.EncodeToString(key), 1, ttl).Result()
}
