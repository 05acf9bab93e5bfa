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

// While the server has not validated the address a NAT rebinding gave
// the client, it may send there only three times what it received (RFC
// 9000, Section 9.3.1). The PATH_CHALLENGE it sends again on its timer,
// when the first was lost, must find room: if data took the whole
// allowance and the client, which only receives, sent nothing more, the
// validation would fail and the server would return to the address the
// client left (the randomized path test found this with seed 851 and no
// keep-alive). Every datagram the server sends to the new address while
// a challenge is still to come leaves room for it.
func TestSimPathUnvalidatedKeepsChallengeRoom(t *testing.T) {
	p := newSimPair(t, testLink, nil, 132)
	caddr := p.cnode.Addr()
	a1, a2 := netsim.Addr{Host: 1, Port: 40000}, netsim.Addr{Host: 3, Port: 40001}
	p.net.SetNAT(caddr, a1)
	watchPaths(t, p.server)
	p.connect(t)
	srv := p.server.c
	seen, dropped, checked := 0, false, 0
	p.server.dropOut = func(now time.Time, d []byte) bool {
		n := srv.paths.challengesSent
		fresh := n > seen
		seen = n
		a := srv.activePath()
		if a.addrs.remote != a2.AddrPort() || srv.txPath != srv.paths.active {
			return false
		}
		if fresh && !dropped {
			dropped = true
			return true // the first challenge of a2 is lost
		}
		if !fresh && !a.validated && a.validating && !a.challengeToSend && a.nChallenges < maxPathChallenges {
			checked++
			if room := srv.pathAllowance(a); room < challengeReserve {
				t.Errorf("after a %d-byte datagram, %d bytes of allowance left for the challenge to come", len(d), room)
			}
		}
		return false
	}
	rebound := false
	simDownload(t, p, 2<<20, 30*time.Second, func(got int) {
		if !rebound && got > 512<<10 {
			rebound = true
			p.net.SetNAT(caddr, a2)
		}
	})
	if !dropped || checked == 0 {
		t.Fatalf("challenge dropped %v, datagrams checked %d", dropped, checked)
	}
	if a := srv.activePath(); a.addrs.remote != a2.AddrPort() || !a.validated {
		t.Errorf("server on %v, validated %v", a.addrs.remote, a.validated)
	}
}
