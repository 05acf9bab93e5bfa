package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// Tests of connection-level flow control (RFC 9000, Sections 4.1 and 4.2)
// through whole connections on the simulator.

// A connection window at its maximum with part of it held by streams the
// application leaves unread: the stream it reads must still get the rest.
// MaxConnectionReceiveWindow promises that only leaving more than the
// maximum unread blocks; "Connection flow control ... prevents senders
// from exceeding a receiver's buffer capacity for the connection"
// (RFC 9000, Section 4.1), and "To avoid blocking a sender, a receiver MAY
// send a MAX_STREAM_DATA or MAX_DATA frame multiple times within a round
// trip" (Section 4.2). With the half-window rule alone (an update once
// consumed > limit - window/2) the limit never rose again once half the
// maximum sat unread: with default settings 26 unread streams (13 MiB of
// 24 MiB) stopped a 20 MiB stream at 11 MiB for good while its Read
// waited.
func TestSimConnWindowWithHalfUnread(t *testing.T) {
	const unread, unreadSize, bigSize = 26, 512 << 10, 20 << 20
	p := newSimPair(t, testLink, nil, 301)
	p.connect(t)
	var writers []*patternWriter
	for k := range unread + 1 {
		s, _, err := p.client.c.streams.openStream(false)
		if err != nil || s == nil {
			t.Fatalf("open: %v", err)
		}
		size := unreadSize
		if k == unread {
			size = bigSize
		}
		writers = append(writers, newPatternWriter(s, k, size))
	}
	bigID := writers[unread].s.id
	var big *patternReader
	m := p.server.c.streams
	waiting := false
	setWaiting := func(w bool) { // a Read waits, as stream.read counts it
		if w != waiting {
			waiting = w
			m.readerWaits(map[bool]int64{true: 1, false: -1}[w])
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			r := p.server.c.connRecv
			got := 0
			if big != nil {
				got = big.got
			}
			t.Logf("big stream: %d of %d bytes read; connection window %d (max %d), limit %d, received %d, consumed %d",
				got, bigSize, r.Window(), r.MaxWindow(), r.Limit(), r.Received(), r.Consumed())
		}
	})
	p.run(t, 60*time.Second, func() bool {
		for _, w := range writers {
			w.step()
		}
		if p.server.c == nil {
			return false
		}
		for _, s := range acceptAll(p.server.c, false) {
			if s.id == bigID {
				big = newPatternReader(t, s, unread)
			}
		}
		if big == nil {
			setWaiting(true) // waiting in Read for the first bytes
			return false
		}
		done := big.step(0)
		setWaiting(!done && big.read == 0)
		return done
	})
	if big.got != bigSize {
		t.Fatalf("read %d bytes of %d", big.got, bigSize)
	}
	if u := p.server.c.connRecv.Received() - p.server.c.connRecv.Consumed(); u > p.server.c.connRecv.MaxWindow() {
		t.Errorf("%d bytes unread, above the maximum window %d", u, p.server.c.connRecv.MaxWindow())
	}
}

// blockedStreamsConfig lets the client open many unidirectional streams
// with 1 KiB of stream credit each, and gives the connection room for all
// of them, so that they block on stream flow control alone.
func blockedStreamsConfig(streams int) *Config {
	return &Config{
		MaxIncomingUniStreams:          int64(streams + 1),
		InitialStreamReceiveWindow:     1 << 10,
		InitialConnectionReceiveWindow: 8 << 20, MaxConnectionReceiveWindow: 32 << 20,
	}
}

// openBlockedStreams opens n client unidirectional streams and writes 2
// KiB on each, twice their credit, so that each sends 1 KiB and blocks.
func openBlockedStreams(t testing.TB, p *simPair, n int) []*stream {
	t.Helper()
	var list []*stream
	for k := range n {
		s, _, err := p.client.c.streams.openStream(false)
		if err != nil || s == nil {
			t.Fatalf("open stream %d: %v", k, err)
		}
		simWrite(s, testPattern(k, 0, 2<<10))
		s.closeWrite()
		list = append(list, s)
	}
	return list
}

