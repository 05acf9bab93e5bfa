package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// Helpers of the conn_sim_path_*_test.go files.

// pathWatch records, for a server endpoint, what it sends to and receives
// from each client address, and checks the anti-amplification limit on
// every datagram sent to an address the server has not validated:
// "an endpoint MUST limit the amount of data it sends to the unvalidated
// address to three times the amount of data received from that address"
// (RFC 9000, Section 9.3.1).
type pathWatch struct {
	t          testing.TB
	e          *simEndpoint
	recv, sent map[netsim.Addr]int
	// first records whether the first datagram sent to each address
	// carried a PATH_CHALLENGE; order lists the addresses as first sent to.
	first map[netsim.Addr]bool
	order []netsim.Addr
}

func watchPaths(t testing.TB, e *simEndpoint) *pathWatch {
	w := &pathWatch{t: t, e: e, recv: map[netsim.Addr]int{}, sent: map[netsim.Addr]int{}, first: map[netsim.Addr]bool{}}
	prevIn := e.dropIn
	e.dropIn = func(now time.Time, d *netsim.Datagram) bool {
		if prevIn != nil && prevIn(now, d) {
			return true
		}
		w.recv[d.Src] += len(d.Payload)
		return false
	}
	e.onSend = func(from, to netsim.Addr, d []byte, challenge bool) {
		if _, ok := w.first[to]; !ok {
			w.first[to] = challenge
			w.order = append(w.order, to)
		}
		w.sent[to] += len(d)
		if e.c == nil || !e.c.handshakeConfirmed {
			return
		}
		i := e.c.paths.find(pathAddrs{local: from.AddrPort(), remote: to.AddrPort()})
		if i >= 0 && !e.c.paths.list[i].validated && w.sent[to] > 3*w.recv[to] {
			t.Errorf("sent %d bytes to unvalidated %v after receiving %d", w.sent[to], to, w.recv[to])
		}
	}
	return w
}

// simDownload has the server send size bytes on a stream it opens and the
// client read them, calling during(received) at every step; it returns
// once the client read everything, intact.
func simDownload(t *testing.T, p *simPair, size int, limit time.Duration, during func(received int)) {
	t.Helper()
	s, _, err := p.server.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v %v", s, err)
	}
	w := newPatternWriter(s, 0, size)
	var r *patternReader
	p.run(t, limit, func() bool {
		if !w.closed {
			w.step()
		}
		if r == nil {
			if l := acceptAll(p.client.c, true); len(l) > 0 {
				r = newPatternReader(t, l[0], 0)
			}
		}
		got := 0
		if r != nil {
			r.step(0)
			got = r.got
		}
		if during != nil {
			during(got)
		}
		if p.client.c.closeState != stateActive || p.server.c.closeState != stateActive {
			t.Fatalf("connection closed: client %v, server %v", p.client.c.closeErr, p.server.c.closeErr)
		}
		if r != nil && r.eof {
			if r.got != size {
				t.Fatalf("EOF after %d bytes, want %d", r.got, size)
			}
			return true
		}
		return false
	})
}
