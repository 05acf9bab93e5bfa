package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netem"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
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

// When the server's 1-RTT packets around handshake completion are lost,
// its probe carries the HANDSHAKE_DONE again rather than a bare PING, so
// the client confirms the handshake one round trip sooner (and stops
// probing with Handshake packets the server can no longer read).
// RFC 9002, Section 6.2.4; RFC 9001, Section 4.1.2.
func TestSimProbeRepeatsHandshakeDone(t *testing.T) {
	p := newSimPair(t, testLink, nil, 32)
	p.server.dropOut = func(_ time.Time, d []byte) bool {
		return len(d) > 0 && d[0]&0x80 == 0 && p.server.c.sent.PTOCount() == 0
	}
	var got []wire.FrameType
	p.run(t, 10*time.Second, func() bool {
		if p.client.c.onFrame == nil {
			p.client.c.onFrame = func(s ackhandler.Space, f *wire.Frame) {
				if s == ackhandler.SpaceApplication && f.Type != wire.FrameTypeAck && f.Type != wire.FrameTypePadding {
					got = append(got, f.Type)
				}
			}
		}
		return p.confirmed()
	})
	if p.server.droppedOut == 0 {
		t.Fatal("no server 1-RTT datagram dropped")
	}
	for _, ft := range got {
		if ft == wire.FrameTypeHandshakeDone {
			return
		}
		if ft == wire.FrameTypePing {
			t.Fatalf("the client got a PING before the HANDSHAKE_DONE: %v", got)
		}
	}
	t.Fatalf("no HANDSHAKE_DONE among %v", got)
}

// When the server's Initial packet (its ServerHello) is lost but its
// Handshake packets arrive, the client, which cannot read them yet, sends
// its ClientHello again at once rather than at its probe timeout; the
// server, seeing duplicate CRYPTO data, sends its ServerHello again
// (probeEarlyForClient). "When a client receives Handshake or 1-RTT
// packets prior to obtaining Handshake keys, it may assume some or all of
// the server's Initial packets were lost. To speed up handshake completion
// under these conditions, an endpoint MAY, for a limited number of times
// per connection, send a packet containing unacknowledged CRYPTO data
// earlier than the PTO expiry" (RFC 9002, Section 6.2.3). On a 100 ms
// RTT path the handshake then takes about 3 round trips, not the first
// probe timeout (about 1 s before any RTT sample, Section 6.2.2).
func TestSimClientProbesEarlyOnHandshakeWithoutInitial(t *testing.T) {
	link := testLink
	link.Delay = 50 * time.Millisecond
	p := newSimPair(t, link, nil, 33)
	dropped := 0
	p.server.dropOut = func(_ time.Time, d []byte) bool {
		// Drop the Initial packets of the server's first flight (an
		// ACK, then the ServerHello); its datagram of Handshake packets
		// only goes through.
		if p.sim.Elapsed() < 60*time.Millisecond && hasPacketType(d, wire.PacketTypeInitial) {
			dropped++
			return true
		}
		return false
	}
	var handshakeBeforeKeys bool
	p.client.dropIn = func(_ time.Time, d *netsim.Datagram) bool {
		if hasPacketType(d.Payload, wire.PacketTypeHandshake) && p.client.c.spaces[ackhandler.SpaceHandshake].open == nil {
			handshakeBeforeKeys = true
		}
		return false
	}
	p.run(t, 10*time.Second, func() bool { return p.client.c.handshakeComplete })
	if dropped == 0 || !handshakeBeforeKeys {
		t.Fatalf("dropped %d, Handshake packets before the keys: %v: the scenario did not happen", dropped, handshakeBeforeKeys)
	}
	if el := p.sim.Elapsed(); el > 450*time.Millisecond {
		t.Errorf("handshake complete after %v, want about 3 round trips of 100 ms, not a probe timeout", el)
	}
	if n := p.client.c.sent.PTOCount(); n != 0 {
		t.Errorf("client PTO count %d: it waited for its probe timeout", n)
	}
}
