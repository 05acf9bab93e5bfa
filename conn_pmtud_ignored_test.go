package quic

import (
	"testing"
	"time"
)

// A path MTU probe the local stack refuses is abandoned, never
// acknowledged nor declared lost: its packet number must not stay among
// those the congestion controller ignores, or every acknowledgment after
// searches them (the search above an Ethernet MTU over an Ethernet
// interface refuses a few probes on every connection).
func TestSimPathMTURefusedProbeNotIgnoredForever(t *testing.T) {
	p, refused := newSimPairLocalMTU1500(t)
	p.connect(t)
	c := p.client.c
	c.bytesSent = pmtuJumboAfter
	p.run(t, 10*time.Second, func() bool { return !c.pmtud.searching && c.pmtud.jumboMax == 0 })
	p.run(t, 10*time.Second, func() bool { return c.sent.BytesInFlight() == 0 })
	if *refused == 0 {
		t.Fatal("no probe refused")
	}
	if c.ccw.taken != 0 {
		t.Fatalf("%d packet numbers still ignored after %d refused probes, with nothing in flight", c.ccw.taken, *refused)
	}
}
