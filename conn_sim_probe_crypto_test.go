package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netem"
)

// On a path whose round trip (1.5 s) exceeds the first probe timeout
// (about 1 s before any RTT sample), both ends' probes repeat their
// unacknowledged handshake flight instead of sending PINGs: the client
// sends its ClientHello (a CRYPTO frame at offset 0 of the Initial space)
// at least twice, as the interop runner's longrtt case requires, and so
// does the server with its ServerHello. RFC 9002, Section 6.2.4.
func TestSimProbeRepeatsHandshakeFlight(t *testing.T) {
	link := testLink
	link.Delay = 750 * time.Millisecond
	p := newSimPair(t, link, nil, 31)
	var log []netem.Record
	record := func(dir netem.Direction) func(time.Time, []byte) bool {
		return func(_ time.Time, d []byte) bool {
			log = append(log, netem.Record{Dir: dir, Data: append([]byte(nil), d...), Size: len(d)})
			return false
		}
	}
	p.client.dropOut = record(netem.ToServer)
	p.server.dropOut = record(netem.ToClient)
	p.run(t, 20*time.Second, p.confirmed)
	ds := netem.Analyze(log, 8)
	if n := netem.ClientHellos(ds); n < 2 {
		t.Errorf("client sent its ClientHello %d times, want >= 2", n)
	}
	serverHellos := 0
	for _, d := range ds {
		for i := range d.Packets {
			if d.Dir == netem.ToClient && d.Packets[i].CryptoAt(0) {
				serverHellos++
			}
		}
	}
	if serverHellos < 2 {
		t.Errorf("server sent its ServerHello %d times, want >= 2", serverHellos)
	}
	if el := p.sim.Elapsed(); el > 6*time.Second {
		t.Errorf("handshake took %v on a 1.5 s RTT path", el)
	}
}
