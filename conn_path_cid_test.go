package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// The server raises Retire Prior To while the client probes a new path
// with a connection ID of its own: the client must stop using the retired
// one on the active path and move to an unused ID, not to the probe's,
// "An endpoint MUST NOT reuse a connection ID when sending from more than
// one local address" (RFC 9000, Section 9.5). Both paths keep sending.
func TestSimPathRetirePriorToDuringProbe(t *testing.T) {
	p := newSimPair(t, testLink, nil, 124)
	newAddr := netsim.Addr{Host: 6, Port: 7000}
	p.net.Connect(6, 2, testLink, testLink)
	p.cnode.AddAddr(newAddr)
	p.connect(t)
	watchConnIDs(t, p.client, 8, false)
	cl, srv := p.client.c, p.server.c
	target := pathAddrs{local: newAddr.AddrPort(), remote: cl.activePath().addrs.remote}
	// A probe that stays open for a while: the server does not answer it.
	p.server.dropIn = func(now time.Time, d *netsim.Datagram) bool { return d.Src == newAddr }
	if err := cl.probePath(p.sim.Now(), target, false, false, nil); err != nil {
		t.Fatal(err)
	}
	p.run(t, time.Second, func() bool { return cl.paths.challengesSent > 0 })
	probeSeq := cl.paths.list[cl.paths.find(target)].dcidSeq
	if ok, err := srv.localIDs.retirePriorTo(probeSeq); !ok || err != nil {
		t.Fatalf("retirePriorTo(%d): %v %v", probeSeq, ok, err)
	}
	simDownload(t, p, 256<<10, 10*time.Second, nil)
	if cl.peerIDs.curSeq < probeSeq {
		t.Fatalf("client still uses connection ID %d, retired by Retire Prior To %d", cl.peerIDs.curSeq, probeSeq)
	}
	if i := cl.paths.find(target); i >= 0 && cl.paths.list[i].hasDCID && cl.paths.list[i].dcidSeq == cl.peerIDs.curSeq {
		t.Errorf("the probe and the active path both hold connection ID %d", cl.peerIDs.curSeq)
	}
}

// With no unused connection ID of the client's left, the server follows a
// NAT rebinding with the ID in use: "Due to network changes outside the
// control of its peer, an endpoint might receive packets from a new
// source address with the same Destination Connection ID field value, in
// which case it MAY continue to use the current connection ID with the
// new remote address" (RFC 9000, Section 9.5). The challenge of the old
// path (Section 9.3.3) must not go out with that same ID: "An endpoint
// MUST NOT reuse a connection ID when sending to more than one destination
// address" (Section 9.5); it waits for an unused one.
func TestSimPathRebindWithoutSpareConnID(t *testing.T) {
	p := newSimPair(t, testLink, nil, 125)
	caddr := p.cnode.Addr()
	a1, a2 := netsim.Addr{Host: 1, Port: 40000}, netsim.Addr{Host: 1, Port: 40001}
	p.net.SetNAT(caddr, a1)
	p.connect(t)
	rebound := false
	w := watchConnIDs(t, p.server, 8, true)
	// The new path validates only after the server challenged the old
	// one more than once: what the client sends from a2 after its first
	// datagram is lost for a second.
	var fromA2 int
	var until time.Time
	p.server.dropIn = func(now time.Time, d *netsim.Datagram) bool {
		if d.Src != a2 {
			return false
		}
		if fromA2++; fromA2 == 1 {
			until = now.Add(time.Second)
			return false
		}
		return now.Before(until)
	}
	srv := p.server.c
	simDownload(t, p, 2<<20, 20*time.Second, func(got int) {
		if !rebound && got > 512<<10 {
			for i := range srv.peerIDs.ids {
				srv.peerIDs.ids[i].used = true // as if other paths had taken them
			}
			p.net.SetNAT(caddr, a2)
			rebound = true
		}
		checkActivePath(t, srv)
	})
	if got := srv.activePath().addrs.remote; got != a2.AddrPort() {
		t.Errorf("server sends to %v, want %v", got, a2.AddrPort())
	}
	if w.moved == 0 {
		t.Error("the server found an unused connection ID: the test did not exhaust them")
	}
}
