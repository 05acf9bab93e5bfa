package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// "A client MUST discard any Version Negotiation packet if it has received
// and successfully processed any other packet, including an earlier
// Version Negotiation packet." (RFC 9000, Section 6.2) A Retry counts: a
// Version Negotiation packet arriving after it (late, from another server
// of a fleet, or forged by an attacker who saw the client's Initial) is
// ignored, and the handshake completes.
func TestSimVersionNegotiationAfterRetry(t *testing.T) {
	p := newSimPairOpts(t, testLink, 128, simPairOpts{retry: true})
	c := p.client.c
	p.run(t, 5*time.Second, func() bool { return c.hasRetried })
	vn := wire.AppendVersionNegotiation(nil, 0x55, c.localConnID.Bytes(), c.origDstConnID.Bytes(), []wire.Version{wire.Version2, 0x1a2a3a4a})
	c.handleDatagram(p.sim.Now(), vn, ackhandler.NotECT)
	if c.closeState != stateActive {
		t.Fatalf("client closed on a Version Negotiation packet after a Retry: %v", c.closeErr)
	}
	p.connect(t)
}
