package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// The server closes while its active path is an attacker's address it has
// not validated (an off-path attacker forwarded a client packet from
// there, RFC 9000, Section 9.3.3). Its CONNECTION_CLOSE datagrams, the
// first and those answering later packets (Section 10.2.1), go to the
// active path, so they count against that address's anti-amplification
// limit: "an endpoint MUST limit the amount of data it sends to the
// unvalidated address to three times the amount of data received from
// that address" (Section 9.3.1), whatever the client keeps sending from
// its own address.
func TestSimClosingUnvalidatedPath(t *testing.T) {
	p := newSimPair(t, testLink, nil, 127)
	w := watchPaths(t, p.server)
	attacker := &simAttacker{to: p.snode.Addr()}
	evil := netsim.Addr{Host: 4, Port: 666}
	fast := netsim.LinkConfig{Delay: time.Millisecond}
	p.net.Connect(4, 2, fast, fast)
	anode := p.net.Attach(evil, attacker)
	p.connect(t)
	srv, cl := p.server.c, p.client.c
	// Data both ways, so that the client keeps sending.
	ss, _, _ := srv.streams.openStream(true)
	cs, _, _ := cl.streams.openStream(true)
	sw, cw := newPatternWriter(ss, 0, 8<<20), newPatternWriter(cs, 1, 8<<20)
	forwarded := false
	p.client.onSend = func(from, to netsim.Addr, d []byte, _ bool) {
		if !forwarded && p.sim.Elapsed() > 300*time.Millisecond && len(d) < 100 { // a small one: an ACK
			attacker.send = append(attacker.send, append([]byte(nil), d...))
			anode.Wake()
			forwarded = true
		}
	}
	// Both sides read what they receive: with nothing read, both senders
	// end up blocked on stream flow control and fall silent.
	var readers []*patternReader
	p.run(t, 5*time.Second, func() bool {
		sw.step()
		cw.step()
		for _, s := range acceptAll(srv, true) {
			readers = append(readers, newPatternReader(t, s, 1))
		}
		for _, s := range acceptAll(cl, true) {
			readers = append(readers, newPatternReader(t, s, 0))
		}
		for _, r := range readers {
			r.step(0)
		}
		return srv.activePath().addrs.remote == evil.AddrPort()
	})
	if srv.activePath().validated {
		t.Fatal("the attacker's path is validated")
	}
	srv.closeApplication(p.sim.Now(), 7, "bye")
	p.snode.Wake()
	p.sim.RunFor(3 * time.Second)
	if w.recv[evil] == 0 || attacker.len > 3*w.recv[evil] {
		t.Errorf("the attacker's address got %d bytes for %d it sent", attacker.len, w.recv[evil])
	}
	t.Logf("attacker sent %d bytes, got %d; the client's address got %d", w.recv[evil], attacker.len, w.sent[p.cnode.Addr()])
}
