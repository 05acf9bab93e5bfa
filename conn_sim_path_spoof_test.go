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
