package quic

import (
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// A client moves its connection to a new local address in the middle of a
// download: it probes the new path (RFC 9000, Section 9.1), switches once
// the server's PATH_RESPONSE validated it, with a connection ID of the
// server's not used before, and retires the old one (Section 9.5). The
// server follows, validates the client's new address, and the old
// address can disappear.
func TestSimPathClientMigration(t *testing.T) {
	p := newSimPair(t, testLink, nil, 95)
	newAddr := netsim.Addr{Host: 6, Port: 7000}
	p.net.Connect(6, 2, testLink, testLink)
	p.cnode.AddAddr(newAddr)
	w := watchPaths(t, p.server)
	p.connect(t)
	cl, srv := p.client.c, p.server.c
	old := cl.activePath().addrs
	oldSeq := cl.peerIDs.curSeq
	target := pathAddrs{local: newAddr.AddrPort(), remote: old.remote}
	var outcome []bool
	stage := 0
	simDownload(t, p, 4<<20, 30*time.Second, func(got int) {
		switch {
		case stage == 0 && got > 1<<20:
			if err := cl.probePath(p.sim.Now(), target, false, false, func(ok bool) { outcome = append(outcome, ok) }); err != nil {
				t.Fatalf("probePath: %v", err)
			}
			if err := cl.switchPath(p.sim.Now(), target); err == nil {
				t.Fatal("switched to a path not validated")
			}
			stage++
		case stage == 1 && len(outcome) > 0:
			if !outcome[0] {
				t.Fatal("new path did not validate")
			}
			// Probing alone does not move the server.
			if srv.activePath().addrs.remote != old.local {
				t.Fatalf("server moved to %v on a probe", srv.activePath().addrs.remote)
			}
			if err := cl.switchPath(p.sim.Now(), target); err != nil {
				t.Fatalf("switchPath: %v", err)
			}
			stage++
		case stage == 2 && srv.activePath().addrs.remote == newAddr.AddrPort() && srv.activePath().validated:
			p.cnode.RemoveAddr(p.cnode.Addrs()[0]) // the old address goes away
			stage++
		}
	})
	if stage != 3 {
		t.Fatalf("transfer ended at stage %d", stage)
	}
	if cl.activePath().addrs != target {
		t.Errorf("client on %v, want %v", cl.activePath().addrs, target)
	}
	if cl.peerIDs.curSeq == oldSeq {
		t.Error("client kept its destination connection ID on the new path")
	}
	if _, ok := cl.peerIDs.bySeq(oldSeq); ok {
		t.Error("client did not retire the old path's connection ID")
	}
	// The server answered the probe on the new path, then validated the
	// client's new address itself once the client moved.
	if w.sent[newAddr] == 0 || !srv.activePath().validated {
		t.Errorf("server sent %d bytes to the new address, validated %v", w.sent[newAddr], srv.activePath().validated)
	}
	t.Logf("migrated in %v; server challenges %d, validations ok %d, failed %d", p.sim.Elapsed(),
		srv.paths.challengesSent, srv.paths.validationsOK, srv.paths.validationsFail)
}

// "If the peer sent the disable_active_migration transport parameter, an
// endpoint also MUST NOT send packets (including probing packets; see
// Section 9.1) from a different local address" (RFC 9000, Section 9).
func TestSimPathMigrationDisabled(t *testing.T) {
	p := newSimPair(t, testLink, &Config{DisableActiveMigration: true}, 96)
	p.connect(t)
	cl := p.client.c
	target := pathAddrs{local: netsim.Addr{Host: 1, Port: 5001}.AddrPort(), remote: cl.activePath().addrs.remote}
	if err := cl.probePath(p.sim.Now(), target, false, true, nil); !errors.Is(err, ErrMigrationDisabled) {
		t.Fatalf("probePath: %v, want ErrMigrationDisabled", err)
	}
	if err := p.server.c.probePath(p.sim.Now(), target, false, true, nil); err == nil {
		t.Fatal("a server started a migration")
	}
}

// The server offers a preferred address (RFC 9000, Section 9.6): once the
// handshake is confirmed, the client validates it and moves there with
// the connection ID of sequence number 1; the server takes the client's
// packets at that address, and the transfer runs on it.
func TestSimPathPreferredAddress(t *testing.T) {
	p := newSimPair(t, testLink, nil, 97)
	pref := netsim.Addr{Host: 5, Port: 8443}
	p.net.Connect(1, 5, testLink, testLink)
	p.snode.AddAddr(pref)
	p.server.preferred = &wire.PreferredAddress{IPv4: pref.AddrPort()}
	p.connect(t)
	cl := p.client.c
	p.run(t, 5*time.Second, func() bool { return cl.activePath().addrs.remote == pref.AddrPort() })
	if cl.peerIDs.curSeq != 1 {
		t.Errorf("client uses connection ID %d on the preferred address, want 1", cl.peerIDs.curSeq)
	}
	received := 0
	p.server.dropIn = func(now time.Time, d *netsim.Datagram) bool {
		if d.Dst != pref {
			received++
		}
		return false
	}
	simDownload(t, p, 1<<20, 10*time.Second, nil)
	srv := p.server.c
	if got := srv.activePath().addrs.local; got != pref.AddrPort() {
		t.Errorf("server sends from %v, want %v", got, pref.AddrPort())
	}
	if received > 2 {
		t.Errorf("server got %d datagrams at its old address during the transfer", received)
	}
}

// A probe of a path that carries nothing fails after the validation timer
// (RFC 9000, Section 8.2.4: "three times the larger of the current PTO or
// the PTO for the new path"), the connection stays where it was, and the
// connection ID the probe used is retired: "Failure of path validation
// simply means that the new path is not usable for this connection."
// (Section 9.1)
func TestSimPathProbeFails(t *testing.T) {
	p := newSimPair(t, testLink, nil, 101)
	dead := netsim.Addr{Host: 7, Port: 7000} // no route from host 7
	p.cnode.AddAddr(dead)
	p.connect(t)
	cl := p.client.c
	old := cl.activePath().addrs
	target := pathAddrs{local: dead.AddrPort(), remote: old.remote}
	var outcome []bool
	start := p.sim.Now()
	if err := cl.probePath(start, target, false, true, func(ok bool) { outcome = append(outcome, ok) }); err != nil {
		t.Fatal(err)
	}
	seq := cl.paths.list[cl.paths.find(target)].dcidSeq
	p.run(t, 10*time.Second, func() bool { return len(outcome) > 0 })
	if outcome[0] {
		t.Fatal("a dead path validated")
	}
	if el := p.sim.Now().Sub(start); el < 3*time.Second {
		t.Errorf("gave up after %v, before three initial PTOs", el)
	}
	if cl.activePath().addrs != old || cl.closeState != stateActive {
		t.Fatalf("client on %v, state %v", cl.activePath().addrs, cl.closeState)
	}
	if _, ok := cl.peerIDs.bySeq(seq); ok {
		t.Error("the probe's connection ID was not retired")
	}
	simDownload(t, p, 256<<10, 5*time.Second, nil)
}

// "The server MUST send non-probing packets from its original address
// until it receives a non-probing packet from the client at its preferred
// address and until the server has validated the new path." (RFC 9000,
// Section 9.6.2) Until then only probing packets (its PATH_CHALLENGE and
// PATH_RESPONSE) leave the preferred address; the download goes on.
func TestSimPathPreferredAddressValidatedFirst(t *testing.T) {
	p := newSimPair(t, testLink, nil, 129)
	pref := netsim.Addr{Host: 5, Port: 8443}
	p.net.Connect(1, 5, testLink, testLink)
	p.snode.AddAddr(pref)
	p.server.preferred = &wire.PreferredAddress{IPv4: pref.AddrPort()}
	early, probes := 0, 0
	p.server.onSend = func(from, to netsim.Addr, d []byte, challenge bool) {
		srv := p.server.c
		if from != pref || srv == nil {
			return
		}
		i := srv.paths.find(pathAddrs{local: from.AddrPort(), remote: to.AddrPort()})
		switch {
		case i < 0:
			t.Errorf("server sent from its preferred address on a path it does not know")
		case srv.paths.list[i].validated:
		case i == srv.paths.active:
			early++ // the active path's packets: ACK, STREAM ... frames
		default:
			probes++
		}
	}
	p.connect(t)
	simDownload(t, p, 2<<20, 10*time.Second, nil)
	srv := p.server.c
	if got := srv.activePath().addrs.local; got != pref.AddrPort() || !srv.activePath().validated {
		t.Errorf("server sends from %v, validated %v; want %v, validated", got, srv.activePath().validated, pref.AddrPort())
	}
	if early > 0 {
		t.Errorf("server sent %d non-probing datagrams from its preferred address before validating the path", early)
	}
	if probes == 0 {
		t.Error("server never probed the path from its preferred address (\"The server MUST probe on the path toward the client from its preferred address\")")
	}
}

// After the client moved to a new local address, the server's packets
// still on their way to the old one arrive: the client processes them
// (they come from the server's address, which it knows: "If a client
// receives packets from an unknown server address, the client MUST
// discard these packets", RFC 9000, Section 9), instead of leaving the
// data they carry for the server to send again.
func TestSimPathClientMigrationKeepsInFlight(t *testing.T) {
	p := newSimPair(t, testLink, nil, 130)
	newAddr := netsim.Addr{Host: 6, Port: 7000}
	p.net.Connect(6, 2, testLink, testLink)
	p.cnode.AddAddr(newAddr)
	p.connect(t)
	cl := p.client.c
	oldLocal := cl.activePath().addrs.local
	late := 0
	cl.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		if f.Type.IsStream() && cl.activePath().addrs.local == newAddr.AddrPort() && cl.rxPath().addrs.local == oldLocal {
			late++
		}
	}
	moved := false
	simDownload(t, p, 4<<20, 30*time.Second, func(got int) {
		if !moved && got > 1<<20 {
			target := pathAddrs{local: newAddr.AddrPort(), remote: cl.activePath().addrs.remote}
			if err := cl.probePath(p.sim.Now(), target, false, true, nil); err != nil {
				t.Fatal(err)
			}
			moved = true
		}
	})
	if cl.activePath().addrs.local != newAddr.AddrPort() {
		t.Fatalf("client on %v", cl.activePath().addrs)
	}
	if late == 0 {
		t.Error("the client processed no STREAM frame that reached its old address after it moved")
	}
	t.Logf("%d STREAM frames processed from the old address after the move; server declared %d packets lost", late, p.server.c.sent.LostPackets())
}
