package quic

import (
	"bytes"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// closingServer connects a simulated pair and closes the server's
// connection, returning it, the time and its CONNECTION_CLOSE datagram.
func closingServer(t *testing.T, seed uint64) (*simPair, *connState, time.Time, []byte) {
	t.Helper()
	p := newSimPair(t, testLink, nil, seed)
	p.connect(t)
	c := p.server.c
	now := p.sim.Now()
	c.closeApplication(now, 1, "bye")
	first := c.pollTransmit(now, make([]byte, 0, 1500))
	if first == nil {
		t.Fatal("no CONNECTION_CLOSE sent on closing")
	}
	return p, c, now, first
}

// RFC 9000, Section 10.2.1: an endpoint in the closing state "SHOULD limit
// the rate at which it generates packets in the closing state". 64
// datagrams arriving after the close get 7 answers (1st, 2nd, 4th, ... 64th).
func TestClosingStateRateLimited(t *testing.T) {
	p, c, now, _ := closingServer(t, 31)
	buf := make([]byte, 0, 1500)
	answers := 0
	for i := 0; i < 64; i++ {
		pkt := sealTestPacket(p.client.c, now, ackhandler.SpaceApplication, []byte{byte(wire.FrameTypePing)})
		c.handleDatagram(now, pkt, ackhandler.NotECT)
		if d := c.pollTransmit(now, buf); d != nil {
			answers++
		}
		now = now.Add(time.Millisecond)
	}
	if answers != 7 {
		t.Fatalf("answered %d of 64 datagrams in the closing state; want 7", answers)
	}
}

// Once its CONNECTION_CLOSE datagram is built, a closing connection keeps
// that datagram and lets go of TLS, keys and packet records ("the endpoint
// MAY discard all other connection state", RFC 9000, Section 10.2.1); it
// answers later datagrams with the exact same bytes. Its peer, draining,
// lets go of the same once it has processed the close. Statistics stay.
func TestClosedStateReleased(t *testing.T) {
	p := newSimPair(t, testLink, nil, 32)
	p.connect(t)
	c, peer := p.server.c, p.client.c
	now := p.sim.Now()
	c.closeApplication(now, 1, "bye")
	first := c.pollTransmit(now, make([]byte, 0, 1500))
	if first == nil {
		t.Fatal("no CONNECTION_CLOSE sent on closing")
	}
	first = append([]byte(nil), first...)
	released := func(name string, c *connState) {
		t.Helper()
		if !c.closing.released || c.oneRTT != nil || c.tls.ConnectionState().NegotiatedProtocol == "" {
			t.Errorf("%s: released %v, 1-RTT keys %v, ALPN %q", name, c.closing.released, c.oneRTT != nil, c.tls.ConnectionState().NegotiatedProtocol)
		}
		for s := range c.spaces {
			if sp := &c.spaces[s]; sp.seal != nil || sp.open != nil || sp.recv != nil || sp.crypto != nil {
				t.Errorf("%s: space %d keeps keys or records", name, s)
			}
		}
		if !c.mayPark() {
			t.Errorf("%s: may not park", name)
		}
	}
	released("closing", c)
	if s := c.stats(); s.PacketsSent == 0 || s.BytesSent == 0 {
		t.Errorf("statistics lost: %+v", s)
	}
	pkt := sealTestPacket(peer, now, ackhandler.SpaceApplication, []byte{byte(wire.FrameTypePing)})
	c.handleDatagram(now, pkt, ackhandler.NotECT)
	if again := c.pollTransmit(now, make([]byte, 0, 1500)); !bytes.Equal(again, first) {
		t.Errorf("closing state answered with %x, want the first CONNECTION_CLOSE datagram %x", again, first)
	}
	peer.handleDatagram(now, first, ackhandler.NotECT)
	if peer.closeState != stateDraining {
		t.Fatalf("peer in state %d after CONNECTION_CLOSE, want draining", peer.closeState)
	}
	if d := peer.pollTransmit(now, make([]byte, 0, 1500)); d != nil {
		t.Errorf("draining peer sent %d bytes", len(d))
	}
	released("draining", peer)
}

// RFC 9000, Section 10.2.1: a closing endpoint that dropped its keys
// answers any datagram, so it "MUST limit the cumulative size of packets
// it sends to three times the cumulative size of the packets that are
// received". Datagrams of 10 bytes to a connection whose CONNECTION_CLOSE
// datagram is larger get an answer only once 3 times their bytes cover it.
func TestClosingStateAmplificationLimited(t *testing.T) {
	_, c, now, first := closingServer(t, 33)
	size := len(first)
	var answered []int
	var rx, tx int
	for i := 1; i <= 64; i++ {
		small := make([]byte, 10)
		small[0] = 0x40
		c.handleDatagram(now, small, ackhandler.NotECT)
		rx += len(small)
		if d := c.pollTransmit(now, make([]byte, 0, 1500)); d != nil {
			answered = append(answered, i)
			tx += len(d)
		}
	}
	if tx > 3*rx {
		t.Errorf("sent %d bytes for %d received, more than 3 times", tx, rx)
	}
	// Without the limit, the 1st, 2nd, 4th ... 64th are answered.
	if len(answered) == 0 || answered[0] == 1 {
		t.Errorf("%d-byte CONNECTION_CLOSE datagram: answered datagrams %v, want none before 3 times 10 bytes per datagram covered it", size, answered)
	}
}
