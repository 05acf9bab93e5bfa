package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// Peer-controlled state stays bounded: a peer that tries to exceed a limit
// gets the connection closed with the error the RFC names, or its excess
// is dropped where the RFC allows it (never data in an acknowledged packet
// that the application would read). (Connection IDs issued to us:
// TestPeerConnIDsLimit; fragmented stream and CRYPTO data:
// TestSimHostileTinyStreamFrames, TestSimHostileTinyCryptoFrames and
// TestRecvBufferFragmentation; TestRecvBufferCapacityLimit.)

// Opening a stream beyond the advertised limit: "An endpoint that
// receives a frame with a stream ID exceeding the limit it has sent MUST
// treat this as a connection error of type STREAM_LIMIT_ERROR" (RFC 9000,
// Section 4.6).
func TestHostileStreamBeyondLimit(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 10}, 61)
	p.connect(t)
	// Client-initiated bidirectional stream number 10 (the 11th).
	frame := wire.StreamFrame{StreamID: wire.StreamID(4 * 10), Data: []byte("x"), HasLength: true}.Append(nil)
	p.injectFrames(p.client, ackhandler.SpaceApplication, frame)
	checkCloseErrors(t, p, wire.RoleServer,
		&TransportError{Code: wire.StreamLimitError},
		&TransportError{Code: wire.StreamLimitError, Remote: true})
}

// Stream data past the flow-control window: "A receiver MUST close the
// connection with an error of type FLOW_CONTROL_ERROR if the sender
// violates the advertised connection or stream data limits" (RFC 9000,
// Section 4.1), however far out of order it is.
func TestHostileStreamDataBeyondWindow(t *testing.T) {
	p := newSimPair(t, testLink, &Config{InitialStreamReceiveWindow: 64 << 10}, 62)
	p.connect(t)
	frame := wire.StreamFrame{StreamID: 0, Offset: 64 << 10, Data: []byte("x"), HasLength: true}.Append(nil)
	p.injectFrames(p.client, ackhandler.SpaceApplication, frame)
	checkCloseErrors(t, p, wire.RoleServer,
		&TransportError{Code: wire.FlowControlError},
		&TransportError{Code: wire.FlowControlError, Remote: true})
}

// CRYPTO data the endpoint cannot buffer: "Implementations MUST support
// buffering at least 4096 bytes of data received in out-of-order CRYPTO
// frames ... an endpoint ... MAY close the connection with a
// CRYPTO_BUFFER_EXCEEDED error code" (RFC 9000, Section 7.5).
func TestHostileCryptoBeyondBuffer(t *testing.T) {
	p := newSimPair(t, testLink, nil, 63)
	p.connect(t)
	frame := wire.CryptoFrame{Offset: 1 << 20, Data: []byte("x")}.Append(nil)
	p.injectFrames(p.client, ackhandler.SpaceApplication, frame)
	checkCloseErrors(t, p, wire.RoleServer,
		&TransportError{Code: wire.CryptoBufferExceeded},
		&TransportError{Code: wire.CryptoBufferExceeded, Remote: true})
}

// An ACK frame with a thousand ranges, acknowledging packets never sent:
// the parser keeps the highest wire.DefaultMaxAckRanges ranges (no more
// are stored), and acknowledging an unsent packet is a PROTOCOL_VIOLATION
// (RFC 9000, Section 13.1). Many ranges alone are legal:
// TestSimAckManyRanges.
func TestHostileAckRanges(t *testing.T) {
	p := newSimPair(t, testLink, nil, 64)
	p.connect(t)
	f := wire.AckFrame{}
	for i := 0; i < 1000; i++ {
		hi := wire.PacketNumber(1_000_000 - 4*i)
		f.Ranges = append(f.Ranges, wire.AckRange{Smallest: hi - 1, Largest: hi})
	}
	p.injectFrames(p.client, ackhandler.SpaceApplication, f.Append(nil))
	p.run(t, 10*time.Second, p.bothClosed)
	te, ok := p.server.c.closeErr.(*TransportError)
	if !ok || te.Code != wire.ProtocolViolation || te.Remote {
		t.Fatalf("server closed with %#v, want a PROTOCOL_VIOLATION", p.server.c.closeErr)
	}
}

