package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/netsim"
)

// The application-limited signal (RFC 9002, Section 7.8): "When bytes in
// flight is smaller than the congestion window and sending is not pacing
// limited, the congestion window is underutilized. This can happen due to
// insufficient application data or flow control limits. When this
// occurs, the congestion window SHOULD NOT be increased in either slow
// start or congestion avoidance." RFC 9438, Section 5.8: "CUBIC does not
// increase its congestion window if a flow is application-limited." BBR
// marks the connection application-limited (MarkConnectionAppLimited,
// draft-ietf-ccwg-bbr, Section 4.1.2.4) so that such rate samples do not
// lower its model.

// appLimitedLink is a 20 Mbit/s bottleneck with a 40 ms round trip and a
// queue of 50 datagrams, half the path's bandwidth-delay product: a
// window far above it floods the queue.
var appLimitedLink = netsim.LinkConfig{Bandwidth: 20_000_000, Delay: 20 * time.Millisecond, QueuePackets: 50}

// appLimitedControllers are the controllers the tests run, with the
// largest window each may reach while application-limited, given the
// window after the handshake and the maximum datagram size: NewReno's and
// Cubic's initial window, recalculated as path MTU discovery raises the
// datagram size ("If the maximum datagram size changes during the
// connection, the initial congestion window SHOULD be recalculated with
// the new size", RFC 9002, Section 7.2); BBR's grows by the bytes
// acknowledged until one initial window was delivered ("else if (C.cwnd <
// BBR.max_inflight || C.delivered < InitialCwnd) C.cwnd = C.cwnd +
// RS.newly_acked", draft-ietf-ccwg-bbr, Section 5.6.4.4), and no further.
var appLimitedControllers = []struct {
	name    string
	f       congestion.ControllerFactory
	allowed func(before, mds int) int
}{
	{"cubic", congestion.NewCubic, func(before, mds int) int { return max(before, congestion.InitialWindow(mds, 0)) }},
	{"newreno", congestion.NewNewReno, func(before, mds int) int { return max(before, congestion.InitialWindow(mds, 0)) }},
	{"bbr", congestion.NewBBR, func(before, mds int) int { return before + congestion.InitialWindow(mds, 0) }},
}

// cwndWatch records a connection's congestion window during a phase:
// where it started, its maximum, its value one second in and its maximum
// from then on.
type cwndWatch struct {
	start              time.Time
	before, max        int
	atOneSecond, later int
}

func watchCwnd(c *connState, now time.Time) *cwndWatch {
	w := c.cc.CongestionWindow()
	return &cwndWatch{start: now, before: w, max: w}
}

func (w *cwndWatch) step(c *connState, now time.Time) {
	cwnd := c.cc.CongestionWindow()
	w.max = max(w.max, cwnd)
	if now.Sub(w.start) < time.Second {
		w.atOneSecond = cwnd
		return
	}
	w.later = max(w.later, cwnd)
}

// check reports growth of the window beyond what allowed permits, or
// after the phase's first second.
func (w *cwndWatch) check(t *testing.T, c *connState, allowed func(before, mds int) int) {
	t.Helper()
	if limit := allowed(w.before, c.maxDatagramSize); w.max > limit {
		t.Errorf("the window grew from %d to %d bytes (at most %d allowed) while the connection was application-limited", w.before, w.max, limit)
	}
	if w.later > w.atOneSecond {
		t.Errorf("the window grew from %d to %d bytes after the first second of an application-limited phase", w.atOneSecond, w.later)
	}
}

// appLimitedResult is what one run of appLimitedRun measured.
type appLimitedResult struct {
	cwnd  *cwndWatch    // during the request/response phase
	drops int64         // queue drops on the client's link during the bulk transfer
	bulk  time.Duration // the bulk transfer's duration
}

// appLimitedRun connects a pair using the controller f. With requests, the
// client first writes a 1,000-byte request every 20 ms for 10 s, which the
// server reads and answers with 1,000 bytes; then the client writes
// bulkSize bytes on a new stream, and the run ends when the server has
// read them all. The window during the requests must stay within
// allowed (see cwndWatch.check).
func appLimitedRun(t *testing.T, f congestion.ControllerFactory, allowed func(before, mds int) int, requests bool, bulkSize int) appLimitedResult {
	t.Helper()
	p := newSimPair(t, appLimitedLink, &Config{Congestion: f}, 77)
	p.connect(t)
	c := p.client.c
	var r appLimitedResult
	if requests {
		r.cwnd = watchCwnd(c, p.sim.Now())
		s, _, err := c.streams.openStream(true)
		if err != nil || s == nil {
			t.Fatalf("openStream: %v", err)
		}
		var srv *stream
		req := make([]byte, 1000)
		buf := make([]byte, 4096)
		next := p.sim.Now()
		end := next.Add(10 * time.Second)
		sent, answered, received := 0, 0, 0
		p.run(t, 15*time.Second, func() bool {
			now := p.sim.Now()
			if now.Before(end) && !now.Before(next) {
				if n := simWrite(s, req); n != len(req) {
					t.Fatalf("request write took %d bytes", n)
				}
				sent += len(req)
				next = next.Add(20 * time.Millisecond)
			}
			if srv == nil {
				srv, _, _ = p.server.c.streams.acceptStream(true)
			}
			if srv != nil {
				for {
					n, _ := simRead(srv, buf)
					if n == 0 {
						break
					}
					answered += n
					simWrite(srv, buf[:n]) // the response
				}
			}
			for {
				n, _ := simRead(s, buf)
				if n == 0 {
					break
				}
				received += n
			}
			r.cwnd.step(c, now)
			return !now.Before(end) && received == sent
		})
		if answered != sent {
			t.Fatalf("server read %d of %d request bytes", answered, sent)
		}
	}
	dropsBefore := p.path.AB.Stats().DroppedQueue
	start := p.sim.Now()
	s, _, err := c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v", err)
	}
	w := newPatternWriter(s, 1, bulkSize)
	var rd *patternReader
	p.run(t, 60*time.Second, func() bool {
		w.step()
		for rd == nil {
			srv, _, _ := p.server.c.streams.acceptStream(true)
			if srv == nil {
				break
			}
			if srv.id == s.id {
				rd = newPatternReader(t, srv, 1)
			}
		}
		return rd != nil && rd.step(0)
	})
	r.bulk = p.sim.Now().Sub(start)
	r.drops = p.path.AB.Stats().DroppedQueue - dropsBefore
	if c.closeState != stateActive {
		t.Fatalf("client closed: %v", c.closeErr)
	}
	if r.cwnd != nil {
		r.cwnd.check(t, c, allowed)
	}
	return r
}

