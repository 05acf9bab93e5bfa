package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// RFC 9000, Section 10.1: "An endpoint also restarts its idle timer when
// sending an ack-eliciting packet if no other ack-eliciting packets have
// been sent since last receiving and processing a packet. Restarting this
// timer when sending a packet ensures that connections are not closed
// after new activity is initiated." A request written 5 ms before the
// client's idle deadline must not be lost to an idle timeout before its
// reply arrives one round trip (20 ms) later.
func TestSimIdleTimerRestartsOnSend(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIdleTimeout: 30 * time.Second}, 120)
	p.connect(t)
	c := p.client.c
	// The server speaks last (a PING), so that the client's acknowledgment
	// is the last packet of the exchange: the server's idle deadline is
	// then later than the client's, and the request, sent 5 ms before the
	// client's deadline, reaches the server in time (RFC 9000, Section
	// 10.1.1: "An endpoint that sends packets close to the effective
	// timeout risks having them be discarded at the peer").
	p.sim.RunFor(time.Second)
	p.server.c.pingToSend = true
	p.snode.Wake()
	p.sim.RunFor(time.Second)
	deadline := c.idleDeadline
	if deadline.IsZero() || !p.server.c.idleDeadline.After(deadline.Add(5*time.Millisecond)) {
		t.Fatalf("idle deadlines: client %v, server %v", deadline, p.server.c.idleDeadline)
	}
	p.sim.RunFor(deadline.Add(-5 * time.Millisecond).Sub(p.sim.Now()))
	if c.closeState != stateActive {
		t.Fatalf("client closed before its idle deadline: %v", c.closeErr)
	}
	s, _, err := c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v", err)
	}
	simWrite(s, []byte("request"))
	s.closeWrite()
	p.cnode.Wake()
	var srv *stream
	buf := make([]byte, 64)
	reply := 0
	p.run(t, time.Second, func() bool {
		if c.closeState != stateActive {
			t.Fatalf("client closed %v after writing a request 5 ms before its idle deadline: %v", p.sim.Now().Sub(deadline), c.closeErr)
		}
		if srv == nil {
			srv, _, _ = p.server.c.streams.acceptStream(true)
			if srv != nil {
				simWrite(srv, []byte("reply"))
				srv.closeWrite()
			}
		}
		n, _ := simRead(s, buf)
		reply += n
		return reply == len("reply")
	})
	if !c.idleDeadline.After(deadline) {
		t.Errorf("idle deadline %v, not after the old one", c.idleDeadline.Sub(deadline))
	}
}

// The restart happens only for the first ack-eliciting packet sent after
// a packet was received: an endpoint that keeps sending to a silent peer
// (PING probes, data nobody acknowledges) still times out at the
// deadline that the last packet received and the first packet sent after
// it set, not later.
func TestSimIdleTimerNotRestartedBySendsAlone(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIdleTimeout: 5 * time.Second}, 121)
	p.connect(t)
	c := p.client.c
	p.sim.RunFor(time.Second)
	// The server goes silent: every datagram to it is lost.
	p.server.dropIn = func(time.Time, *netsim.Datagram) bool { return true }
	s, _, _ := c.streams.openStream(true)
	start := p.sim.Now()
	simWrite(s, []byte("first"))
	p.cnode.Wake()
	p.sim.RunFor(10 * time.Millisecond)
	limit := c.idleDeadline
	if !limit.After(start) || limit.Sub(start) > 5*time.Second+10*time.Millisecond {
		t.Fatalf("idle deadline %v after the write", limit.Sub(start))
	}
	// More data every 100 ms: none of it moves the deadline.
	for i := 0; c.closeState == stateActive && i < 100; i++ {
		simWrite(s, []byte("more"))
		p.cnode.Wake()
		p.sim.RunFor(100 * time.Millisecond)
		if c.closeState == stateActive && c.idleDeadline.After(limit) {
			t.Fatalf("sending alone moved the idle deadline by %v", c.idleDeadline.Sub(limit))
		}
	}
	if _, ok := c.closeErr.(*IdleTimeoutError); !ok {
		t.Fatalf("client ended with %v, want an idle timeout", c.closeErr)
	}
}

// RFC 9000, Section 10.1: "Each endpoint advertises a max_idle_timeout,
// but the effective value at an endpoint is computed as the minimum of
// the two advertised values". The client advertises 10 s, the server
// 30 s: both close after 10 s of silence, not 30.
func TestSimIdleTimeoutMinimumOfBoth(t *testing.T) {
	ctls, stls := testTLS(t)
	p := newSimPairOpts(t, testLink, 122, simPairOpts{
		client: &Config{MaxIdleTimeout: 10 * time.Second}, server: &Config{MaxIdleTimeout: 30 * time.Second},
		ctls: ctls, stls: stls,
	})
	p.connect(t)
	start := p.sim.Now()
	for _, c := range []*connState{p.client.c, p.server.c} {
		if c.idleTimeout != 10*time.Second {
			t.Errorf("%v: idle timeout %v, want 10 s", c.role, c.idleTimeout)
		}
	}
	p.run(t, 20*time.Second, p.bothClosed)
	if d := p.sim.Now().Sub(start); d < 10*time.Second || d > 11*time.Second {
		t.Errorf("closed %v after the handshake, want just over 10 s", d)
	}
	for _, c := range []*connState{p.client.c, p.server.c} {
		if _, ok := c.closeErr.(*IdleTimeoutError); !ok {
			t.Errorf("%v closed with %v", c.role, c.closeErr)
		}
	}
}

// RFC 9000, Section 10.1: "To avoid excessively small idle timeout
// periods, endpoints MUST increase the idle timeout period to be at least
// three times the current Probe Timeout (PTO)." On a path with a 2 s round
// trip the PTO is over 2 s: with an idle timeout of 3 s, the client closes
// no sooner than three PTOs after the last datagram it received.
func TestSimIdleTimeoutAtLeastThreePTO(t *testing.T) {
	link := linkWith(func(l *netsim.LinkConfig) { l.Delay = time.Second })
	p := newSimPair(t, link, &Config{MaxIdleTimeout: 3 * time.Second, HandshakeIdleTimeout: 20 * time.Second}, 123)
	var last time.Time // when the client last received a datagram
	p.client.dropIn = func(now time.Time, _ *netsim.Datagram) bool {
		last = now
		return false
	}
	p.connect(t)
	c := p.client.c
	p.run(t, time.Minute, func() bool { return c.closeState == stateClosed })
	if _, ok := c.closeErr.(*IdleTimeoutError); !ok {
		t.Fatalf("closed with %v", c.closeErr)
	}
	pto := c.rtt.PTO(true)
	if pto < 2*time.Second {
		t.Fatalf("PTO %v on a 2 s round trip", pto)
	}
	// The run loop looks every millisecond.
	if d := p.sim.Now().Sub(last); d < 3*pto-time.Millisecond {
		t.Errorf("closed %v after the last datagram received, before three PTOs (%v)", d, 3*pto)
	}
}
