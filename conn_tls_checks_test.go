package quic

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// TLS-level violations close with the codes RFC 9001 names, not with
// crypto/tls's internal_error (CRYPTO_ERROR 0x150).

// tlsMessage returns a TLS handshake message of type typ with body.
func tlsMessage(typ byte, body []byte) []byte {
	b := []byte{typ, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}
	return append(b, body...)
}

// newSessionTicket returns a NewSessionTicket message (RFC 8446, Section
// 4.6.1), with an early_data extension carrying maxEarly if withEarly.
func newSessionTicket(withEarly bool, maxEarly uint32) []byte {
	body := []byte{0, 0, 0x0e, 0x10} // ticket_lifetime: 3600 s
	body = append(body, 1, 2, 3, 4)  // ticket_age_add
	body = append(body, 1, 0)        // ticket_nonce<0..255>
	ticket := []byte("an opaque ticket")
	body = binary.BigEndian.AppendUint16(body, uint16(len(ticket)))
	body = append(body, ticket...)
	var ext []byte
	if withEarly {
		ext = binary.BigEndian.AppendUint16(ext, 42) // early_data
		ext = binary.BigEndian.AppendUint16(ext, 4)
		ext = binary.BigEndian.AppendUint32(ext, maxEarly)
	}
	body = binary.BigEndian.AppendUint16(body, uint16(len(ext)))
	return tlsMessage(4, append(body, ext...))
}

// injectPostHandshake sends msg from the sender of p, in 1-RTT CRYPTO data
// continuing what the receiver read so far, after the handshake.
func injectPostHandshake(p *simPair, from *simEndpoint, msg []byte) {
	to := p.server.c
	if from == p.server {
		to = p.client.c
	}
	var off uint64
	if cs := to.spaces[ackhandler.SpaceApplication].crypto; cs != nil {
		off = cs.recv.readOffset()
	}
	p.injectFrames(from, ackhandler.SpaceApplication, wire.CryptoFrame{Offset: off, Data: msg}.Append(nil))
}

// settledPair returns a connected pair whose server sends no session
// ticket, after the handshake settled.
func settledPair(t *testing.T, seed uint64) (*simPair, *countingCache) {
	ctls, stls, cache := resumeTLS(t)
	stls.SessionTicketsDisabled = true
	p := newSimPairOpts(t, testLink, seed, simPairOpts{ctls: ctls, stls: stls})
	p.connect(t)
	p.sim.RunFor(100 * time.Millisecond)
	return p, cache
}

// RFC 9001, Section 4.6.1: "Servers MUST NOT send the early_data extension
// with a max_early_data_size field set to any value other than 0xffffffff.
// A client MUST treat receipt of a NewSessionTicket that contains an
// early_data extension with any other value as a connection error of type
// PROTOCOL_VIOLATION." A value of 0 was accepted and the ticket stored;
// others closed with CRYPTO_ERROR 0x12f (illegal_parameter).
func TestSimNewSessionTicketMaxEarlyDataSize(t *testing.T) {
	for _, tc := range []struct {
		name      string
		withEarly bool
		maxEarly  uint32
		ok        bool
	}{
		{"0xffffffff", true, 0xffffffff, true},
		{"no early_data", false, 0, true},
		{"0", true, 0, false},
		{"16384", true, 16384, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, cache := settledPair(t, 150)
			before := cache.stored()
			injectPostHandshake(p, p.server, newSessionTicket(tc.withEarly, tc.maxEarly))
			if tc.ok {
				p.run(t, time.Second, func() bool { return cache.stored() > before })
				if c := p.client.c; c.closeState != stateActive {
					t.Fatalf("client closed: %v", c.closeErr)
				}
				return
			}
			checkCloseErrors(t, p, wire.RoleClient,
				&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto},
				&TransportError{Code: wire.ProtocolViolation, Remote: true})
			if cache.stored() != before {
				t.Error("the client stored the ticket")
			}
		})
	}
}

// RFC 9001, Section 6: "Endpoints MUST NOT send a TLS KeyUpdate message.
// Endpoints MUST treat the receipt of a TLS KeyUpdate message as a
// connection error of type 0x010a, equivalent to a fatal TLS alert of
// unexpected_message". A client receiving one closed with 0x150.
func TestSimTLSKeyUpdateMessage(t *testing.T) {
	keyUpdate := tlsMessage(24, []byte{0}) // update_not_requested
	for _, from := range []string{"server", "client"} {
		t.Run("from "+from, func(t *testing.T) {
			p, _ := settledPair(t, 151)
			sender, receiver := p.server, wire.RoleClient
			if from == "client" {
				sender, receiver = p.client, wire.RoleServer
			}
			injectPostHandshake(p, sender, keyUpdate)
			checkCloseErrors(t, p, receiver,
				&TransportError{Code: wire.CryptoError(10)},
				&TransportError{Code: wire.CryptoError(10), Remote: true})
		})
	}
}

