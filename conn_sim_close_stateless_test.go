package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// "An endpoint that has not established state, such as a server that
// detects an error in an Initial packet, does not enter the closing
// state. An endpoint that has no state for the connection does not enter
// a closing or draining period on sending a CONNECTION_CLOSE frame."
// (RFC 9000, Section 10.2.3) A server whose handshake fails before the
// client's address is validated sends its CONNECTION_CLOSE once and is
// closed at once, with no deadline left; one whose client closes then is
// closed at once too, rather than draining. After the address is
// validated, a server closes through the closing period as always.
func TestSimServerClosesStatelesslyBeforeValidation(t *testing.T) {
	t.Run("failing ClientHello", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 81)
		// The client's Initial carries another Source Connection ID than
		// its transport parameters name.
		p.client.c.localConnID = wire.NewConnectionID([]byte{0xbd, 1, 2, 3, 4, 5, 6, 7})
		p.client.endpoint().routes.add(p.client.c.localConnID, p.client.ident)
		p.run(t, time.Second, func() bool { return p.server.c != nil && p.server.c.closeState != stateActive })
		s := p.server.c
		if s.closeState != stateClosed || !s.nextDeadline(p.sim.Now()).IsZero() {
			t.Fatalf("server in state %v with deadline %v; want closed, none", s.closeState, s.nextDeadline(p.sim.Now()))
		}
		sent := p.server.sentOut
		checkCloseErrors(t, p, wire.RoleServer,
			&TransportError{Code: wire.TransportParameterError},
			&TransportError{Code: wire.TransportParameterError, Remote: true})
		p.sim.RunFor(5 * time.Second)
		if p.server.sentOut != sent {
			t.Errorf("the closed server sent %d datagrams more", p.server.sentOut-sent)
		}
	})
	t.Run("client closes during the handshake", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 82)
		// Of the server's first flight only the Initial packet arrives:
		// the client closes having sent Initial packets only.
		p.server.dropOut = func(_ time.Time, d []byte) bool {
			if pkt, _, err := wire.NextPacket(d, 8); err == nil && hasPacketType(pkt, wire.PacketTypeInitial) {
				p.server.inject = append(p.server.inject, append([]byte(nil), pkt...))
			}
			return true
		}
		p.run(t, time.Second, func() bool { return p.client.c.bytesReceived > 0 })
		if p.client.c.sentHandshakePacket {
			t.Fatal("the client sent a Handshake packet")
		}
		p.client.c.closeApplication(p.sim.Now(), 7, "bye")
		p.run(t, time.Second, func() bool { return p.server.c.closeState != stateActive })
		if s := p.server.c; s.closeState != stateClosed || !s.nextDeadline(p.sim.Now()).IsZero() {
			t.Fatalf("server in state %v; want closed at once, not draining", s.closeState)
		}
	})
	t.Run("anti-amplification limit", func(t *testing.T) {
		// A server that spent its allowance of three times what it
		// received sends no CONNECTION_CLOSE: "Prior to validating the
		// client address, servers MUST NOT send more than three times as
		// many bytes as the number of bytes they have received."
		// (RFC 9000, Section 8.1)
		p := newSimPair(t, testLink, nil, 84)
		p.client.dropOut = func(_ time.Time, d []byte) bool { return p.server.c != nil }
		p.run(t, time.Second, func() bool { return p.server.c != nil && p.server.sentOut > 0 })
		s := p.server.c
		now := p.sim.Now()
		s.bytesSent = 3 * s.bytesReceived
		s.closeWithError(now, &TransportError{Code: wire.ProtocolViolation})
		if d, _ := s.pollTransmitOn(now, p.server.buf[:0]); d != nil || s.closeState != stateClosed {
			t.Fatalf("sent %d bytes beyond the limit; state %v", len(d), s.closeState)
		}
		if s.bytesSent != 3*s.bytesReceived {
			t.Errorf("%d bytes counted as sent, %d received", s.bytesSent, s.bytesReceived)
		}
	})
	t.Run("validated", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 83)
		p.connect(t)
		if !p.server.c.addressValidated {
			t.Fatal("address not validated after the handshake")
		}
		p.server.c.closeApplication(p.sim.Now(), 1, "done")
		p.run(t, time.Second, func() bool { return p.server.c.closing != nil && p.server.c.closing.datagram != nil })
		if s := p.server.c; s.closeState != stateClosing || s.nextDeadline(p.sim.Now()).IsZero() {
			t.Fatalf("validated server in state %v; want closing, with a deadline", s.closeState)
		}
	})
}
