package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// Checks on what a peer sends that an honest peer never would: packets
// with another connection ID, an Initial with a token from a server,
// datagrams mixing connection IDs, frames of an extension that was not
// negotiated.

// sealLongTestPacket is sealTestPacket for a long-header packet of space
// s (Initial or Handshake) with the given Source Connection ID and, for
// an Initial, Token.
func sealLongTestPacket(c *connState, now time.Time, s ackhandler.Space, scid wire.ConnectionID, token, payload []byte) ([]byte, wire.PacketNumber) {
	pt, ok := c.packetTypeFor(s)
	if !ok || c.spaces[s].discarded || pt == wire.PacketType1RTT {
		panic("sealLongTestPacket: no long-header keys for the space")
	}
	pn, pnLen := c.sent.NextPacketNumber(s)
	h := wire.LongHeader{Type: pt, Version: c.version, DstConnID: c.peerIDs.active(), SrcConnID: scid, Token: token}
	b := h.Append(make([]byte, 0, 1500), pn, pnLen)
	pnOff := len(b) - pnLen
	b = append(b, payload...)
	for len(b)-pnOff-pnLen < handshake.MinPayloadLen(pnLen) {
		b = append(b, 0)
	}
	return c.sealPacket(now, b, 0, pnOff, pnLen, pn, s, pt, false, false), pn
}

// runUntilClientHasHandshakeKeys runs the handshake until the client
// processed the server's Initial and has Handshake keys, before it
// confirmed the handshake.
func runUntilClientHasHandshakeKeys(t *testing.T, p *simPair) {
	t.Helper()
	c := p.client.c
	p.run(t, 5*time.Second, func() bool {
		return c.spaces[ackhandler.SpaceHandshake].open != nil
	})
	if c.handshakeConfirmed || c.spaces[ackhandler.SpaceHandshake].discarded {
		t.Fatal("the client confirmed the handshake already")
	}
}

// RFC 9000, Section 7.2: "Once a client has received a valid Initial
// packet from the server, it MUST discard any subsequent packet it
// receives on that connection with a different Source Connection ID."
func TestSimClientDiscardsOtherSourceConnID(t *testing.T) {
	p := newSimPair(t, testLink, nil, 130)
	runUntilClientHasHandshakeKeys(t, p)
	c, s := p.client.c, p.server.c
	sp := &c.spaces[ackhandler.SpaceHandshake]
	other := wire.NewConnectionID([]byte{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee})
	d, pn := sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceHandshake, other, nil, []byte{byte(wire.FrameTypePing)})
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	if sp.recv.LargestReceived() == pn || c.peerConnID == other {
		t.Fatalf("the client processed a Handshake packet from Source Connection ID %v, not %v", other, c.peerConnID)
	}
	// The same packet from the right Source Connection ID is processed.
	d, pn = sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceHandshake, s.localConnID, nil, []byte{byte(wire.FrameTypePing)})
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	if sp.recv.LargestReceived() != pn {
		t.Fatal("the client did not process the server's own Handshake packet")
	}
	p.connect(t)
}

// The same for a Handshake packet that arrives before the server's
// Initial: the client keeps it until the Initial brings the keys, and
// then discards it for its Source Connection ID.
func TestSimClientDiscardsOtherSourceConnIDBuffered(t *testing.T) {
	p := newSimPair(t, testLink, nil, 135)
	c := p.client.c
	// The server's Initial with its ServerHello (an ack-eliciting Initial,
	// padded to 1200 bytes), delivered later without the ACK-only Initial
	// before it: the Initial that gives the keys is the first processed.
	var first []byte
	p.client.dropIn = func(_ time.Time, d *netsim.Datagram) bool {
		if first == nil && len(d.Payload) >= 1200 && hasPacketType(d.Payload, wire.PacketTypeInitial) {
			first = append([]byte(nil), d.Payload...)
		}
		return true
	}
	p.run(t, time.Second, func() bool { return first != nil })
	s := p.server.c
	other := wire.NewConnectionID([]byte{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee})
	d, pn := sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceHandshake, other, nil, []byte{byte(wire.FrameTypePing)})
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	if len(c.undecryptable) != 1 {
		t.Fatalf("%d packets kept for later", len(c.undecryptable))
	}
	c.handleDatagram(p.sim.Now(), first, ackhandler.NotECT)
	if c.spaces[ackhandler.SpaceHandshake].open == nil {
		t.Fatal("no Handshake keys from the server's first datagram")
	}
	p.client.dropIn = nil
	if c.spaces[ackhandler.SpaceHandshake].recv.IsDuplicate(pn) {
		t.Error("the client processed a buffered Handshake packet from another Source Connection ID")
	}
	p.connect(t)
}

