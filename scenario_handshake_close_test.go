package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// A server whose handshake completes in the same batch of datagrams as
// the client's CONNECTION_CLOSE (a client that connects and leaves at
// once) issues no spare connection IDs and seals no NEW_TOKEN token: they
// are made when a packet is built, and a draining connection builds none.
// A connection that lives on gets both with its HANDSHAKE_DONE.
func TestSimHandshakeEndingWithClose(t *testing.T) {
	// The server's endpoint gives its connection NEW_TOKEN tokens of
	// simTokenKey (simEndpoint.endpoint).
	tokens, err := handshake.NewTokenProtector(simTokenKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, closeAtOnce := range []bool{false, true} {
		p := newSimPair(t, testLink, &Config{}, 1)
		var held [][]byte
		p.client.dropOut = func(_ time.Time, d []byte) bool {
			if !p.client.c.handshakeComplete {
				return false
			}
			held = append(held, append([]byte(nil), d...))
			return true
		}
		p.run(t, time.Second, func() bool { return len(held) > 0 })
		if closeAtOnce {
			p.client.c.closeApplication(p.sim.Now(), 0, "")
			p.run(t, time.Second, func() bool { return len(held) > 1 })
		}
		srv := p.server.c
		now := p.sim.Now()
		addrs := srv.activePath().addrs
		for _, d := range held {
			srv.handleDatagramOn(now, pathAddrs{local: addrs.local, remote: addrs.remote}, d, ackhandler.NotECT)
		}
		if !srv.handshakeConfirmed {
			t.Fatalf("close %v: the server's handshake is not confirmed", closeAtOnce)
		}
		var sent int
		for {
			d, _ := srv.pollTransmitOn(now, p.server.buf[:0])
			if d == nil {
				break
			}
			sent++
		}
		issued := len(srv.localIDs.ids)
		if closeAtOnce {
			if srv.closeState != stateDraining || sent != 0 {
				t.Errorf("close: state %v, %d datagrams sent, want draining and none", srv.closeState, sent)
			}
			if issued != 1 || srv.newToken != nil {
				t.Errorf("close: %d connection IDs issued, token %x; want 1 and none", issued, srv.newToken)
			}
			continue
		}
		if sent == 0 || srv.handshakeDoneToSend || srv.newTokenToSend {
			t.Errorf("open: %d datagrams sent, HANDSHAKE_DONE pending %v, NEW_TOKEN pending %v", sent, srv.handshakeDoneToSend, srv.newTokenToSend)
		}
		if want := int(min(srv.peerParams.ActiveConnectionIDLimit, connIDDefaultLocalMax)); issued != want {
			t.Errorf("open: %d connection IDs issued, want %d", issued, want)
		}
		if _, err := tokens.Open(srv.newToken, addrs.remote, now, time.Minute, time.Hour); err != nil {
			t.Errorf("open: the NEW_TOKEN token does not validate: %v", err)
		}
	}
}

// A server whose first flight is lost answers the client's next Initial
// that brings no new CRYPTO data (here a PING, the probe of a client
// without Handshake keys, RFC 9002, Section 6.2.2.1) with that flight's
// Initial CRYPTO data at once, rather than at its own probe timeout, a
// second later (RFC 9002, Section 6.2.3). The handshake is then
// confirmed within a few round trips (the Handshake packets lost with the
// flight go again once the ACK of the resent Initial shows them lost),
// not after the server's probe timeout.
func TestSimServerResendsInitialOnClientProbe(t *testing.T) {
	p := newSimPair(t, testLink, &Config{}, 1)
	dropping := true
	p.server.dropOut = func(time.Time, []byte) bool { return dropping }
	var probeAt time.Time
	p.server.dropIn = func(now time.Time, d *netsim.Datagram) bool {
		if !dropping && probeAt.IsZero() && hasPacketType(d.Payload, wire.PacketTypeInitial) {
			probeAt = now
		}
		return false
	}
	p.run(t, time.Second, func() bool { return p.server.droppedOut > 0 })
	p.sim.RunFor(200 * time.Millisecond) // well before either probe timeout
	if p.client.c.sent.PTOCount() != 0 || p.server.c.sent.PTOCount() != 0 {
		t.Fatal("a probe timeout expired already")
	}
	dropping = false
	// PING and PADDING: a client's Initial datagrams carry at least 1200
	// bytes (RFC 9000, Section 14.1).
	p.injectFrames(p.client, ackhandler.SpaceInitial, append([]byte{byte(wire.FrameTypePing)}, make([]byte, 1200)...))
	p.connect(t)
	if probeAt.IsZero() {
		t.Fatal("the probe did not arrive")
	}
	if d := p.sim.Now().Sub(probeAt); d > 10*testLink.Delay {
		t.Errorf("the handshake was confirmed %v after the client's probe (in 215 ms without the early resend)", d)
	}
}

// "A server MUST discard an Initial packet that is carried in a UDP
// datagram with a payload that is smaller than the smallest allowed
// maximum datagram size of 1200 bytes." (RFC 9000, Section 14.1). Such a
// packet neither counts as received nor, carrying a PING, makes the server
// resend its Initial flight early: a few dozen bytes must not draw a
// padded 1200-byte datagram (RFC 9002, Section 6.2.3 is for the client's
// real Initial packets).
func TestSimServerDiscardsSmallInitial(t *testing.T) {
	p := newSimPair(t, testLink, &Config{}, 1)
	dropping := true
	p.server.dropOut = func(time.Time, []byte) bool { return dropping }
	p.run(t, time.Second, func() bool { return p.server.droppedOut > 0 })
	p.sim.RunFor(200 * time.Millisecond) // well before either probe timeout
	dropping = false
	srv := p.server.c
	largest := srv.spaces[ackhandler.SpaceInitial].recv.LargestReceived()
	sent := p.server.sentOut
	p.injectFrames(p.client, ackhandler.SpaceInitial, []byte{byte(wire.FrameTypePing)})
	if n := len(p.client.inject[0]); n >= minInitialPacketSize {
		t.Fatalf("the injected datagram has %d bytes", n)
	}
	p.sim.RunFor(testLink.Delay + 5*time.Millisecond) // the packet arrived, no answer yet
	if srv.sent.PTOCount() != 0 {
		t.Fatal("a probe timeout expired already")
	}
	if got := srv.spaces[ackhandler.SpaceInitial].recv.LargestReceived(); got != largest {
		t.Errorf("the small Initial packet was processed: largest received %d, was %d", got, largest)
	}
	if n := p.server.sentOut - sent; n != 0 {
		t.Errorf("the server answered the small Initial packet with %d datagrams", n)
	}
}
