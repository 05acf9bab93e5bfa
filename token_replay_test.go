package quic

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"
)

func tokenID(n uint64) [16]byte {
	var id [16]byte
	binary.LittleEndian.PutUint64(id[:], n)
	binary.LittleEndian.PutUint64(id[8:], ^n)
	return id
}

// Each token is accepted once until it expires; after it expired the
// guard forgets it (the token itself no longer opens).
func TestTokenReplayGuardOnce(t *testing.T) {
	g := NewTokenReplayGuard(100)
	now := time.Unix(1000, 0)
	exp := now.Add(time.Hour)
	if !g.UseToken(tokenID(1), exp, now) {
		t.Fatal("first use refused")
	}
	if g.UseToken(tokenID(1), exp, now.Add(time.Minute)) {
		t.Fatal("second use accepted")
	}
	if !g.UseToken(tokenID(2), exp, now) {
		t.Fatal("another token refused")
	}
	g.UseToken(tokenID(3), now.Add(2*time.Hour), now.Add(2*time.Hour-time.Second))
	if n := len(g.(*tokenGuard).heap); n != 1 {
		t.Errorf("%d tokens remembered after two expired, want 1", n)
	}
}

// Full, the guard forgets the token that expires first and refuses every
// token expiring no later, so that no forgotten token is accepted twice:
// replays of any of 10,000 tokens through a guard of 100 are all refused,
// and the tokens issued last are still accepted once.
func TestTokenReplayGuardBounded(t *testing.T) {
	g := NewTokenReplayGuard(100)
	now := time.Unix(1000, 0)
	for i := range uint64(10000) {
		exp := now.Add(time.Hour + time.Duration(i)*time.Millisecond)
		g.UseToken(tokenID(i), exp, now)
	}
	for i := range uint64(10000) {
		exp := now.Add(time.Hour + time.Duration(i)*time.Millisecond)
		if g.UseToken(tokenID(i), exp, now) {
			t.Fatalf("token %d accepted twice", i)
		}
	}
	if n := len(g.(*tokenGuard).heap); n > 100 {
		t.Fatalf("%d tokens remembered, capacity 100", n)
	}
	exp := now.Add(2 * time.Hour)
	if !g.UseToken(tokenID(20000), exp, now) || g.UseToken(tokenID(20000), exp, now) {
		t.Error("a fresh token is not accepted exactly once")
	}
}

// The guard is safe for concurrent use: of 8 goroutines presenting the
// same 1,000 tokens, exactly one wins each token.
func TestTokenReplayGuardConcurrent(t *testing.T) {
	g := NewTokenReplayGuard(DefaultTokenReplayCapacity)
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	wins := map[uint64]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range uint64(1000) {
				if g.UseToken(tokenID(i), now.Add(time.Hour), now) {
					mu.Lock()
					wins[i]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for i := range uint64(1000) {
		if wins[i] != 1 {
			t.Fatalf("token %d accepted %d times", i, wins[i])
		}
	}
}
