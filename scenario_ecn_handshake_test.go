package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
)

// dropECT makes e lose every datagram marked ECT(0) or ECT(1) that reaches
// it, as a middlebox that drops ECN-capable packets does, and counts them.
func dropECT(e *simEndpoint) *int {
	n := new(int)
	e.dropIn = func(_ time.Time, d *netsim.Datagram) bool {
		if d.ECN.IsECT() {
			*n++
			return true
		}
		return false
	}
	return n
}

// A path that drops ECT(0)-marked packets, in either direction: the
// handshake completes within a PTO or two of the first flight, instead of
// failing after the handshake timeout (RFC 9000, Section 13.4.2: "Network
// routing and path elements can change mid-connection; an endpoint MUST
// disable ECN if validation later fails"; a path that loses every marked
// packet fails validation), and ECN validation fails on the side whose
// marked packets were lost, which then sends unmarked packets. On a path
// that carries marks, both sides end capable.
func TestSimECNHandshakeOnECTDroppingPath(t *testing.T) {
	for _, dir := range []string{"client to server", "server to client", "none"} {
		t.Run(dir, func(t *testing.T) {
			p := newSimPairOpts(t, testLink, 140, simPairOpts{config: &Config{HandshakeIdleTimeout: 60 * time.Second}, ecn: true})
			var dropped *int
			switch dir {
			case "client to server":
				dropped = dropECT(p.server)
			case "server to client":
				dropped = dropECT(p.client)
			default:
				dropped = new(int)
			}
			p.run(t, 60*time.Second, p.confirmed)
			el := p.sim.Elapsed()
			var capable time.Duration
			simDownload(t, p, 1<<20, 10*time.Second, func(int) {
				if capable == 0 && p.client.c.sent.ECNState() == ackhandler.ECNCapable && p.server.c.sent.ECNState() == ackhandler.ECNCapable {
					capable = p.sim.Elapsed()
				}
			})
			t.Logf("1 MiB downloaded at %v; both sides ECN-capable at %v", p.sim.Elapsed(), capable)
			cs, ss := p.client.c.sent.ECNState(), p.server.c.sent.ECNState()
			t.Logf("%s: handshake confirmed after %v; %d marked datagrams dropped; ECN client %v, server %v",
				dir, el, *dropped, cs, ss)
			switch dir {
			case "client to server":
				if cs != ackhandler.ECNFailed || ss != ackhandler.ECNCapable {
					t.Errorf("ECN client %v, server %v; want failed, capable", cs, ss)
				}
			case "server to client":
				if ss != ackhandler.ECNFailed || cs != ackhandler.ECNCapable {
					t.Errorf("ECN client %v, server %v; want capable, failed", cs, ss)
				}
			default:
				if cs != ackhandler.ECNCapable || ss != ackhandler.ECNCapable {
					t.Errorf("ECN client %v, server %v; want capable on both sides", cs, ss)
				}
			}
			if dir != "none" && *dropped == 0 {
				t.Error("no marked datagram was dropped")
			}
			if el > 3*time.Second {
				t.Errorf("handshake confirmed after %v on a 20 ms path", el)
			}
		})
	}
}
