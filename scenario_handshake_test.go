package quic

import (
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// Losing any one handshake flight delays the handshake by a probe timeout
// but does not stop it: "When Initial or Handshake keys are available, a
// client MUST arm the PTO timer ... the client MUST set the PTO timer if
// the client has not received an acknowledgment for any of its Handshake
// packets and the handshake is not confirmed" (RFC 9002, Section 6.2.2.1),
// and "When a PTO timer expires, a sender MUST send at least one
// ack-eliciting packet in the packet number space as a probe" (Section
// 6.2.4).
func TestSimHandshakeFlightLoss(t *testing.T) {
	// flight drops what e sends within 2 ms of its first datagram that
	// match: a whole flight, however many datagrams it takes (the
	// ClientHello with a post-quantum key share takes two).
	flight := func(e *simEndpoint, match func(d []byte) bool) func(time.Time, []byte) bool {
		var first time.Time
		return func(now time.Time, d []byte) bool {
			if !match(d) {
				return false
			}
			if first.IsZero() {
				first = now
			}
			return now.Sub(first) < 2*time.Millisecond
		}
	}
	any := func([]byte) bool { return true }
	tests := []struct {
		name  string
		setup func(p *simPair) *simEndpoint // returns the endpoint that drops
		// minTime is the least time the handshake can take: a lost
		// flight that nothing acknowledged after it is only resent when
		// the probe timeout fires, about 1 s before an RTT sample
		// (kInitialRtt = 333 ms, RFC 9002, Section 6.2.2).
		minTime time.Duration
	}{
		{
			name: "client's first Initial datagram",
			setup: func(p *simPair) *simEndpoint {
				// Its loss is detected when the second is acknowledged.
				p.client.dropOut = func(time.Time, []byte) bool { return p.client.droppedOut+p.client.sentOut == 0 }
				return p.client
			},
		},
		{
			name: "client's Initial flight",
			setup: func(p *simPair) *simEndpoint {
				p.client.dropOut = flight(p.client, any)
				return p.client
			},
			minTime: 900 * time.Millisecond,
		},
		{
			name: "server's first flight",
			setup: func(p *simPair) *simEndpoint {
				// ACK, ServerHello, EncryptedExtensions, certificate,
				// as far as the amplification limit lets the server go.
				p.server.dropOut = flight(p.server, any)
				return p.server
			},
			minTime: 900 * time.Millisecond,
		},
		{
			name: "client's Handshake flight",
			setup: func(p *simPair) *simEndpoint {
				// The client's Finished: the datagrams with Handshake
				// packets it sends once its handshake is complete.
				p.client.dropOut = flight(p.client, func(d []byte) bool {
					return p.client.c.handshakeComplete && hasPacketType(d, wire.PacketTypeHandshake)
				})
				return p.client
			},
			// The client's probe timeout, with an RTT sample: about
			// 3 RTT instead of 2.
			minTime: 60 * time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newSimPair(t, testLink, nil, 21)
			e := tt.setup(p)
			p.run(t, 10*time.Second, p.confirmed)
			if e.droppedOut == 0 {
				t.Fatal("the filter dropped nothing")
			}
			if el := p.sim.Elapsed(); el < tt.minTime || el > 3*time.Second {
				t.Errorf("handshake took %v, want between %v and 3 s", el, tt.minTime)
			}
			for _, c := range []*connState{p.client.c, p.server.c} {
				if c.closeState != stateActive {
					t.Fatalf("%v closed: %v", c.role, c.closeErr)
				}
			}
			t.Logf("confirmed after %v, %d datagrams dropped", p.sim.Elapsed(), e.droppedOut)
		})
	}
}

// Both ends give up a handshake that makes no progress, after
// Config.HandshakeIdleTimeout (5 s by default) without receiving anything,
// with a *HandshakeTimeoutError, a net.Error whose Timeout() is true.
// RFC 9000, Section 10.1: "the connection is silently closed and its state
// is discarded when it remains idle for longer than" the idle timeout.
func TestSimHandshakeTimeout(t *testing.T) {
	t.Run("server unreachable", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 22)
		p.server.dropIn = func(time.Time, *netsim.Datagram) bool { return true }
		p.run(t, time.Minute, func() bool { return p.client.c.closeState == stateClosed })
		checkHandshakeTimeout(t, p.client.c)
		if el := p.sim.Elapsed(); el < 5*time.Second || el > 5*time.Second+10*time.Millisecond {
			t.Errorf("client gave up after %v, want 5 s", el)
		}
		if p.client.sentOut < 2 {
			t.Errorf("client sent %d datagrams, want probes after the first", p.client.sentOut)
		}
	})
	t.Run("client vanishes", func(t *testing.T) {
		p := newSimPair(t, testLink, nil, 23)
		p.client.dropOut = func(time.Time, []byte) bool { return p.client.sentOut > 0 }
		p.run(t, time.Minute, func() bool { return p.server.c != nil && p.server.c.closeState == stateClosed })
		checkHandshakeTimeout(t, p.server.c)
		// The server heard the client's first datagram 10 ms in.
		if el := p.sim.Elapsed(); el < 5*time.Second+10*time.Millisecond || el > 5*time.Second+20*time.Millisecond {
			t.Errorf("server gave up after %v, want 5 s after the client's datagram", el)
		}
		p.sim.RunFor(time.Minute)
		checkHandshakeTimeout(t, p.client.c)
	})
}

