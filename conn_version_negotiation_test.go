package quic

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// packetVersions returns the (type, version) of each long-header packet
// coalesced in datagram d.
func packetVersions(d []byte) (types []wire.PacketType, versions []wire.Version) {
	for len(d) > 0 && wire.IsLongHeader(d[0]) {
		pkt, rest, err := wire.NextPacket(d, 8)
		if err != nil {
			return
		}
		hdr, _, err := wire.ParseLongHeader(pkt)
		if err != nil {
			return
		}
		types, versions = append(types, hdr.Type), append(versions, hdr.Version)
		d = rest
	}
	return
}

// versionLog records the versions of the long-header packets each side
// sends, by packet type.
type versionLog struct {
	client, server map[wire.PacketType][]wire.Version
}

func watchVersions(p *simPair) *versionLog {
	l := &versionLog{client: map[wire.PacketType][]wire.Version{}, server: map[wire.PacketType][]wire.Version{}}
	record := func(m map[wire.PacketType][]wire.Version) func(time.Time, *netsim.Datagram) bool {
		return func(_ time.Time, d *netsim.Datagram) bool {
			ts, vs := packetVersions(d.Payload)
			for i := range ts {
				m[ts[i]] = append(m[ts[i]], vs[i])
			}
			return false
		}
	}
	p.server.dropIn = record(l.client)
	p.client.dropIn = record(l.server)
	return l
}

func onlyVersion(vs []wire.Version, v wire.Version) bool {
	return len(vs) > 0 && !slices.ContainsFunc(vs, func(x wire.Version) bool { return x != v })
}

var (
	v1First = []wire.Version{wire.Version1, wire.Version2}
	v2First = []wire.Version{wire.Version2, wire.Version1}
)

// RFC 9368, Section 2.3 and RFC 9369, Section 4: a client that starts in
// version 1 and offers version 2 is moved to version 2 by a server that
// supports it (the default Config of both), within the same connection
// and without a round trip.
func TestSimVersionUpgradeV1ToV2(t *testing.T) {
	ctls, stls := testTLS(t)
	p := newSimPairOpts(t, testLink, 80, simPairOpts{ctls: ctls, stls: stls})
	log := watchVersions(p)
	p.connect(t)
	for _, c := range []*connState{p.client.c, p.server.c} {
		if c.firstVersion != wire.Version1 || c.version != wire.Version2 {
			t.Fatalf("%v: first version %v, negotiated %v", c.role, c.firstVersion, c.version)
		}
	}
	// The client's first flight is version 1; everything the server sends
	// is version 2 ("The server MUST send all CRYPTO frames using the
	// negotiated version"); the client's Handshake packets are version 2
	// ("Both endpoints MUST send Handshake and 1-RTT packets using the
	// negotiated version").
	if ci := log.client[wire.PacketTypeInitial]; len(ci) == 0 || ci[0] != wire.Version1 {
		t.Errorf("client Initial versions %v, want version 1 first", ci)
	}
	// The server may acknowledge the first part of a ClientHello that
	// spans two packets in version 1 before it can read the client's
	// transport parameters (RFC 9368, Section 2.3); it never goes back.
	si := log.server[wire.PacketTypeInitial]
	i := slices.Index(si, wire.Version2)
	initialsOK := i >= 0 && onlyVersion(si[i:], wire.Version2) && (i == 0 || onlyVersion(si[:i], wire.Version1))
	if !initialsOK || !onlyVersion(log.server[wire.PacketTypeHandshake], wire.Version2) {
		t.Errorf("server versions: Initial %v, Handshake %v", log.server[wire.PacketTypeInitial], log.server[wire.PacketTypeHandshake])
	}
	if !onlyVersion(log.client[wire.PacketTypeHandshake], wire.Version2) {
		t.Errorf("client Handshake versions %v", log.client[wire.PacketTypeHandshake])
	}
	// Both sides' version_information agree on version 2.
	if pp := p.client.c.peerParams; !pp.HasVersionInformation || pp.VersionInformation.ChosenVersion != wire.Version2 {
		t.Errorf("server version_information %+v", pp.VersionInformation)
	}
	if pp := p.server.c.peerParams; !pp.HasVersionInformation || pp.VersionInformation.ChosenVersion != wire.Version1 ||
		!slices.Equal(pp.VersionInformation.AvailableVersions, v1First) {
		t.Errorf("client version_information %+v", pp.VersionInformation)
	}
	transferOnce(t, p, 256<<10)
}