// RFC 9000, Section 17.2.2: "Initial packets sent by the server MUST set
// the Token Length field to 0; clients that receive an Initial packet
// with a non-zero Token Length field MUST either discard the packet or
// generate a connection error of type PROTOCOL_VIOLATION." The client
// discards it, and does not take its Source Connection ID; the server's
// own Initial packets have no token.
func TestSimClientDiscardsServerInitialWithToken(t *testing.T) {
	p := newSimPair(t, testLink, nil, 131)
	c := p.client.c
	dcid := c.peerConnID
	// The server's first flight is lost.
	p.client.dropIn = func(time.Time, *netsim.Datagram) bool { return true }
	p.run(t, time.Second, func() bool { return p.server.c != nil && p.server.c.packetsSent > 0 })
	s := p.server.c
	other := wire.NewConnectionID([]byte{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee})
	d, _ := sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceInitial, other, []byte("token"), []byte{byte(wire.FrameTypePing)})
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	if c.receivedInitial() || c.peerConnID != dcid {
		t.Fatalf("the client processed a server Initial with a token (peer connection ID %v)", c.peerConnID)
	}
	if c.closeState != stateActive {
		t.Fatalf("client closed: %v", c.closeErr)
	}
	// The server's own Initial packets carry no token.
	initials := 0
	p.client.dropIn = func(_ time.Time, d *netsim.Datagram) bool {
		for b := d.Payload; len(b) > 0 && wire.IsLongHeader(b[0]); {
			pkt, rest, err := wire.NextPacket(b, 8)
			if err != nil {
				break
			}
			if hdr, _, err := wire.ParseLongHeader(pkt); err == nil && hdr.Type == wire.PacketTypeInitial {
				initials++
				if len(hdr.Token) > 0 {
					t.Errorf("the server sent an Initial with a %d-byte token", len(hdr.Token))
				}
			}
			b = rest
		}
		return false
	}
	p.connect(t)
	if initials == 0 {
		t.Error("no server Initial seen")
	}
}

// RFC 9000, Section 12.2: "Receivers SHOULD ignore any subsequent packets
// with a different Destination Connection ID than the first packet in
// the datagram."
func TestSimCoalescedPacketWithOtherDestConnIDIgnored(t *testing.T) {
	p := newSimPair(t, testLink, nil, 132)
	runUntilClientHasHandshakeKeys(t, p)
	c, s := p.client.c, p.server.c
	sp := &c.spaces[ackhandler.SpaceHandshake]
	now := p.sim.Now()
	first, pn1 := sealLongTestPacket(s, now, ackhandler.SpaceHandshake, s.localConnID, nil, []byte{byte(wire.FrameTypePing)})
	// The second packet's Destination Connection ID differs.
	pn2, pnLen := s.sent.NextPacketNumber(ackhandler.SpaceHandshake)
	h := wire.LongHeader{Type: wire.PacketTypeHandshake, Version: s.version,
		DstConnID: wire.NewConnectionID([]byte{0xdd, 0xdd, 0xdd, 0xdd, 0xdd, 0xdd, 0xdd, 0xdd}), SrcConnID: s.localConnID}
	b := h.Append(make([]byte, 0, 1500), pn2, pnLen)
	pnOff := len(b) - pnLen
	b = append(b, byte(wire.FrameTypePing), 0, 0, 0)
	second := s.sealPacket(now, b, 0, pnOff, pnLen, pn2, ackhandler.SpaceHandshake, wire.PacketTypeHandshake, false, false)
	c.handleDatagram(now, append(first, second...), ackhandler.NotECT)
	if got := sp.recv.LargestReceived(); got != pn1 {
		t.Fatalf("largest Handshake packet received %d; want %d, the first of the datagram, not %d", got, pn1, pn2)
	}
	p.connect(t)
}