func checkHandshakeTimeout(t *testing.T, c *connState) {
	t.Helper()
	if c.closeState != stateClosed {
		t.Fatalf("%v: state %v after a minute", c.role, c.closeState)
	}
	var he *HandshakeTimeoutError
	if !errors.As(c.closeErr, &he) || !he.Timeout() {
		t.Fatalf("%v closed with %v, want *HandshakeTimeoutError", c.role, c.closeErr)
	}
}

// Version negotiation (RFC 9000, Section 6.2): "A client that supports
// only this version MUST abandon the current connection attempt if it
// receives a Version Negotiation packet, with the following two
// exceptions. A client MUST discard any Version Negotiation packet if it
// has received and successfully processed any other packet, including an
// earlier Version Negotiation packet. A client MUST discard a Version
// Negotiation packet that lists the QUIC version selected by the client."
func TestSimVersionNegotiation(t *testing.T) {
	const unsupported wire.Version = 0x1a2a3a4a
	run := func(t *testing.T, listed []wire.Version) *simPair {
		t.Helper()
		p := newSimPairOpts(t, testLink, 24, simPairOpts{client: &Config{Versions: []wire.Version{unsupported}}, version: unsupported})
		vnServer := &vnEndpoint{versions: listed}
		p.snode.Detach()
		p.snode = p.net.Attach(netsim.Addr{Host: 2, Port: 443}, vnServer)
		p.sim.RunFor(30 * time.Second)
		if vnServer.answered == 0 {
			t.Fatal("the client's first datagram did not look like a connection attempt of an unknown version")
		}
		return p
	}
	t.Run("abandon", func(t *testing.T) {
		p := run(t, []wire.Version{wire.Version1, wire.Version2})
		c := p.client.c
		var ve *VersionNegotiationError
		if c.closeState != stateClosed || !errors.As(c.closeErr, &ve) {
			t.Fatalf("client: state %v, error %v, want *VersionNegotiationError", c.closeState, c.closeErr)
		}
		if len(ve.Theirs) != 2 || ve.Theirs[0] != wire.Version1 || ve.Theirs[1] != wire.Version2 ||
			len(ve.Ours) != 1 || ve.Ours[0] != unsupported {
			t.Errorf("error %+v", ve)
		}
		if p.client.lastSent != netsim.Epoch() {
			t.Errorf("client sent datagrams until %v, want nothing after its first flight", p.client.lastSent.Sub(netsim.Epoch()))
		}
	})
	t.Run("own version listed", func(t *testing.T) {
		p := run(t, []wire.Version{wire.Version1, unsupported})
		// The Version Negotiation packet is discarded; the attempt
		// times out instead.
		var he *HandshakeTimeoutError
		if c := p.client.c; !errors.As(c.closeErr, &he) {
			t.Fatalf("client closed with %v, want the handshake timeout", c.closeErr)
		}
	})
}

// A Version Negotiation packet after the server answered is ignored: "A
// client MUST discard any Version Negotiation packet if it has received
// and successfully processed any other packet" (RFC 9000, Section 6.2).
func TestSimVersionNegotiationAfterHandshake(t *testing.T) {
	p := newSimPair(t, testLink, nil, 25)
	p.connect(t)
	c := p.client.c
	vn := wire.AppendVersionNegotiation(nil, 0x55, c.localConnID.Bytes(), c.origDstConnID.Bytes(), []wire.Version{wire.Version2})
	c.handleDatagram(p.sim.Now(), vn, ackhandler.NotECT)
	p.sim.RunFor(time.Second)
	if c.closeState != stateActive {
		t.Fatalf("client closed: %v", c.closeErr)
	}
}

// vnEndpoint is a server that knows no connection: it answers every
// long-header datagram that could start a connection with a Version
// Negotiation packet listing versions (RFC 9000, Section 6.1), even one
// listing the version the client used, as an attacker could.
type vnEndpoint struct {
	versions []wire.Version
	pending  [][]byte
	to       []netsim.Addr
	answered int
}

func (e *vnEndpoint) HandleDatagram(now time.Time, d *netsim.Datagram) {
	hdr, err := wire.ParseInvariantHeader(d.Payload, 0)
	if err != nil || !wire.IsLongHeader(d.Payload[0]) || len(d.Payload) < 1200 {
		return
	}
	e.answered++
	e.pending = append(e.pending, wire.AppendVersionNegotiation(nil, 0x55, hdr.SrcConnID, hdr.DstConnID, e.versions))
	e.to = append(e.to, d.Src)
}

func (e *vnEndpoint) HandleTimeout(time.Time) {}

func (e *vnEndpoint) PollTransmit(now time.Time, out *netsim.Outbox) {
	for i, b := range e.pending {
		out.Send(e.to[i], b, netsim.NotECT)
	}
	e.pending, e.to = nil, nil
}

func (e *vnEndpoint) NextDeadline() time.Time { return time.Time{} }
