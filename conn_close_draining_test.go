package quic

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// checkCloseErrors checks the errors both ends of a closed connection
// report: the closer's own (Remote false) and what the peer learned from
// CONNECTION_CLOSE (Remote true). RFC 9000, Section 10.2: "An endpoint
// sends a CONNECTION_CLOSE frame (Section 19.19) to terminate the
// connection immediately." Section 10.2.2: "The draining state is entered
// once an endpoint receives a CONNECTION_CLOSE frame, which indicates that
// its peer is closing or draining."
func checkCloseErrors(t *testing.T, p *simPair, closer wire.Role, local, remote error) {
	t.Helper()
	p.run(t, 10*time.Second, p.bothClosed)
	byRole := map[wire.Role]*connState{wire.RoleClient: p.client.c, wire.RoleServer: p.server.c}
	for c, want := range map[*connState]error{byRole[closer]: local, byRole[closer.Peer()]: remote} {
		if !sameCloseError(c.closeErr, want) {
			t.Errorf("%v: closed with %#v, want %#v", c.role, c.closeErr, want)
		}
	}
}

func sameCloseError(got, want error) bool {
	switch w := want.(type) {
	case *TransportError:
		g, ok := got.(*TransportError)
		return ok && g.Code == w.Code && g.Remote == w.Remote && (w.FrameType == 0 || g.FrameType == w.FrameType) &&
			(w.Reason == "" || g.Reason == w.Reason)
	case *ApplicationError:
		g, ok := got.(*ApplicationError)
		return ok && *g == *w
	}
	return false
}

// onlyInitialOf keeps only the leading Initial packet of the datagrams
// the server sends: the client gets the ServerHello (and so Handshake
// keys) but none of the server's Handshake packets, so its handshake
// stays in progress.
func onlyInitialOf(p *simPair) {
	p.client.dropIn = func(_ time.Time, d *netsim.Datagram) bool {
		if !wire.IsLongHeader(d.Payload[0]) {
			return true
		}
		pkt, _, err := wire.NextPacket(d.Payload, 8)
		if err != nil {
			return true
		}
		if pt, _ := wire.PacketTypeOf(pkt); pt != wire.PacketTypeInitial {
			return true
		}
		d.Payload = pkt
		return false
	}
}

func TestSimConnectionClose(t *testing.T) {
	// RFC 9000, Section 10.2.3: "When an application wishes to abandon a
	// connection during the handshake, an endpoint can send a
	// CONNECTION_CLOSE frame (type 0x1c) with an error code of
	// APPLICATION_ERROR in an Initial or Handshake packet." and "a
	// CONNECTION_CLOSE of type 0x1d MUST be replaced by a CONNECTION_CLOSE
	// of type 0x1c when sending the frame in Initial or Handshake packets".
	t.Run("client closes during the handshake", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 41)
		onlyInitialOf(p)
		p.run(t, 2*time.Second, func() bool {
			return p.client.c.spaces[ackhandler.SpaceHandshake].open != nil
		})
		if p.client.c.handshakeComplete {
			t.Fatal("handshake complete")
		}
		p.client.c.closeApplication(p.sim.Now(), 0x77, "changed my mind")
		checkCloseErrors(t, p, wire.RoleClient,
			&ApplicationError{Code: 0x77, Reason: "changed my mind"},
			&TransportError{Code: wire.ApplicationError, Remote: true})
		if p.server.c.handshakeComplete {
			t.Error("server completed the handshake")
		}
	})
	t.Run("server closes during the handshake", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 42)
		p.run(t, 2*time.Second, func() bool { return p.server.c != nil })
		if p.server.c.handshakeComplete {
			t.Fatal("handshake complete")
		}
		p.server.c.closeApplication(p.sim.Now(), 0x78, "go away")
		checkCloseErrors(t, p, wire.RoleServer,
			&ApplicationError{Code: 0x78, Reason: "go away"},
			&TransportError{Code: wire.ApplicationError, Remote: true})
		if p.server.c.handshakeComplete {
			t.Error("server completed the handshake")
		}
	})
	t.Run("server closes after the handshake", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 43)
		p.connect(t)
		p.server.c.closeApplication(p.sim.Now(), 0x79, "done")
		checkCloseErrors(t, p, wire.RoleServer,
			&ApplicationError{Code: 0x79, Reason: "done"},
			&ApplicationError{Code: 0x79, Reason: "done", Remote: true})
	})
	// RFC 9000, Section 19.20: "A server MUST treat receipt of a
	// HANDSHAKE_DONE frame as a connection error of type
	// PROTOCOL_VIOLATION."
	t.Run("client sends HANDSHAKE_DONE", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 44)
		p.connect(t)
		p.injectFrames(p.client, ackhandler.SpaceApplication, []byte{byte(wire.FrameTypeHandshakeDone)})
		checkCloseErrors(t, p, wire.RoleServer,
			&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeHandshakeDone},
			&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeHandshakeDone, Remote: true})
	})
	// RFC 9000, Section 12.4: "An endpoint MUST treat receipt of a frame
	// in a packet type that is not permitted as a connection error of
	// type PROTOCOL_VIOLATION." STREAM frames are 1-RTT and 0-RTT only.
	t.Run("STREAM frame in a Handshake packet", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 45)
		// Hold the client's Handshake flight back so that the server still
		// reads Handshake packets when the forged one arrives.
		p.client.dropOut = func(_ time.Time, d []byte) bool { return hasPacketType(d, wire.PacketTypeHandshake) }
		p.run(t, 2*time.Second, func() bool { return p.client.c.handshakeComplete })
		p.client.dropOut = nil
		frame := wire.StreamFrame{StreamID: 0, Data: []byte("early"), HasLength: true}.Append(nil)
		p.injectFrames(p.client, ackhandler.SpaceHandshake, frame)
		checkCloseErrors(t, p, wire.RoleServer,
			&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeStream | 0x2},
			&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeStream | 0x2, Remote: true})
	})
	// A closed connection answers the peer's further packets with
	// CONNECTION_CLOSE while closing, then goes quiet: "An endpoint in the
	// closing state sends a packet containing a CONNECTION_CLOSE frame in
	// response to any incoming packet" and "While otherwise identical to
	// the closing state, an endpoint in the draining state MUST NOT send
	// any packets." (RFC 9000, Sections 10.2.1 and 10.2.2)
	t.Run("closing answers, draining is silent", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 46)
		p.connect(t)
		// The close reaches the server only after the client sent a few
		// more packets, which the closed server answers.
		p.server.c.closeApplication(p.sim.Now(), 1, "")
		serverSent := p.server.sentOut
		p.client.dropIn = func(time.Time, *netsim.Datagram) bool { return p.client.droppedIn < 1 }
		s, _, _ := p.client.c.streams.openStream(true)
		simWrite(s, []byte("are you there?"))
		p.run(t, 5*time.Second, func() bool { return p.client.c.closeState != stateActive })
		if p.client.c.closeState != stateDraining {
			t.Fatalf("client state %v, want draining", p.client.c.closeState)
		}
		if n := p.server.sentOut - serverSent; n < 2 {
			t.Errorf("closing server sent %d datagrams, want its CONNECTION_CLOSE and an answer to the client's next packet", n)
		}
		sent := p.client.sentOut
		p.run(t, 5*time.Second, p.bothClosed)
		if p.client.sentOut != sent {
			t.Errorf("draining client sent %d datagrams", p.client.sentOut-sent)
		}
	})
}

