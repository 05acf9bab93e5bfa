package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// simAttacker is a host that forwards copies of packets it observed from
// its own address and reads what comes back, but cannot decrypt it.
type simAttacker struct {
	to       netsim.Addr
	send     [][]byte
	got, len int
}

func (a *simAttacker) HandleDatagram(now time.Time, d *netsim.Datagram) {
	a.got++
	a.len += len(d.Payload)
}
func (a *simAttacker) HandleTimeout(time.Time) {}
func (a *simAttacker) PollTransmit(now time.Time, out *netsim.Outbox) {
	for _, d := range a.send {
		out.Send(a.to, d, netsim.NotECT)
	}
	a.send = nil
}
func (a *simAttacker) NextDeadline() time.Time { return time.Time{} }

// An off-path attacker forwards a copy of one of the client's packets from
// its own address, faster than the original (RFC 9000, Section 9.3.3).
// The server takes it for a migration, but may send the attacker no more
// than three times what it received (Section 9.3.1), validates the old
// path too ("In response to an apparent migration, endpoints MUST validate
// the previously active path using a PATH_CHALLENGE frame"), and returns
// to it when the client's next non-probing packet arrives from there. The
// download goes on undisturbed.
func TestSimPathSpoofedAddress(t *testing.T) {
	p := newSimPair(t, testLink, nil, 92)
	w := watchPaths(t, p.server)
	attacker := &simAttacker{to: p.snode.Addr()}
	evil := netsim.Addr{Host: 4, Port: 666}
	fast := netsim.LinkConfig{Delay: time.Millisecond}
	p.net.Connect(4, 2, fast, fast)
	anode := p.net.Attach(evil, attacker)
	p.connect(t)
	srv := p.server.c
	real := srv.activePath().addrs.remote
	forwarded := 0
	received := 0
	p.client.onSend = func(from, to netsim.Addr, d []byte, _ bool) {
		if forwarded == 0 && received > 1<<20 {
			attacker.send = append(attacker.send, append([]byte(nil), d...))
			anode.Wake()
			forwarded++
		}
	}
	sawAttacker := false
	simDownload(t, p, 4<<20, 30*time.Second, func(got int) {
		received = got
		if srv.activePath().addrs.remote == evil.AddrPort() {
			sawAttacker = true
		}
	})
	if forwarded == 0 || !sawAttacker {
		t.Fatalf("attack did not happen: forwarded %d, server moved to the attacker %v", forwarded, sawAttacker)
	}
	if got := srv.activePath().addrs.remote; got != real {
		t.Fatalf("server sends to %v, want the client's %v", got, real)
	}
	if attacker.len > 3*w.recv[evil] {
		t.Errorf("attacker got %d bytes for %d sent", attacker.len, w.recv[evil])
	}
	if !w.first[evil] {
		t.Error("server's first datagram to the attacker carried no PATH_CHALLENGE")
	}
	// The attacker's path fails validation and is forgotten.
	p.sim.RunFor(10 * time.Second)
	if i := srv.paths.find(pathAddrs{remote: evil.AddrPort()}); i >= 0 {
		t.Errorf("server still tracks the attacker's path: %+v", srv.paths.list[i])
	}
	if srv.closeState != stateActive {
		t.Fatalf("server closed: %v", srv.closeErr)
	}
	t.Logf("attacker received %d datagrams, %d bytes, for %d bytes; migrations %d, validations ok %d, failed %d",
		attacker.got, attacker.len, w.recv[evil], srv.paths.migrations, srv.paths.validationsOK, srv.paths.validationsFail)
}

