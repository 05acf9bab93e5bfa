package quic

import (
	"crypto/rand"
	"testing"
	"testing/synctest"
	"time"
)

// TestStatelessResetLoopEnds points two Transports at each other and
// hands one a short-header packet for an unknown connection: each answers
// the other's stateless reset with a reset, but each is one byte shorter
// than what triggered it and none is shorter than 21 bytes (RFC 9000,
// Section 10.3.3), so the exchange ends after at most 22 resets (42 bytes
// down to 21), even once the rate limit's budget is back.
func TestStatelessResetLoopEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newMemConnPair()
		ta, tb := &Transport{Conn: a}, &Transport{Conn: b}
		for _, tr := range []*Transport{ta, tb} {
			if err := tr.init(); err != nil {
				t.Fatal(err)
			}
		}
		trigger := make([]byte, 1200)
		rand.Read(trigger)
		trigger[0] = 0x40 | trigger[0]&0x3f
		a.WriteTo(trigger, b.LocalAddr()) // as if ta had sent it
		synctest.Wait()
		time.Sleep(3 * time.Second) // the reset budget refills
		synctest.Wait()
		ra, rb := ta.Stats().StatelessResetsSent, tb.Stats().StatelessResetsSent
		if ra+rb == 0 || ra+rb > 42-21+1 || rb-ra > 1 || ra > rb {
			t.Errorf("stateless resets sent: %d and %d; want a short exchange of at most 22", ra, rb)
		}
		ta.Close()
		tb.Close()
		a.Close()
		b.Close()
	})
}

// TestStatelessResetRateLimited: a flood of short-header packets for
// unknown connections gets at most the per-second budget of stateless
// resets, which refills the next second.
func TestStatelessResetRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newMemConnPair()
		tb := &Transport{Conn: b}
		if err := tb.init(); err != nil {
			t.Fatal(err)
		}
		flood := func() {
			for range 500 {
				d := make([]byte, 100)
				rand.Read(d)
				d[0] = 0x40 | d[0]&0x3f
				a.WriteTo(d, b.LocalAddr())
			}
			synctest.Wait()
		}
		flood()
		if r := tb.Stats().StatelessResetsSent; r == 0 || r > 100 {
			t.Errorf("%d stateless resets for 500 packets in one second; want 1 to 100", r)
		}
		time.Sleep(2 * time.Second)
		flood()
		if r := tb.Stats().StatelessResetsSent; r <= 100 || r > 200 {
			t.Errorf("%d stateless resets after two seconds of floods; want 101 to 200", r)
		}
		tb.Close()
		a.Close()
		b.Close()
	})
}