// transferOnce sends n bytes from client to server on a new stream.
func transferOnce(t *testing.T, p *simPair, n int) {
	t.Helper()
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatal(err)
	}
	w := newPatternWriter(s, 3, n)
	var r *patternReader
	p.run(t, 30*time.Second, func() bool {
		w.step()
		if r == nil {
			if l := acceptAll(p.server.c, true); len(l) > 0 {
				r = newPatternReader(t, l[0], 3)
			}
		}
		return r != nil && r.step(0)
	})
}

// A server upgrades only when the client offered the version and the
// server lists it ("a server that upgrades unasked fails interop tests"),
// and never downgrades.
func TestSimVersionNoUpgrade(t *testing.T) {
	for _, tc := range []struct {
		name           string
		client, server []wire.Version
		want           wire.Version
	}{
		{"client offers only v1", []wire.Version{wire.Version1}, v2First, wire.Version1},
		{"server speaks only v1", v1First, []wire.Version{wire.Version1}, wire.Version1},
		{"client starts in v2 and offers only v2", []wire.Version{wire.Version2}, v1First, wire.Version2},
		{"client starts in v2 and offers v1", v2First, v1First, wire.Version2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctls, stls := testTLS(t)
			p := newSimPairOpts(t, testLink, 81, simPairOpts{
				client: &Config{Versions: tc.client}, server: &Config{Versions: tc.server}, ctls: ctls, stls: stls,
				version: tc.client[0],
			})
			log := watchVersions(p)
			p.connect(t)
			if p.client.c.version != tc.want || p.server.c.version != tc.want {
				t.Fatalf("versions client %v server %v, want %v", p.client.c.version, p.server.c.version, tc.want)
			}
			for _, m := range []map[wire.PacketType][]wire.Version{log.client, log.server} {
				for pt, vs := range m {
					if !onlyVersion(vs, tc.want) {
						t.Errorf("%v packets in versions %v", pt, vs)
					}
				}
			}
		})
	}
}

// RFC 9369, Section 4.1: "The client MUST NOT send 0-RTT packets using the
// negotiated version ... Servers can accept 0-RTT and then process 0-RTT
// packets from the original version."
func TestSimVersionUpgradeWith0RTT(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	srvCfg := &Config{Allow0RTT: true, Versions: v2First}
	primeSession(t, ctls, stls, cache, srvCfg)
	p := newSimPairOpts(t, testLink, 82, simPairOpts{server: srvCfg, ctls: ctls, stls: stls, early: true})
	log := watchVersions(p)
	req := earlyRequest()
	_, got, sent0RTT := earlyExchange(t, p, req)
	if string(got) != string(req) || sent0RTT == 0 {
		t.Fatalf("got %d bytes of %d, %d 0-RTT datagrams", len(got), len(req), sent0RTT)
	}
	if !p.client.c.used0RTT || !p.server.c.used0RTT {
		t.Errorf("used0RTT: client %v, server %v", p.client.c.used0RTT, p.server.c.used0RTT)
	}
	if p.client.c.version != wire.Version2 || p.server.c.version != wire.Version2 {
		t.Errorf("negotiated client %v server %v", p.client.c.version, p.server.c.version)
	}
	if !onlyVersion(log.client[wire.PacketType0RTT], wire.Version1) {
		t.Errorf("0-RTT packet versions %v, want only version 1", log.client[wire.PacketType0RTT])
	}
}

func wantVersionNegotiationError(t *testing.T, err error) {
	t.Helper()
	var te *wire.TransportError
	if !errors.As(err, &te) || te.Code != wire.VersionNegotiationError {
		t.Fatalf("got %v, want VERSION_NEGOTIATION_ERROR", err)
	}
}

func versionParams(chosen wire.Version, available ...wire.Version) *wire.TransportParameters {
	p := wire.DefaultTransportParameters()
	p.VersionInformation = wire.VersionInformation{ChosenVersion: chosen, AvailableVersions: available}
	p.HasVersionInformation = true
	return &p
}

