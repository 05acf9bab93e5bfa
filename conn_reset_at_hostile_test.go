package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// A peer that lies in RESET_STREAM_AT frames (draft-ietf-quic-reliable-
// stream-reset, Sections 4 and 5.2) gets the connection error the draft
// names; frames that only repeat or lower the Reliable Size are accepted.
func TestHostileResetStreamAt(t *testing.T) {
	rsa := func(id, code, final, reliable uint64) []byte {
		return rawFrame(wire.FrameTypeResetStreamAt, id, code, final, reliable)
	}
	cases := []struct {
		name    string
		payload []byte
		code    wire.TransportErrorCode // 0: the connection stays up
	}{
		{"reliable above final", rsa(0, 1, 10, 11), wire.FrameEncodingError},
		{"code changed", cat(rsa(0, 1, 1000, 500), rsa(0, 2, 1000, 400)), wire.StreamStateError},
		{"code changed by reset_stream", cat(rsa(0, 1, 1000, 500), rawFrame(wire.FrameTypeResetStream, 0, 2, 1000)), wire.StreamStateError},
		{"final size changed", cat(rsa(0, 1, 1000, 500), rsa(0, 1, 1001, 500)), wire.FinalSizeError},
		{"final size changed by reset_stream", cat(rsa(0, 1, 1000, 500), rawFrame(wire.FrameTypeResetStream, 0, 1, 999)), wire.FinalSizeError},
		{"data beyond final size", cat(rsa(0, 1, 1000, 500), streamF(0, 990, "0123456789abc", false)), wire.FinalSizeError},
		{"fin below final size", cat(rsa(0, 1, 1000, 500), streamF(0, 700, "x", true)), wire.FinalSizeError},
		{"final size beyond stream window", rsa(0, 1, 1<<40, 500), wire.FlowControlError},
		{"on a send-only stream", rsa(3, 1, 10, 5), wire.StreamStateError},
		{"beyond the stream limit", rsa(4*1000, 1, 10, 5), wire.StreamLimitError},
		{"reliable raised, ignored", cat(rsa(0, 1, 1000, 500), rsa(0, 1, 1000, 900)), 0},
		{"reliable lowered", cat(rsa(0, 1, 1000, 500), rsa(0, 1, 1000, 100)), 0},
		{"then data up to final size", cat(rsa(0, 1, 1000, 5), streamF(0, 0, "0123456789", false), streamF(0, 990, "0123456789", true)), 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := &Config{EnableResetStreamAt: true, MaxIncomingStreams: 10}
			p := newSimPair(t, testLink, cfg, uint64(1900+i))
			p.connect(t)
			p.injectFrames(p.client, ackhandler.SpaceApplication, c.payload)
			if c.code == 0 {
				p.sim.RunFor(time.Second)
				if p.server.c.closeState != stateActive {
					t.Fatalf("closed: %v", p.server.c.closeErr)
				}
				return
			}
			p.run(t, 10*time.Second, p.bothClosed)
			te, ok := p.server.c.closeErr.(*TransportError)
			if !ok || te.Remote || te.Code != c.code {
				t.Fatalf("server closed with %v, want %v", p.server.c.closeErr, c.code)
			}
		})
	}
}

// The receiver of a RESET_STREAM_AT delivers exactly the bytes below the
// Reliable Size, then the reset ("Once all data up to the smallest
// Reliable Size have been received, it enters the "Data Recvd" state",
// Section 5.3), even though more data up to the Final Size arrived; then
// the stream is retired and the connection's credit for all Final Size
// bytes is given back (RFC 9000, Section 4.5).
func TestResetStreamAtReceiverReadsReliableOnly(t *testing.T) {
	cfg := &Config{EnableResetStreamAt: true, MaxIncomingStreams: 10}
	p := newSimPair(t, testLink, cfg, 1990)
	p.connect(t)
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	p.injectFrames(p.client, ackhandler.SpaceApplication, cat(
		streamF(2, 0, string(data[:600]), false),
		rawFrame(wire.FrameTypeResetStreamAt, 2, 9, 1000, 500),
		streamF(2, 600, string(data[600:]), false),
		rawFrame(wire.FrameTypeResetStreamAt, 2, 9, 1000, 300), // lowered
	))
	p.sim.RunFor(100 * time.Millisecond)
	ss := acceptAll(p.server.c, false) // a unidirectional stream: the client has no state for it
	if len(ss) != 1 {
		t.Fatalf("accepted %d streams", len(ss))
	}
	var got []byte
	buf := make([]byte, 64)
	var err error
	p.run(t, 5*time.Second, func() bool {
		var n int
		n, err = simRead(ss[0], buf)
		got = append(got, buf[:n]...)
		return err != nil
	})
	se, ok := err.(*StreamError)
	if !ok || se.Code != 9 || !se.Remote {
		t.Fatalf("read error %v", err)
	}
	if string(got) != string(data[:300]) {
		t.Fatalf("read %d bytes, want the first 300", len(got))
	}
	p.sim.RunFor(time.Second)
	if n := p.server.c.streams.openCount(); n != 0 {
		s := ss[0]
		s.mu.Lock()
		t.Errorf("%d streams open after the reset was read (server %v, client %v; finAcked %v resetRecvd %v resetAtRecvd %v eofRead %v)", n, p.server.c.closeErr, p.client.c.closeErr, s.finAcked, s.resetRecvd, s.resetAtRecvd, s.eofRead)
		s.mu.Unlock()
	}
	if c := p.server.c.connRecv.Consumed(); c != 1000 {
		t.Errorf("connection credit consumed %d, want the final size 1000", c)
	}
}
