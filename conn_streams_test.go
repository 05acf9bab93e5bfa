package quic

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestStreamsMapWakeHandshakes stresses the two handshakes between the
// connection goroutine and application goroutines documented on
// streamsMap (both under its mutex since the Dekker pairs of atomics
// were removed, the goroutine skipping the lock when what it publishes is
// unchanged): whichever order two concurrent calls run in, at least one
// side must see the other's change and act, or a wakeup is lost and a
// reader waits forever (RFC 9000, Section 4.2: the receiver must "send
// MAX_DATA ... frames as it consumes data"). Run it with -race; each
// round starts both sides together from fresh state.
func TestStreamsMapWakeHandshakes(t *testing.T) {
	rounds := 20000
	if connIDRaceEnabled || testing.Short() {
		rounds = 4000 // the race detector slows each round tenfold
	}
	// Two long-lived goroutines spin until a round starts, so that their
	// operations overlap far more often than freshly started goroutines'.
	var ops [2]func() bool
	var results [2]bool
	var round, done atomic.Int64
	var wg sync.WaitGroup
	defer func() { round.Store(-1); wg.Wait() }()
	for k := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := int64(1); ; r++ {
				for spin := 0; round.Load() < r; spin++ {
					if round.Load() < 0 {
						return
					}
					if spin > 100 {
						runtime.Gosched() // a loaded machine: let the others run
					}
				}
				results[k] = ops[k]()
				done.Add(1)
			}
		}()
	}
	n := int64(0)
	race := func(a, b func() bool) (bool, bool) {
		ops[0], ops[1] = a, b
		done.Store(0)
		n++
		round.Store(n)
		for done.Load() < 2 {
			runtime.Gosched()
		}
		return results[0], results[1]
	}
	for i := range rounds {
		// A reader starts waiting while the goroutine finds the window
		// starved: the reader wakes the goroutine, or the goroutine sees
		// the reader and grows the window.
		m := &streamsMap{}
		grow, wake := race(
			func() bool { return m.publishStarved(true) },
			func() bool { return m.readerWaits(1) },
		)
		if !grow && !wake {
			t.Fatalf("round %d: a waiting reader and a starved window, and neither side noticed", i)
		}

		// A read brings the uncounted bytes to the MAX_DATA threshold the
		// goroutine publishes at the same moment: the reader wakes the
		// goroutine, or the goroutine sees the bytes and counts them.
		m = &streamsMap{}
		var woke atomic.Bool
		m.wake = func() { woke.Store(true) }
		m.readWakeAt = math.MaxInt64 // nothing due yet
		s := &stream{m: m}
		recount, _ := race(
			func() bool { return m.publishReadWakeAt(100) },
			func() bool { m.noteRead(s, false, 150); return false },
		)
		if !recount && !woke.Load() {
			t.Fatalf("round %d: reads reached the MAX_DATA threshold, and neither side noticed", i)
		}
		if !m.attentionPending.Load() || len(m.attention) != 1 {
			t.Fatalf("round %d: the read stream is not queued for attention", i)
		}

		// The same threshold published again takes no lock: a read that
		// reaches it meanwhile must wake the goroutine itself.
		woke.Store(false)
		m.readPending = 0
		recount, _ = race(
			func() bool { return m.publishReadWakeAt(100) },
			func() bool { m.noteRead(s, false, 100); return false },
		)
		if recount || !woke.Load() {
			t.Fatalf("round %d: unchanged threshold: goroutine recount %v, reader woke %v; want false, true", i, recount, woke.Load())
		}
	}
}