// The attacker forwards a client packet while the client is out of reach
// (it neither receives nor sends for a while), so that the client answers
// no challenge: the validation of the attacker's address fails, and the
// server reverts to the client's address: "an endpoint MUST revert to
// using the last validated peer address when validation of a new peer
// address fails" (RFC 9000, Section 9.3.2). When the client is back, the
// connection works.
func TestSimPathSpoofRevert(t *testing.T) {
	p := newSimPair(t, testLink, nil, 98)
	attacker := &simAttacker{to: p.snode.Addr()}
	evil := netsim.Addr{Host: 4, Port: 666}
	fast := netsim.LinkConfig{Delay: time.Millisecond}
	p.net.Connect(4, 2, fast, fast)
	anode := p.net.Attach(evil, attacker)
	p.connect(t)
	srv, cl := p.server.c, p.client.c
	real := srv.activePath().addrs.remote
	var back time.Time
	out := func(now time.Time) bool { return !back.IsZero() && now.Before(back) }
	p.client.dropOut = func(now time.Time, d []byte) bool {
		if back.IsZero() {
			attacker.send = append(attacker.send, append([]byte(nil), d...))
			anode.Wake()
			back = now.Add(6 * time.Second)
			return true
		}
		return out(now)
	}
	p.client.dropIn = func(now time.Time, d *netsim.Datagram) bool { return out(now) }
	s, _, _ := cl.streams.openStream(true)
	simWrite(s, []byte("hello"))
	s.closeWrite()
	p.run(t, time.Second, func() bool { return srv.activePath().addrs.remote == evil.AddrPort() })
	p.run(t, 5*time.Second, func() bool { return srv.activePath().addrs.remote == real })
	if !out(p.sim.Now()) {
		t.Fatal("reverted only after the client came back")
	}
	if srv.paths.validationsFail == 0 {
		t.Error("no validation failed")
	}
	var got []*stream
	p.run(t, 20*time.Second, func() bool {
		got = append(got, acceptAll(srv, true)...)
		if len(got) == 0 {
			return false
		}
		buf := make([]byte, 16)
		n, _ := simRead(got[0], buf)
		return n > 0
	})
	if srv.closeState != stateActive || cl.closeState != stateActive {
		t.Fatalf("closed: server %v, client %v", srv.closeErr, cl.closeErr)
	}
	if attacker.len > 3*len(attacker.send)+3*1500 {
		t.Errorf("attacker received %d bytes", attacker.len)
	}
	t.Logf("attacker received %d bytes; migrations %d; validations failed %d", attacker.len, srv.paths.migrations, srv.paths.validationsFail)
}

// simMultiAttacker forwards each datagram from its own source address.
type simMultiAttacker struct {
	to    netsim.Addr
	froms []netsim.Addr
	next  int
	send  [][]byte
	got   int
}

func (a *simMultiAttacker) HandleDatagram(now time.Time, d *netsim.Datagram) { a.got += len(d.Payload) }
func (a *simMultiAttacker) HandleTimeout(time.Time)                          {}
func (a *simMultiAttacker) NextDeadline() time.Time                          { return time.Time{} }
func (a *simMultiAttacker) PollTransmit(now time.Time, out *netsim.Outbox) {
	for _, d := range a.send {
		out.SendFrom(a.froms[a.next%len(a.froms)], a.to, d, netsim.NotECT)
		a.next++
	}
	a.send = nil
}

// Ten client packets forwarded from ten attacker addresses during a
// download: the server tracks at most maxPaths paths, keeps its peer
// connection IDs within the limit it advertised (retiring those of the
// paths it forgets), and ends up back on the client's address with the
// download intact.
func TestSimPathSpoofFlood(t *testing.T) {
	p := newSimPair(t, testLink, nil, 99)
	froms := make([]netsim.Addr, 10)
	for i := range froms {
		froms[i] = netsim.Addr{Host: 4, Port: uint16(1000 + i)}
	}
	attacker := &simMultiAttacker{to: p.snode.Addr(), froms: froms}
	fast := netsim.LinkConfig{Delay: time.Millisecond}
	p.net.Connect(4, 2, fast, fast)
	anode := p.net.Attach(froms[0], attacker)
	for _, a := range froms[1:] {
		anode.AddAddr(a)
	}
	p.connect(t)
	srv := p.server.c
	real := srv.activePath().addrs.remote
	received, forwarded := 0, 0
	p.client.onSend = func(from, to netsim.Addr, d []byte, _ bool) {
		if forwarded < len(froms) && received > 1<<20 && received%3 == 0 {
			attacker.send = append(attacker.send, append([]byte(nil), d...))
			anode.Wake()
			forwarded++
		}
	}
	maxPathsSeen, maxIDs := 0, 0
	simDownload(t, p, 6<<20, 30*time.Second, func(got int) {
		received = got
		n := 0
		for i := range srv.paths.list {
			if srv.paths.list[i].inUse {
				n++
			}
		}
		maxPathsSeen = max(maxPathsSeen, n)
		maxIDs = max(maxIDs, srv.peerIDs.activeCount())
	})
	p.sim.RunFor(10 * time.Second)
	if forwarded < 3 {
		t.Fatalf("only %d packets forwarded", forwarded)
	}
	if srv.closeState != stateActive {
		t.Fatalf("server closed: %v", srv.closeErr)
	}
	if got := srv.activePath().addrs.remote; got != real {
		t.Errorf("server sends to %v, want %v", got, real)
	}
	if maxPathsSeen > maxPaths || maxIDs > int(srv.peerIDs.limit) {
		t.Errorf("server tracked %d paths and %d peer IDs at most", maxPathsSeen, maxIDs)
	}
	t.Logf("forwarded %d; attacker got %d bytes; migrations %d; validations failed %d; peer ID sequence now %d",
		forwarded, attacker.got, srv.paths.migrations, srv.paths.validationsFail, srv.peerIDs.curSeq)
}
