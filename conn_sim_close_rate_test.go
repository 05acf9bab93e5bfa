package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// RFC 9000, Section 10.2.1: an endpoint in the closing state "SHOULD limit
// the rate at which it generates packets in the closing state". 64
// datagrams arriving after the close get 7 answers (1st, 2nd, 4th, ... 64th).
func TestClosingStateRateLimited(t *testing.T) {
	p := newSimPair(t, testLink, nil, 31)
	p.connect(t)
	c := p.server.c
	now := p.sim.Now()
	c.closeApplication(now, 1, "bye")
	buf := make([]byte, 0, 1500)
	if d := c.pollTransmit(now, buf); d == nil {
		t.Fatal("no CONNECTION_CLOSE sent on closing")
	}
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
