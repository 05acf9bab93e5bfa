package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// Helpers of the simulated path tests (conn_path_*_test.go,
// scenario_path_random_test.go).

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

// cidWatch checks, for every 1-RTT datagram an endpoint sends, that no
// connection ID of the peer's goes on two paths: "An endpoint MUST NOT
// reuse a connection ID when sending to more than one destination
// address" and "Similarly, an endpoint MUST NOT reuse a connection ID when
// sending from more than one local address" (RFC 9000, Section 9.5).
// Datagrams are seen where they leave the endpoint (its own addresses,
// before any NAT).
//
// With rebind set, the one exception is allowed: "Due to network changes
// outside the control of its peer, an endpoint might receive packets from
// a new source address with the same Destination Connection ID field
// value, in which case it MAY continue to use the current connection ID
// with the new remote address while still sending from the same local
// address." (Section 9.5) The ID in use may then follow the active path
// to another remote address, from the same local one; it must never go
// at once to the active path and another, and the other IDs keep to one
// path each.
type cidWatch struct {
	t      testing.TB
	e      *simEndpoint
	rebind bool
	last   map[wire.ConnectionID]cidPath
	// reused counts datagrams that broke the rule; fatal, if set, fails
	// the test at the first. moved counts the exception's uses.
	reused, moved int
	fatal         bool
}

type cidPath struct{ from, to netsim.Addr }

func watchConnIDs(t testing.TB, e *simEndpoint, cidLen int, rebind bool) *cidWatch {
	w := &cidWatch{t: t, e: e, rebind: rebind, last: map[wire.ConnectionID]cidPath{}, fatal: true}
	prev := e.onSend
	e.onSend = func(from, to netsim.Addr, d []byte, challenge bool) {
		if prev != nil {
			prev(from, to, d, challenge)
		}
		if len(d) == 0 || wire.IsLongHeader(d[0]) {
			return
		}
		cid, err := wire.ParseDestConnectionID(d, cidLen)
		if err != nil || cid.Len() == 0 {
			return
		}
		w.sent(cid, cidPath{from, to})
	}
	return w
}

func (w *cidWatch) sent(cid wire.ConnectionID, p cidPath) {
	q, seen := w.last[cid]
	w.last[cid] = p
	if !seen || q == p {
		if !w.rebind || w.onActive(p) || cid != w.e.c.peerIDs.active() {
			return
		}
		w.fail(cid, p, w.activePath(), "while the active path uses it")
		return
	}
	if w.rebind {
		switch {
		case w.onActive(p) && cid == w.e.c.peerIDs.active() && q.from == p.from:
			w.moved++
			return
		}
	}
	w.fail(cid, p, q, "before")
}

func (w *cidWatch) activePath() cidPath {
	a := w.e.c.activePath().addrs
	return cidPath{simAddr(a.local), simAddr(a.remote)}
}

func (w *cidWatch) onActive(p cidPath) bool {
	a := w.e.c.activePath().addrs
	return p.to.AddrPort() == a.remote && localMatches(a.local, p.from.AddrPort())
}

func (w *cidWatch) fail(cid wire.ConnectionID, p, q cidPath, when string) {
	w.reused++
	if w.fatal {
		w.t.Fatalf("connection ID %v sent from %v to %v, and %s from %v to %v", cid, p.from, p.to, when, q.from, q.to)
	}
}
