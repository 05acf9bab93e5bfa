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