// RFC 9001, Section 4.4: "servers MUST NOT send post-handshake TLS
// CertificateRequest messages, and clients MUST treat receipt of such
// messages as a connection error of type PROTOCOL_VIOLATION."
func TestSimPostHandshakeCertificateRequest(t *testing.T) {
	p, _ := settledPair(t, 152)
	// certificate_request_context<0..255>, extensions<2..2^16-1> with
	// signature_algorithms (ecdsa_secp256r1_sha256).
	body := []byte{1, 7, 0, 8, 0, 13, 0, 4, 0, 2, 4, 3}
	injectPostHandshake(p, p.server, tlsMessage(13, body))
	checkCloseErrors(t, p, wire.RoleClient,
		&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto},
		&TransportError{Code: wire.ProtocolViolation, Remote: true})
}

// A post-handshake message split over several CRYPTO frames is checked
// once whole, and a valid one split so still reaches TLS.
func TestSimPostHandshakeMessageSplit(t *testing.T) {
	p, cache := settledPair(t, 153)
	msg := newSessionTicket(true, 0xffffffff)
	cs := p.client.c.spaces[ackhandler.SpaceApplication].crypto
	var off uint64
	if cs != nil {
		off = cs.recv.readOffset()
	}
	before := cache.stored()
	for i := 0; i < len(msg); i += 5 {
		frame := wire.CryptoFrame{Offset: off + uint64(i), Data: msg[i:min(i+5, len(msg))]}.Append(nil)
		p.injectFrames(p.server, ackhandler.SpaceApplication, frame)
		p.sim.RunFor(time.Millisecond)
	}
	p.run(t, time.Second, func() bool { return cache.stored() > before })

	bad := newSessionTicket(true, 1)
	off += uint64(len(msg))
	for i := 0; i < len(bad); i += 7 {
		frame := wire.CryptoFrame{Offset: off + uint64(i), Data: bad[i:min(i+7, len(bad))]}.Append(nil)
		p.injectFrames(p.server, ackhandler.SpaceApplication, frame)
	}
	checkCloseErrors(t, p, wire.RoleClient,
		&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto},
		&TransportError{Code: wire.ProtocolViolation, Remote: true})
}

// RFC 9001, Section 4.1.3: "If the packet is from a previously installed
// encryption level, it MUST NOT contain data that extends past the end of
// previously received data in that flow. Implementations MUST treat any
// violations of this requirement as a connection error of type
// PROTOCOL_VIOLATION." The client has processed the ServerHello and reads
// Handshake packets; an Initial packet then brings new CRYPTO data.
func TestSimCryptoDataAtPreviousLevel(t *testing.T) {
	p := newSimPair(t, testLink, nil, 154)
	onlyInitialOf(p)
	runUntilClientHasHandshakeKeys(t, p)
	c, s := p.client.c, p.server.c
	if c.spaces[ackhandler.SpaceInitial].discarded {
		t.Fatal("the client discarded its Initial keys")
	}
	end := c.spaces[ackhandler.SpaceInitial].crypto.recv.highest()
	// A retransmission of what was received is fine.
	old := wire.CryptoFrame{Offset: end - 4, Data: make([]byte, 4)}.Append(nil)
	d, _ := sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceInitial, s.localConnID, nil, old)
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	if c.closeState != stateActive {
		t.Fatalf("a retransmission at the previous level closed the connection: %v", c.closeErr)
	}
	frame := wire.CryptoFrame{Offset: end, Data: []byte("more")}.Append(nil)
	d, _ = sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceInitial, s.localConnID, nil, frame)
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	p.client.dropIn = nil
	checkCloseErrors(t, p, wire.RoleClient,
		&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto},
		&TransportError{Code: wire.ProtocolViolation, Remote: true})
}

// RFC 9001, Section 4.1.3: "When TLS provides keys for a higher encryption
// level, if there is data from a previous encryption level that TLS has
// not consumed, this MUST be treated as a connection error of type
// PROTOCOL_VIOLATION." Here the server's Initial CRYPTO data has a piece
// beyond the ServerHello, which the client buffered out of order before
// the ServerHello gave it Handshake keys.
func TestSimCryptoDataLeftAtPreviousLevel(t *testing.T) {
	p := newSimPair(t, testLink, nil, 155)
	c := p.client.c
	p.client.dropIn = func(time.Time, *netsim.Datagram) bool { return true }
	p.run(t, time.Second, func() bool { return p.server.c != nil && p.server.c.packetsSent > 0 })
	s := p.server.c
	frame := wire.CryptoFrame{Offset: 3000, Data: []byte("beyond the ServerHello")}.Append(nil)
	d, _ := sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceInitial, s.localConnID, nil, frame)
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	if c.closeState != stateActive {
		t.Fatalf("client closed: %v", c.closeErr)
	}
	p.client.dropIn = nil
	checkCloseErrors(t, p, wire.RoleClient,
		&TransportError{Code: wire.ProtocolViolation},
		&TransportError{Code: wire.ProtocolViolation, Remote: true})
}