// draft-ietf-quic-ack-frequency, Section 3: "Endpoints advertise their
// support for receiving ACK_FREQUENCY and IMMEDIATE_ACK frames ... by
// sending the following transport parameter ... min_ack_delay". With
// Config.DisableAckFrequency an endpoint sends none, so a peer sending
// either frame uses an extension that was not negotiated: a
// PROTOCOL_VIOLATION, as RESET_STREAM_AT and DATAGRAM frames are.
// (Before, an ACK_FREQUENCY frame asking for 16 s of ACK delay was
// obeyed.)
func TestSimAckFrequencyNotNegotiated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		ft    wire.FrameType
	}{
		{"ACK_FREQUENCY", wire.AckFrequencyFrame{SequenceNumber: 1, AckElicitingThreshold: 100, RequestedMaxAckDelay: 16_000_000, ReorderingThreshold: 0}.Append(nil), wire.FrameTypeAckFrequency},
		{"IMMEDIATE_ACK", []byte{byte(wire.FrameTypeImmediateAck)}, wire.FrameTypeImmediateAck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newSimPair(t, testLink, &Config{DisableAckFrequency: true}, 133)
			p.connect(t)
			if p.server.c.peerParams.HasMinAckDelay {
				t.Fatal("the client sent min_ack_delay")
			}
			p.injectFrames(p.client, ackhandler.SpaceApplication, tc.frame)
			checkCloseErrors(t, p, wire.RoleServer,
				&TransportError{Code: wire.ProtocolViolation, FrameType: tc.ft},
				&TransportError{Code: wire.ProtocolViolation, FrameType: tc.ft, Remote: true})
		})
	}
}

// RFC 9000, Sections 17.2 and 17.3.1: "Fixed Bit: The next bit (0x40) of
// byte 0 is set to 1. Packets containing a zero value for this bit are
// not valid packets in this version and MUST be discarded." This endpoint
// does not send grease_quic_bit (RFC 9287), so a peer may not clear it.
// The packets are protected with the bit cleared, so that they would
// otherwise authenticate.
func TestSimFixedBitZeroDiscarded(t *testing.T) {
	p := newSimPair(t, testLink, nil, 134)
	runUntilClientHasHandshakeKeys(t, p)
	c, s := p.client.c, p.server.c
	seal := func(sp ackhandler.Space) ([]byte, wire.PacketNumber) {
		pt, _ := s.packetTypeFor(sp)
		pn, pnLen := s.sent.NextPacketNumber(sp)
		var b []byte
		if pt == wire.PacketType1RTT {
			h := wire.ShortHeader{DstConnID: s.peerIDs.active(), KeyPhase: s.oneRTT.KeyPhase() == 1}
			b = h.Append(make([]byte, 0, 1500), pn, pnLen)
		} else {
			h := wire.LongHeader{Type: pt, Version: s.version, DstConnID: s.peerIDs.active(), SrcConnID: s.localConnID}
			b = h.Append(make([]byte, 0, 1500), pn, pnLen)
		}
		b[0] &^= 0x40
		pnOff := len(b) - pnLen
		b = append(b, byte(wire.FrameTypePing), 0, 0, 0, 0)
		return s.sealPacket(p.sim.Now(), b, 0, pnOff, pnLen, pn, sp, pt, false, false), pn
	}
	d, pn := seal(ackhandler.SpaceHandshake)
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	if c.spaces[ackhandler.SpaceHandshake].recv.LargestReceived() == pn {
		t.Error("a Handshake packet with a zero Fixed Bit was processed")
	}
	p.connect(t)
	d, _ = seal(ackhandler.SpaceApplication)
	before := c.packetsReceived
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	if c.packetsReceived != before {
		t.Error("a 1-RTT packet with a zero Fixed Bit was processed")
	}
	if c.closeState != stateActive {
		t.Fatalf("client closed: %v", c.closeErr)
	}
}
