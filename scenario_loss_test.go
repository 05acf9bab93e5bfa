package quic

import (
	"bytes"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// A lost Retry (RFC 9000, Section 17.2.5): the client, which never saw it,
// sends its Initial again on its PTO; the server, which keeps no state,
// answers with another Retry; the client follows that one, its packet
// numbers still increasing (Section 17.2.5.3: "the client MUST NOT reset
// the packet number for any packet number space after processing a Retry
// packet"), and the handshake completes with the Retry's connection IDs
// checked by both sides (Section 7.3).
func TestSimRetryLost(t *testing.T) {
	p := newSimPairOpts(t, testLink, 90, simPairOpts{retry: true})
	retriesSeen := 0
	p.client.dropIn = func(_ time.Time, d *netsim.Datagram) bool {
		if wire.IsLongHeader(d.Payload[0]) {
			if pt, err := wire.PacketTypeOf(d.Payload); err == nil && pt == wire.PacketTypeRetry {
				retriesSeen++
				return retriesSeen == 1 // the first Retry is lost
			}
		}
		return false
	}
	var tokens []bool
	var firstPN []wire.PacketNumber
	p.server.dropIn = func(_ time.Time, d *netsim.Datagram) bool {
		hdr, _, err := wire.ParseLongHeader(d.Payload)
		if err == nil && hdr.Type == wire.PacketTypeInitial && len(tokens) < 3 {
			// Initial keys derive from the Destination Connection ID the
			// client used: its own random one, then the Retry's.
			h, pn := openClientInitial(t, bytes.Clone(d.Payload), hdr.DstConnID)
			tokens, firstPN = append(tokens, len(h.Token) > 0), append(firstPN, pn)
		}
		return false
	}
	p.connect(t)
	if n := p.server.stats.retriesSent.Load(); n != 2 || p.client.droppedIn != 1 {
		t.Fatalf("server sent %d Retry packets, client lost %d; want 2 and 1", n, p.client.droppedIn)
	}
	if !p.client.c.hasRetried {
		t.Fatal("client did not follow the second Retry")
	}
	// Initial 1 and its retransmission carry no token; the next one does,
	// and every packet number is larger than the one before.
	if len(tokens) < 3 || tokens[0] || tokens[1] || !tokens[2] {
		t.Fatalf("Initial packets with a token: %v", tokens)
	}
	for i := 1; i < len(firstPN); i++ {
		if firstPN[i] <= firstPN[i-1] {
			t.Fatalf("client Initial packet numbers %v do not increase", firstPN)
		}
	}
	transferOnce(t, p, 64<<10)
}

// Lost 0-RTT packets (RFC 9001, Section 4.6): every 0-RTT packet is lost,
// yet the server accepted 0-RTT in the handshake;
// the client's loss recovery sends the request again, in 1-RTT packets,
// and it arrives intact.
func TestSim0RTTLost(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	srvCfg := &Config{Allow0RTT: true}
	primeSession(t, ctls, stls, cache, srvCfg)
	p := newSimPairOpts(t, testLink, 91, simPairOpts{server: srvCfg, ctls: ctls, stls: stls, early: true})
	lost := 0
	p.server.dropIn = func(_ time.Time, d *netsim.Datagram) bool {
		// Cut every 0-RTT packet out of the datagram (the client
		// coalesces them after its Initial packets).
		for off := 0; off < len(d.Payload) && wire.IsLongHeader(d.Payload[off]); {
			pkt, _, err := wire.NextPacket(d.Payload[off:], 8)
			if err != nil {
				break
			}
			if pt, _ := wire.PacketTypeOf(pkt); pt == wire.PacketType0RTT {
				lost++
				d.Payload = d.Payload[:off]
				break
			}
			off += len(pkt)
		}
		return len(d.Payload) == 0
	}
	req := earlyRequest()
	srv, got, sent0RTT := earlyExchange(t, p, req)
	if !bytes.Equal(got, req) {
		t.Fatalf("request arrived as %d bytes, want %d", len(got), len(req))
	}
	if sent0RTT == 0 || lost == 0 {
		t.Fatalf("%d 0-RTT datagrams sent, %d lost", sent0RTT, lost)
	}
	if !p.server.c.used0RTT || !p.client.c.used0RTT {
		t.Errorf("server accepted 0-RTT: client %v, server %v", p.client.c.used0RTT, p.server.c.used0RTT)
	}
	if srv.receivedEarlyData() {
		t.Error("server stream reports 0-RTT data although every 0-RTT packet was lost")
	}
}

// Key updates during heavy reordering (RFC 9001, Section 6.3): with a
// quarter of the datagrams held back by 15 ms (longer than the 10 ms
// one-way delay), packets of the old key phase keep arriving after the
// new phase's; the receiver keeps the previous keys for them, and an 8 MB
// transfer through several updates arrives intact.
func TestSimKeyUpdateReordering(t *testing.T) {
	link := linkWith(func(l *netsim.LinkConfig) {
		l.ReorderProb = 0.25
		l.ReorderDelay = 15 * time.Millisecond
	})
	p := newSimPair(t, link, nil, 92)
	p.connect(t)
	p.client.c.oneRTT.SetUpdateInterval(150)
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatal(err)
	}
	const size = 8 << 20
	w := newPatternWriter(s, 4, size)
	var r *patternReader
	p.run(t, 120*time.Second, func() bool {
		w.step()
		if r == nil {
			if l := acceptAll(p.server.c, true); len(l) > 0 {
				r = newPatternReader(t, l[0], 4)
			}
		}
		return r != nil && r.step(0)
	})
	cu, su := p.client.c.oneRTT.Updates(), p.server.c.oneRTT.Updates()
	if cu < 2 || su != cu {
		t.Fatalf("key updates: client %d, server %d", cu, su)
	}
	if f := p.server.c.oneRTT.FailedDecryptions(); f != 0 {
		t.Errorf("%d packets failed to decrypt across key updates", f)
	}
	t.Logf("%d key updates", cu)
}