// TestSimAppLimitedWindow runs request/response traffic, then a bulk
// transfer, for each controller: the window must not grow while the
// connection sends far less than it allows, and the bulk transfer after
// that phase must lose no more datagrams at the bottleneck than the same
// transfer on a fresh connection, nor take much longer. Without the
// signal, Cubic's and NewReno's windows grew from 15 KB to 548 KB, still
// in slow start, and the bulk transfer lost 541 (Cubic) and 373
// (NewReno) datagrams at the bottleneck against 74 and 133 on a fresh
// connection; BBR's model shrank to the requests' rate, and the transfer
// took 2.5 s against 1.4 s.
func TestSimAppLimitedWindow(t *testing.T) {
	const bulkSize = 3 << 20
	for _, tc := range appLimitedControllers {
		t.Run(tc.name, func(t *testing.T) {
			fresh := appLimitedRun(t, tc.f, tc.allowed, false, bulkSize)
			after := appLimitedRun(t, tc.f, tc.allowed, true, bulkSize)
			w := after.cwnd
			t.Logf("window %d -> %d at 1 s -> max %d bytes during 10 s of requests; 3 MB bulk: %d queue drops in %v after them, %d in %v on a fresh connection",
				w.before, w.atOneSecond, w.max, after.drops, after.bulk, fresh.drops, fresh.bulk)
			if after.drops > fresh.drops {
				t.Errorf("the bulk transfer after request/response traffic caused %d queue drops, %d on a fresh connection", after.drops, fresh.drops)
			}
			if after.bulk > fresh.bulk+fresh.bulk/10 {
				t.Errorf("the bulk transfer after request/response traffic took %v, %v on a fresh connection", after.bulk, fresh.bulk)
			}
		})
	}
}

// TestSimFlowControlLimitedWindow: a sender held back by the peer's flow
// control, with data waiting, underuses its window as an idle application
// does ("This can happen due to insufficient application data or flow
// control limits", RFC 9002, Section 7.8): its window must not grow.
// The server reads 2,000 bytes every 20 ms from a stream whose receive
// window is 8 KiB, below the initial congestion window; the client always
// has more to write. Without the signal, each controller's window grew
// on every acknowledgment (NewReno and Cubic to about 1.5 MB).
func TestSimFlowControlLimitedWindow(t *testing.T) {
	for _, tc := range appLimitedControllers {
		t.Run(tc.name, func(t *testing.T) {
			ctls, stls := testTLS(t)
			p := newSimPairOpts(t, appLimitedLink, 78, simPairOpts{
				client: &Config{Congestion: tc.f},
				server: &Config{InitialStreamReceiveWindow: 8 << 10, MaxStreamReceiveWindow: 8 << 10},
				ctls:   ctls, stls: stls,
			})
			p.connect(t)
			c := p.client.c
			s, _, err := c.streams.openStream(true)
			if err != nil || s == nil {
				t.Fatalf("openStream: %v", err)
			}
			w := newPatternWriter(s, 2, 64<<20)
			var rd *patternReader
			watch := watchCwnd(c, p.sim.Now())
			next := p.sim.Now()
			end := next.Add(10 * time.Second)
			p.run(t, 11*time.Second, func() bool {
				now := p.sim.Now()
				w.step()
				if rd == nil {
					if srv, _, _ := p.server.c.streams.acceptStream(true); srv != nil {
						rd = newPatternReader(t, srv, 2)
					}
				}
				if rd != nil && !now.Before(next) {
					rd.step(2000)
					next = next.Add(20 * time.Millisecond)
				}
				watch.step(c, now)
				return !now.Before(end)
			})
			t.Logf("window %d -> %d at 1 s -> max %d bytes; %d bytes read in 10 s", watch.before, watch.atOneSecond, watch.max, rd.got)
			if rd.got < 800_000 {
				t.Errorf("the server read %d bytes in 10 s, want most of the 1 MB it asked for", rd.got)
			}
			if c.closeState != stateActive {
				t.Fatalf("client closed: %v", c.closeErr)
			}
			watch.check(t, c, tc.allowed)
		})
	}
}
