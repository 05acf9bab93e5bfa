package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// simEndlessDownload starts a client-opened stream on p on which the server
// writes without end, and returns a step function that keeps the server
// writing and the client reading, and the time the client last received
// a datagram.
func simEndlessDownload(t *testing.T, p *simPair) (step func() bool, lastRecv *time.Time) {
	t.Helper()
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v %v", s, err)
	}
	simWrite(s, []byte("get"))
	p.cnode.Wake()
	var srv *stream
	chunk := make([]byte, 32<<10)
	buf := make([]byte, 64<<10)
	lastRecv = new(time.Time)
	p.client.dropIn = func(now time.Time, d *netsim.Datagram) bool {
		*lastRecv = now
		return false
	}
	step = func() bool {
		if srv == nil && p.server.c != nil {
			srv, _, _ = p.server.c.streams.acceptStream(true)
		}
		if srv != nil && simWrite(srv, chunk) > 0 {
			p.snode.Wake()
		}
		for {
			n, _ := simRead(s, buf)
			if n == 0 {
				break
			}
			p.cnode.Wake()
		}
		return false
	}
	return step, lastRecv
}

// A downloading client sends only acknowledgments, which nothing
// acknowledges: when the path dies, a client that follows the network
// sends a PING (a path probe) 250 ms after it last received, and its
// probe timeouts count from there, which is what moves it to another
// path; without FollowNetwork it sends nothing and its PTO count stays 0.
func TestSimFollowPathProbe(t *testing.T) {
	for _, follow := range []bool{true, false} {
		// Windows larger than the download: the client sends only
		// acknowledgments, no window updates.
		big := uint64(256 << 20)
		p := newSimPair(t, testLink, &Config{FollowNetwork: follow, MaxIdleTimeout: time.Minute,
			InitialStreamReceiveWindow: big, MaxStreamReceiveWindow: big, InitialConnectionReceiveWindow: big, MaxConnectionReceiveWindow: big}, 31)
		p.connect(t)
		step, lastRecv := simEndlessDownload(t, p)
		end := p.sim.Now().Add(300 * time.Millisecond)
		p.run(t, time.Second, func() bool { step(); return !p.sim.Now().Before(end) })
		// The path dies, both ways.
		dead := p.sim.Now()
		p.client.dropOut = func(time.Time, []byte) bool { return true }
		p.server.dropOut = func(time.Time, []byte) bool { return true }
		var probeAt, stallAt time.Time
		end = dead.Add(2 * time.Second)
		p.run(t, 10*time.Second, func() bool {
			step()
			if probeAt.IsZero() && p.client.c.probes > 0 {
				probeAt = p.sim.Now()
			}
			if stallAt.IsZero() && p.client.c.sent.PTOCount() >= followPTOs {
				stallAt = p.sim.Now()
			}
			return !p.sim.Now().Before(end)
		})
		if !follow {
			if !probeAt.IsZero() || !stallAt.IsZero() {
				t.Fatalf("without FollowNetwork: something ack-eliciting sent %v after the path died, PTO count %d", probeAt.Sub(dead), p.client.c.sent.PTOCount())
			}
			continue
		}
		// The client's last datagram arrived at most a one-way delay
		// after the path died.
		if probeAt.IsZero() || probeAt.Sub(*lastRecv) < pathProbeIdle || probeAt.Sub(*lastRecv) > pathProbeIdle+5*time.Millisecond {
			t.Fatalf("path probe %v after the last datagram received; want %v", probeAt.Sub(*lastRecv), pathProbeIdle)
		}
		if stallAt.IsZero() {
			t.Fatal("PTO count never reached 2")
		}
		t.Logf("probe %v and PTO count %d %v after the path died", probeAt.Sub(dead), followPTOs, stallAt.Sub(dead))
	}
}

// On a healthy connection whose streams stay open with nothing to carry
// (HTTP/3's control streams), the path probes back off: a handful in a
// minute (with the keep-alives, whose acknowledgments also count as
// having heard from the path), not four a second.
func TestSimFollowPathProbeBackoff(t *testing.T) {
	p := newSimPair(t, testLink, &Config{FollowNetwork: true}, 32)
	p.connect(t)
	s, _, _ := p.client.c.streams.openStream(true)
	simWrite(s, []byte("x")) // the stream is open both ways
	p.cnode.Wake()
	p.sim.RunFor(100 * time.Millisecond) // the handshake's last frames settle
	sent := p.client.sentOut
	p.sim.RunFor(time.Minute)
	// Probes at 0.25, 0.75, 1.75, 3.75, 7.75 s..., then no more often
	// than the 15 s keep-alive.
	if n := p.client.c.probes; n < 4 || n > 9 {
		t.Fatalf("%d path probes in an idle minute with a stream open", n)
	}
	if n := p.client.sentOut - sent; n > 30 {
		t.Fatalf("%d datagrams sent in an idle minute with a stream open", n)
	}
	if p.client.c.closeState != stateActive {
		t.Fatalf("connection closed: %v", p.client.c.closeErr)
	}
}
