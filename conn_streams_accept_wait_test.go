package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// TestAcceptWaitPerType: a stream the peer opens wakes only the goroutines
// accepting streams of its type. An HTTP/3 server has one goroutine
// accepting request (bidirectional) streams and one accepting the peer's
// unidirectional streams; a request must not wake the second (a spurious
// wakeup per request, issue 28).
func TestAcceptWaitPerType(t *testing.T) {
	ctls, _ := testTLS(t)
	dcid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	c, err := newConnState(time.Unix(0, 0), wire.RoleServer, (&Config{}).withDefaults(), connParams{
		tls: ctls, connIDGen: &testConnIDGen{next: 0x7000}, peerConnID: dcid, origDstConnID: dcid, version: wire.Version1,
	})
	if err != nil {
		t.Fatal(err)
	}
	m := c.streams
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	_, uniWait, err := m.acceptStream(false)
	if err != nil || uniWait == nil {
		t.Fatalf("accept uni: %v, %v", uniWait, err)
	}
	_, bidiWait, err := m.acceptStream(true)
	if err != nil || bidiWait == nil {
		t.Fatalf("accept bidi: %v, %v", bidiWait, err)
	}
	// The client opens its first bidirectional stream (ID 0).
	if _, err := m.getOrOpenPeerStream(wire.StreamID(0), wire.FrameTypeStream, false); err != nil {
		t.Fatal(err)
	}
	if !closed(bidiWait) {
		t.Fatal("the bidirectional stream's acceptor was not woken")
	}
	if closed(uniWait) {
		t.Fatal("a bidirectional stream woke the unidirectional acceptor")
	}
	// And the other way round: the client's first unidirectional stream
	// (ID 2).
	if s, _, _ := m.acceptStream(true); s == nil || s.id != 0 {
		t.Fatal("stream 0 not accepted")
	}
	if _, bidiWait, err = m.acceptStream(true); err != nil || bidiWait == nil {
		t.Fatalf("accept bidi: %v, %v", bidiWait, err)
	}
	if _, err := m.getOrOpenPeerStream(wire.StreamID(2), wire.FrameTypeStream, false); err != nil {
		t.Fatal(err)
	}
	if !closed(uniWait) {
		t.Fatal("the unidirectional stream's acceptor was not woken")
	}
	if closed(bidiWait) {
		t.Fatal("a unidirectional stream woke the bidirectional acceptor")
	}
}
