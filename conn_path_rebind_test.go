package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// NAT rebinding during a 10 MB download: the NAT in front of the client
// first gives it a new port, then a new address. RFC 9000, Section 9.3:
// "Receiving a packet from a new peer address containing a non-probing
// frame indicates that the peer has migrated to that address. If the
// recipient permits the migration, it MUST send subsequent packets to the
// new peer address and MUST initiate path validation". The interop
// runner's rebinding tests check that the server's first packet on each
// new path carries a PATH_CHALLENGE.
func TestSimPathNATRebinding(t *testing.T) {
	p := newSimPair(t, testLink, nil, 91)
	caddr := p.cnode.Addr()
	outside := []netsim.Addr{{Host: 1, Port: 40000}, {Host: 1, Port: 40001}, {Host: 3, Port: 40002}}
	p.net.SetNAT(caddr, outside[0])
	w := watchPaths(t, p.server)
	p.connect(t)
	srv := p.server.c
	seq0 := srv.peerIDs.curSeq
	cwnd0, cwndPort, cwndAddr := 0, 0, 0
	const size = 10 << 20
	stage := 0
	simDownload(t, p, size, 60*time.Second, func(got int) {
		remote := srv.activePath().addrs.remote
		switch {
		case stage == 1 && cwndPort == 0 && remote == outside[1].AddrPort():
			cwndPort = srv.ccw.cc.CongestionWindow()
		case stage == 2 && cwndAddr == 0 && remote == outside[2].AddrPort():
			cwndAddr = srv.ccw.cc.CongestionWindow()
		}
		switch {
		case stage == 0 && got > 3<<20:
			p.net.SetNAT(caddr, outside[1]) // port change
			stage++
		case stage == 1 && got > 6<<20:
			cwnd0 = srv.ccw.cc.CongestionWindow()
			p.net.SetNAT(caddr, outside[2]) // address change
			stage++
		}
	})
	if stage != 2 {
		t.Fatalf("transfer ended at stage %d", stage)
	}
	for _, a := range outside {
		challenge, ok := w.first[a]
		if !ok {
			t.Errorf("server never sent to %v", a)
		} else if a != outside[0] && !challenge {
			t.Errorf("server's first datagram to %v carried no PATH_CHALLENGE", a)
		}
	}
	if got := srv.activePath().addrs.remote; got != outside[2].AddrPort() {
		t.Errorf("server sends to %v, want %v", got, outside[2].AddrPort())
	}
	if !srv.activePath().validated {
		t.Error("the new path is not validated")
	}
	if srv.paths.migrations != 2 {
		t.Errorf("%d migrations, want 2", srv.paths.migrations)
	}
	// "different connection IDs are used when sending from different
	// local addresses" (RFC 9000, Section 9.5): the server used a fresh
	// connection ID of the client's on each new path and retired the old.
	if srv.peerIDs.curSeq < seq0+2 {
		t.Errorf("server's destination connection ID sequence %d, want at least %d", srv.peerIDs.curSeq, seq0+2)
	}
	if n := srv.peerIDs.activeCount(); n > int(srv.peerIDs.limit) {
		t.Errorf("%d active peer IDs", n)
	}
	// The old paths are forgotten.
	inUse := 0
	for i := range srv.paths.list {
		if srv.paths.list[i].inUse {
			inUse++
		}
	}
	if inUse != 1 {
		t.Errorf("server tracks %d paths, want 1", inUse)
	}
	// "On confirming a peer's ownership of its new address, an endpoint
	// MUST immediately reset the congestion controller and round-trip
	// time estimator for the new path to initial values ... unless the
	// only change in the peer's address is its port number." (RFC 9000,
	// Section 9.4) This endpoint keeps its state on a port change.
	if initial := 10 * srv.maxDatagramSize * 2; cwndAddr > initial || cwndAddr == 0 {
		t.Errorf("congestion window %d right after the address change (was %d): not reset", cwndAddr, cwnd0)
	}
	if cwndPort < 100_000 {
		t.Errorf("congestion window %d right after the port change: reset, though only the port changed", cwndPort)
	}
	t.Logf("10 MB with two rebindings in %v; window before the address change %d; challenges sent %d; validations ok %d, failed %d",
		p.sim.Elapsed(), cwnd0, srv.paths.challengesSent, srv.paths.validationsOK, srv.paths.validationsFail)
}
