package quic

import (
	"testing"
	"time"
)

// Key updates during a transfer (RFC 9001, Section 6): the client updates
// every 200 packets, the server follows each update ("The endpoint MUST
// update its send keys to the corresponding key phase in response"), and
// the data arrives intact across all of them.
func TestSimKeyUpdateDuringTransfer(t *testing.T) {
	p := newSimPair(t, testLink, nil, 21)
	p.connect(t)
	p.client.c.oneRTT.SetUpdateInterval(200)
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v", err)
	}
	const size = 8 << 20
	w := newPatternWriter(s, 1, size)
	var r *patternReader
	p.run(t, 30*time.Second, func() bool {
		w.step()
		if r == nil {
			if srv, _, _ := p.server.c.streams.acceptStream(true); srv != nil {
				r = newPatternReader(t, srv, 1)
			}
		}
		return r != nil && r.step(0)
	})
	if r.got != size {
		t.Fatalf("received %d bytes; want %d", r.got, size)
	}
	cu, su := p.client.c.oneRTT.Updates(), p.server.c.oneRTT.Updates()
	if cu < 3 || su < 3 {
		t.Fatalf("key updates: client %d, server %d; want several", cu, su)
	}
	if p.client.c.closeState != stateActive || p.server.c.closeState != stateActive {
		t.Fatalf("closed: %v / %v", p.client.c.closeErr, p.server.c.closeErr)
	}
	t.Logf("8 MB with %d client-initiated key updates (server followed %d)", cu, su)
}

// A server initiates key updates too (Config.KeyUpdateInterval) while it
// sends, and the client follows. Regression test: the server's handshake
// is confirmed before crypto/tls hands over its 1-RTT read secret, and its
// keys once never learned it, so a server never initiated an update.
func TestSimServerInitiatedKeyUpdate(t *testing.T) {
	ctls, stls := testTLS(t)
	p := newSimPairOpts(t, testLink, 23, simPairOpts{
		server: &Config{KeyUpdateInterval: 200}, ctls: ctls, stls: stls,
	})
	p.connect(t)
	s, _, err := p.server.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v", err)
	}
	const size = 8 << 20
	w := newPatternWriter(s, 2, size)
	var r *patternReader
	p.run(t, 30*time.Second, func() bool {
		w.step()
		if r == nil {
			if cs, _, _ := p.client.c.streams.acceptStream(true); cs != nil {
				r = newPatternReader(t, cs, 2)
			}
		}
		return r != nil && r.step(0)
	})
	// The packets still on the link when the reader reached EOF (the
	// server's last ones may be the first of a new key phase) arrive.
	p.sim.RunFor(time.Second)
	su, cu := p.server.c.oneRTT.Updates(), p.client.c.oneRTT.Updates()
	if su < 3 || cu != su {
		t.Fatalf("key updates: server %d, client %d; want several, followed", su, cu)
	}
}
