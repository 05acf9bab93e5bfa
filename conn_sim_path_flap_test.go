package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// The NAT in front of the client rebinds to a new address and flips back
// before the client answered the server's challenge of the new address:
// the PATH_RESPONSE that validates the new address arrives from the old
// one. "A PATH_RESPONSE frame received on any network path validates the
// path on which the PATH_CHALLENGE was sent." (RFC 9000, Section 8.2.3)
// The server must end up sending to where the client is, on a path that
// is validated or being validated (Sections 9.3, 9.3.1, 9.3.2), and the
// download must complete.
func TestSimPathNATFlap(t *testing.T) {
	p := newSimPair(t, testLink, nil, 123)
	caddr := p.cnode.Addr()
	a1, a2 := netsim.Addr{Host: 1, Port: 40000}, netsim.Addr{Host: 1, Port: 40001}
	p.net.SetNAT(caddr, a1)
	watchPaths(t, p.server)
	p.connect(t)
	srv := p.server.c
	stage := 0
	answered := false
	p.client.c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		if stage == 1 && f.Type == wire.FrameTypePathChallenge {
			// The challenge of a2 reached the client; the NAT flips
			// back before the client answers.
			p.net.SetNAT(caddr, a1)
			stage++
		}
	}
	// The first datagram the server gets from a1 after the flip carries
	// the PATH_RESPONSE: the client's datagrams built before it are lost.
	cl := p.client.c
	p.client.dropOut = func(now time.Time, d []byte) bool {
		if stage != 2 || answered {
			return false
		}
		answered = !cl.activePath().responseToSend
		return !answered
	}
	simDownload(t, p, 4<<20, 60*time.Second, func(got int) {
		if stage == 0 && got > 1<<20 {
			p.net.SetNAT(caddr, a2)
			stage++
		}
		if stage == 2 {
			checkActivePath(t, srv)
		}
	})
	if stage != 2 {
		t.Fatalf("the flap did not happen: stage %d", stage)
	}
	if got := srv.activePath().addrs.remote; got != a1.AddrPort() {
		t.Errorf("server sends to %v, want %v", got, a1.AddrPort())
	}
	t.Logf("4 MiB with a NAT flap in %v; migrations %d; validations ok %d, failed %d",
		p.sim.Elapsed(), srv.paths.migrations, srv.paths.validationsOK, srv.paths.validationsFail)
}

// checkActivePath fails the test unless c's active path is in the table
// and validated or being validated: otherwise nothing gets the connection
// out of its anti-amplification limit (RFC 9000, Sections 9.3, 9.3.1).
func checkActivePath(t testing.TB, c *connState) {
	t.Helper()
	p := c.activePath()
	if !p.inUse || !(p.validated || p.validating) {
		t.Fatalf("%v: active path %v in use %v, validated %v, validating %v", c.role, p.addrs, p.inUse, p.validated, p.validating)
	}
}
