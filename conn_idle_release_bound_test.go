package quic

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// nextDeadline computes the idle-release deadline only when its lower
// bound may be the earliest (idleReleaseBefore): the earliest of d and
// that must be the earliest of d and the exact deadline, whatever the
// activity, the other deadlines and the PTO do, time going backwards too.
func TestIdleReleaseBeforeAgreesWithDeadline(t *testing.T) {
	p := newSimPair(t, netsim.LinkConfig{Bandwidth: 100_000_000, Delay: 10 * time.Millisecond, QueuePackets: 100}, nil, 3)
	p.run(t, 5*time.Second, p.confirmed)
	c := p.client.c
	if c.idleReleaseDeadline().IsZero() {
		t.Fatal("no idle-release deadline once the handshake is confirmed")
	}
	earlier := func(a, b time.Time) time.Time {
		if !b.IsZero() && (a.IsZero() || b.Before(a)) {
			return b
		}
		return a
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := c.lastActivity
	computed := 0
	for i := range 200_000 {
		switch r := rng.IntN(100); {
		case r < 60: // a datagram, time going forward
			now = now.Add(time.Duration(rng.IntN(int(300 * time.Millisecond))))
			c.markActive(now)
		case r < 62: // time going backwards (a test's clock)
			now = now.Add(-time.Duration(rng.IntN(int(2 * time.Second))))
			c.markActive(now)
		case r < 65: // the PTO grows past a third of idleReleaseDelay, or shrinks
			c.rtt.Update(time.Duration(rng.IntN(int(800*time.Millisecond))), 0, true)
		}
		var d time.Time
		if rng.IntN(10) > 0 {
			d = now.Add(time.Duration(rng.IntN(int(3*time.Second))) - 500*time.Millisecond)
		}
		want := earlier(d, c.idleReleaseDeadline())
		got := c.idleReleaseBefore(d)
		if !got.IsZero() {
			computed++
		}
		if got := earlier(d, got); !got.Equal(want) {
			t.Fatalf("step %d: earliest of %v and the idle release: %v, want %v (last activity %v, PTO %v)",
				i, d, got, want, c.lastActivity, c.rtt.PTO(true))
		}
	}
	if computed == 0 || computed > 150_000 {
		t.Fatalf("exact deadline computed %d times of 200,000", computed)
	}
	t.Logf("exact deadline computed %d times of 200,000", computed)
}
