package quic

import (
	"testing"

	"github.com/quicstack/quic/wire"
)

// A client configured for QUIC version 2 (RFC 9369) completes a handshake
// and transfers data with a server that supports it. (Compatible version
// negotiation from a version 1 first flight: conn_version_negotiation_test.go.)
func TestSimVersion2(t *testing.T) {
	ctls, stls := testTLS(t)
	cfg := &Config{Versions: []wire.Version{wire.Version2, wire.Version1}}
	p := newSimPairOpts(t, testLink, 70, simPairOpts{client: cfg, server: cfg, ctls: ctls, stls: stls, version: wire.Version2})
	p.connect(t)
	if p.client.c.version != wire.Version2 || p.server.c.version != wire.Version2 {
		t.Fatalf("versions %v %v", p.client.c.version, p.server.c.version)
	}
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatal(err)
	}
	w := newPatternWriter(s, 1, 1<<20)
	var r *patternReader
	p.run(t, 30e9, func() bool {
		w.step()
		if r == nil {
			if l := acceptAll(p.server.c, true); len(l) > 0 {
				r = newPatternReader(t, l[0], 1)
			}
		}
		return r != nil && r.step(0)
	})
}
