package quic

import (
	"testing"
	"time"
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
