package quic

import (
	"testing"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// RFC 9001, Section 6.6: "In addition to counting packets sent, endpoints
// MUST count the number of received packets that fail authentication
// during the lifetime of a connection. If the total number of received
// packets that fail authentication within the connection, across all
// keys, exceeds the integrity limit for the selected AEAD, the endpoint
// MUST immediately close the connection with a connection error of type
// AEAD_LIMIT_REACHED and not process any more packets." Only 1-RTT
// failures were counted. With the limit lowered to 5 for the test (it is
// 2^52 for AES-GCM), three forged Handshake packets and three forged
// 1-RTT packets exceed it.
func TestSimIntegrityLimitAcrossKeys(t *testing.T) {
	p := newSimPair(t, testLink, nil, 160)
	runUntilClientHasHandshakeKeys(t, p)
	c, s := p.client.c, p.server.c
	forged := func(d []byte) []byte {
		d[len(d)-1] ^= 0xff // the AEAD tag
		return d
	}
	for range 3 {
		d, _ := sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceHandshake, s.localConnID, nil, []byte{byte(wire.FrameTypePing)})
		c.handleDatagram(p.sim.Now(), forged(d), ackhandler.NotECT)
	}
	if c.closeState != stateActive {
		t.Fatalf("client closed: %v", c.closeErr)
	}
	p.connect(t)
	if c.integrityLimit != 1<<52 {
		t.Fatalf("integrity limit %d, want AES-GCM's 2^52", c.integrityLimit)
	}
	c.integrityLimit = 5
	for range 3 {
		c.handleDatagram(p.sim.Now(), forged(sealTestPacket(s, p.sim.Now(), ackhandler.SpaceApplication, []byte{byte(wire.FrameTypePing)})), ackhandler.NotECT)
	}
	checkCloseErrors(t, p, wire.RoleClient,
		&TransportError{Code: wire.AEADLimitReached},
		&TransportError{Code: wire.AEADLimitReached, Remote: true})
}