// A server that lost the connection's state answers its packets with a
// stateless reset made from the same static key, and the client gives up:
// "If the last 16 bytes of the datagram are identical in value to a
// stateless reset token, the endpoint MUST enter the draining period and
// not send any further packets on this connection." (RFC 9000,
// Section 10.3.1)
func TestSimStatelessReset(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	for _, tt := range []struct {
		name      string
		resetKey  []byte
		wantReset bool
	}{
		{"same key", key, true},
		// "An endpoint MUST NOT check for any stateless reset tokens
		// associated with connection IDs it has not used" and a token
		// from another key matches none: the datagram is just
		// undecryptable.
		{"other key", bytes.Repeat([]byte{1}, 32), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Without PMTU probes, which would add datagrams of their own.
			p := newSimPair(t, testLink, &Config{MaxIdleTimeout: 10 * time.Second, DisablePathMTUDiscovery: true}, 47)
			var err error
			if p.server.resetter, err = handshake.NewStatelessResetter(key); err != nil {
				t.Fatal(err)
			}
			p.connect(t)
			// What follows confirmation (the client's spare connection
			// IDs, acknowledgments) goes before the server reboots.
			settled := p.sim.Now().Add(100 * time.Millisecond)
			p.run(t, time.Second, func() bool { return !p.sim.Now().Before(settled) })
			if tok, ok := p.client.c.peerParams.StatelessResetToken, p.client.c.peerParams.HasStatelessResetToken; !ok || tok != p.server.resetter.Token(p.server.c.localConnID) {
				t.Fatal("server's stateless_reset_token is not derived from the key")
			}
			// The server reboots: a fresh endpoint at its address that
			// knows the key and no connection; it answers short-header
			// datagrams with stateless resets (endpoint.statelessReset).
			rs, _ := handshake.NewStatelessResetter(tt.resetKey)
			reset := &simEndpoint{t: t, serverCfg: (*Config)(nil).withDefaults(), resetter: rs, seed: 48, buf: make([]byte, 0, 1500)}
			p.snode.Detach()
			p.snode = p.net.Attach(netsim.Addr{Host: 2, Port: 443}, reset)
			s, _, _ := p.client.c.streams.openStream(true)
			simWrite(s, []byte("hello?"))
			p.run(t, time.Minute, func() bool { return p.client.c.closeState == stateClosed })
			if reset.stats.resetsSent.Load() == 0 {
				t.Fatal("no stateless reset sent")
			}
			var se *StatelessResetError
			if got := errors.As(p.client.c.closeErr, &se); got != tt.wantReset {
				t.Fatalf("client closed with %v", p.client.c.closeErr)
			}
			// The reset came through the client's endpoint, which found
			// the connection by the token that ends it (endpoint.handle).
			if got := p.client.routed[routeReset] == 1; got != tt.wantReset {
				t.Errorf("client's endpoint routed %d datagrams by their reset token", p.client.routed[routeReset])
			}
			if !tt.wantReset {
				if _, ok := p.client.c.closeErr.(*IdleTimeoutError); !ok {
					t.Fatalf("client closed with %v, want idle timeout", p.client.c.closeErr)
				}
				return
			}
			if reset.received != 1 {
				t.Errorf("client sent %d datagrams after the stateless reset, want none", reset.received-1)
			}
		})
	}
}