// A flood of datagrams the application never reads: the receive queue
// stays at its bound and the oldest are dropped and counted (RFC 9221,
// Section 5: "an endpoint ... MAY drop" DATAGRAM frames it cannot
// process).
func TestHostileDatagramFlood(t *testing.T) {
	p := newSimPair(t, testLink, &Config{EnableDatagrams: true}, 65)
	p.connect(t)
	var payload []byte
	for i := 0; i < 40; i++ {
		payload = wire.DatagramFrame{Data: []byte("flood"), HasLength: true}.Append(payload)
	}
	for range datagramQueueLen/40 + 10 {
		p.injectFrames(p.client, ackhandler.SpaceApplication, payload)
		p.sim.RunFor(time.Millisecond)
	}
	p.sim.RunFor(100 * time.Millisecond)
	s := p.server.c
	if s.closeState != stateActive {
		t.Fatalf("server closed: %v", s.closeErr)
	}
	if n := len(s.datagrams.received); n > datagramQueueLen {
		t.Fatalf("%d datagrams queued, bound %d", n, datagramQueueLen)
	}
	if _, recv := s.datagrams.dropped(); recv == 0 {
		t.Fatal("no DATAGRAM frame counted as dropped")
	}
}

// A flood of PATH_CHALLENGE frames: the connection keeps a single
// response to send, for the latest challenge (RFC 9000, Section 8.2.2
// requires a response but does not oblige an endpoint to queue one per
// challenge), stays open, and answers.
func TestHostilePathChallengeFlood(t *testing.T) {
	p := newSimPair(t, testLink, nil, 66)
	p.connect(t)
	var payload []byte
	for i := 0; i < 100; i++ {
		payload = wire.PathChallengeFrame{Data: [8]byte{byte(i), 1, 2, 3, 4, 5, 6, 7}}.Append(payload)
	}
	log := watchFrames(p.client.c)
	for range 50 {
		p.injectFrames(p.client, ackhandler.SpaceApplication, payload)
		p.sim.RunFor(time.Millisecond)
	}
	p.sim.RunFor(200 * time.Millisecond)
	if c := p.server.c; c.closeState != stateActive {
		t.Fatalf("server closed: %v", c.closeErr)
	}
	n := log.counts[wire.FrameTypePathResponse]
	if n == 0 || n > 50 {
		t.Fatalf("client got %d PATH_RESPONSE frames for 50 packets of 100 challenges", n)
	}
}

// A server flooding NEW_TOKEN frames: the client keeps at most the token
// store's per-server bound (RFC 9000, Section 8.1.3 lets a client keep the
// tokens it wants).
func TestHostileNewTokenFlood(t *testing.T) {
	store := NewLRUTokenStore(1, 2)
	p := newSimPair(t, testLink, &Config{TokenStore: store}, 67)
	p.client.c.tokenKey = "server"
	p.connect(t)
	for i := range 100 {
		p.injectFrames(p.server, ackhandler.SpaceApplication, wire.NewTokenFrame{Token: []byte{byte(i), 1, 2, 3}}.Append(nil))
		p.sim.RunFor(time.Millisecond)
	}
	p.sim.RunFor(100 * time.Millisecond)
	if p.client.c.closeState != stateActive {
		t.Fatalf("client closed: %v", p.client.c.closeErr)
	}
	n := 0
	for store.Get("server|"+p.client.c.version.String()) != nil {
		n++
	}
	if n == 0 || n > 2 {
		t.Fatalf("the store held %d tokens, bound 2", n)
	}
}