// Streams blocked on their stream's flow control leave the queue of
// streams with something to send, which every packet walks, until a
// MAX_STREAM_DATA (or a loss, a reset) gives them something to send:
// 1,000 of them made a bulk stream 30 to 60 times slower on the
// simulator (BenchmarkSimBulkBlockedStreams). They still send their
// STREAM_DATA_BLOCKED ("A sender SHOULD send a STREAM_DATA_BLOCKED or
// DATA_BLOCKED frame to indicate to the receiver that it has data to write
// but is blocked by flow control limits", RFC 9000, Section 4.1) and
// resume on credit.
func TestSimStreamCreditBlockedStreamsParked(t *testing.T) {
	t.Run("lossless", func(t *testing.T) { testStreamCreditBlockedStreamsParked(t, false) })
	// Every third datagram the client sends is lost at first: lost data
	// and lost STREAM_DATA_BLOCKED frames take streams out of the parked
	// ones to be sent again.
	t.Run("lossy", func(t *testing.T) { testStreamCreditBlockedStreamsParked(t, true) })
}

func testStreamCreditBlockedStreamsParked(t *testing.T, lossy bool) {
	const n = 100
	p := newSimPair(t, testLink, blockedStreamsConfig(n), 302)
	p.connect(t)
	slog := watchFrames(p.server.c)
	if lossy {
		until, k := p.sim.Now().Add(100*time.Millisecond), 0
		p.client.dropOut = func(now time.Time, _ []byte) bool {
			k++
			return now.Before(until) && k%3 == 0
		}
	}
	streams := openBlockedStreams(t, p, n)
	p.sim.RunFor(time.Second)
	m := p.client.c.streams
	if m.sched.len() != 0 {
		t.Errorf("%d streams queued to send while all wait for stream credit", m.sched.len())
	}
	if lossy && p.client.droppedOut == 0 {
		t.Fatal("nothing lost")
	}
	blocked := map[wire.StreamID]bool{}
	for _, f := range slog.streamDataBlocked {
		blocked[f.StreamID] = true
	}
	if got := len(blocked); got != n || !lossy && len(slog.streamDataBlocked) != n {
		t.Errorf("STREAM_DATA_BLOCKED frames received for %d streams (%d frames), want %d",
			got, len(slog.streamDataBlocked), n)
	}
	// The server reads two of them: they get credit and finish; the
	// others stay blocked.
	var readers []*patternReader
	for _, s := range acceptAll(p.server.c, false) {
		if k := int(s.id.Num()) - 1; k == 3 || k == n-1 {
			readers = append(readers, newPatternReader(t, s, k))
		}
	}
	p.run(t, 2*time.Second, func() bool {
		done := true
		for _, r := range readers {
			done = r.step(0) && done
		}
		return done
	})
	for _, r := range readers {
		if r.got != 2<<10 {
			t.Errorf("stream %d: %d bytes read", r.s.id, r.got)
		}
	}
	p.sim.RunFor(time.Second)
	if m.sched.len() != 0 {
		t.Errorf("%d streams queued to send after two finished", m.sched.len())
	}
	for k, s := range streams {
		s.mu.Lock()
		sent := s.sendFC.Sent()
		s.mu.Unlock()
		if want := uint64(1 << 10); k != 3 && k != n-1 && sent != want {
			t.Errorf("stream %d sent %d, want %d", s.id, sent, want)
		}
	}
}

// The send queue of a connection with many streams taking turns (an
// incremental stream's turn ends, a non-incremental one leaves and comes
// back) reuses its storage: the queue once grew by append's factor of
// 1.25 for large slices, which left it too small to move back, and it
// allocated anew every few hundred turns.
func TestSendableQueueTurnsWithoutAllocating(t *testing.T) {
	for _, n := range []int{1, 2, 7, 1000} {
		for _, inc := range []bool{false, true} {
			m := &streamsMap{}
			for i := range n {
				s := &stream{id: wire.StreamID(4 * i), m: m}
				s.appPrio = encodePriority(Priority{Urgency: 3, Incremental: inc})
				m.markSendable(s)
			}
			turn := func() {
				s := m.sched.next()
				if inc {
					m.sched.sent(s, incrementalQuantum)
					return
				}
				m.sched.remove(s)
				s.inSendable = false
				m.markSendable(s)
			}
			for range 10 * n {
				turn() // the queue settles
			}
			// AllocsPerRun divides by the runs, rounding down: one run of
			// many turns counts them all. It counts the whole process's
			// allocations: a goroutine left by an earlier test may
			// allocate meanwhile, so one clean run of three is enough.
			a := 1.0
			for try := 0; try < 3 && a != 0; try++ {
				a = testing.AllocsPerRun(1, func() {
					for range 10 * n {
						turn()
					}
				})
			}
			if a != 0 {
				t.Errorf("%d streams (incremental %v): %.0f allocations in %d turns", n, inc, a, 10*n)
			}
			if m.sched.len() != n {
				t.Fatalf("%d streams queued, want %d", m.sched.len(), n)
			}
		}
	}
}