// RFC 9368, Section 4: the downgrade checks.
func TestVersionDowngradeChecks(t *testing.T) {
	ctls, stls := testTLS(t)
	newState := func(role wire.Role, versions []wire.Version) *connState {
		dcid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
		tc := ctls
		if role == wire.RoleServer {
			tc = stls
		}
		c, err := newConnState(time.Unix(0, 0), role, (&Config{Versions: versions}).withDefaults(), connParams{
			tls: tc, connIDGen: &testConnIDGen{next: 0x7000}, peerConnID: dcid, origDstConnID: dcid, version: versions[0],
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("server: client's chosen version is not the version in use", func(t *testing.T) {
		c := newState(wire.RoleServer, v2First) // first flight in version 2
		wantVersionNegotiationError(t, c.negotiateVersion(versionParams(wire.Version1, wire.Version1, wire.Version2)))
	})
	t.Run("server: no version_information is accepted", func(t *testing.T) {
		c := newState(wire.RoleServer, v1First)
		p := wire.DefaultTransportParameters()
		if err := c.negotiateVersion(&p); err != nil || c.version != wire.Version1 {
			t.Fatalf("err %v, version %v", err, c.version)
		}
	})
	t.Run("client: server chose a version it was not offered", func(t *testing.T) {
		c := newState(wire.RoleClient, []wire.Version{wire.Version1})
		wantVersionNegotiationError(t, c.negotiateVersion(versionParams(wire.Version2, wire.Version2)))
	})
	t.Run("client: server's chosen version is not the negotiated one", func(t *testing.T) {
		c := newState(wire.RoleClient, v1First) // still in version 1: no v2 packet seen
		wantVersionNegotiationError(t, c.negotiateVersion(versionParams(wire.Version2, wire.Version2, wire.Version1)))
	})
	t.Run("client: switched version without version_information", func(t *testing.T) {
		c := newState(wire.RoleClient, v1First)
		c.switchVersion(wire.Version2, nil)
		p := wire.DefaultTransportParameters()
		wantVersionNegotiationError(t, c.negotiateVersion(&p))
	})
	t.Run("client: matching version_information", func(t *testing.T) {
		c := newState(wire.RoleClient, v1First)
		c.switchVersion(wire.Version2, nil)
		if err := c.negotiateVersion(versionParams(wire.Version2, wire.Version2, wire.Version1)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("client ignores a version it did not offer", func(t *testing.T) {
		c := newState(wire.RoleClient, []wire.Version{wire.Version1})
		if open, _, keep := c.openerForVersion(wire.PacketTypeInitial, wire.Version2); open != nil || keep {
			t.Fatal("client would read a version 2 Initial it did not offer")
		}
		c2 := newState(wire.RoleClient, v1First)
		if open, learn, keep := c2.openerForVersion(wire.PacketTypeHandshake, wire.Version2); open != nil || learn || !keep {
			t.Fatal("client would learn the version from a Handshake packet, or drop one it may read once it learns the version")
		}
		if open, learn, _ := c2.openerForVersion(wire.PacketTypeInitial, wire.Version2); open == nil || !learn {
			t.Fatal("client would not learn version 2 from an Initial")
		}
	})
}

// The server's first Handshake packets in the negotiated version can
// overtake its first Initial (separate datagrams, reordered): the client,
// which learns the version only from that Initial, keeps them and reads
// them once it has, instead of dropping them and waiting for a
// retransmission (a probe timeout).
func TestSimVersionUpgradeHandshakeBeforeInitial(t *testing.T) {
	ctls, stls := testTLS(t)
	p := newSimPairOpts(t, testLink, 83, simPairOpts{ctls: ctls, stls: stls})
	var held []byte
	reordered := false
	p.client.dropIn = func(now time.Time, d *netsim.Datagram) bool {
		types, versions := packetVersions(d.Payload)
		if reordered || len(types) == 0 || versions[0] != wire.Version2 {
			return false
		}
		if held == nil && types[0] == wire.PacketTypeInitial {
			held = bytes.Clone(d.Payload) // hold the server's first v2 Initial back
			return true
		}
		if held != nil && types[0] == wire.PacketTypeHandshake {
			reordered = true
			p.client.c.handleDatagram(now, d.Payload, 0)
			p.client.c.handleDatagram(now, held, 0)
			return true
		}
		return false
	}
	start := p.sim.Now()
	p.connect(t)
	if !reordered {
		t.Fatal("no Handshake datagram overtook the Initial")
	}
	if p.client.c.version != wire.Version2 {
		t.Fatalf("client version %v", p.client.c.version)
	}
	// One round trip for the handshake (20 ms) and one for the
	// confirmation, no probe timeout.
	if d := p.sim.Now().Sub(start); d > 3*testLink.Delay*2 {
		t.Errorf("handshake confirmed after %v: the reordered Handshake packet was not kept", d)
	}
	if p.client.c.sent.LostPackets() != 0 || p.server.c.sent.LostPackets() != 0 {
		t.Errorf("packets lost: client %d, server %d", p.client.c.sent.LostPackets(), p.server.c.sent.LostPackets())
	}
}
