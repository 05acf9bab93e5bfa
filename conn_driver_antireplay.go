package quic

import (
	"context"
	"time"
)

// Admit records key until ttl from now and reports whether it was new: it
// is AdmitAt with the clock's time, for callers outside a connection (the
// AntiReplay interface). This is the one AntiReplayCache method that reads
// the clock.
func (a *AntiReplayCache) Admit(ctx context.Context, key []byte, ttl time.Duration) (bool, error) {
	return a.AdmitAt(ctx, time.Now(), key, ttl)
}
