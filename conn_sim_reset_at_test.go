package quic

import (
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// Reliable stream resets (draft-ietf-quic-reliable-stream-reset) on the
// simulator: the client resets a stream with CancelWriteAt, the server's
// application reads the bytes below the Reliable Size and then the
// reset's error.

// readUntilReset reads s on the server until an error and returns the
// bytes read (checked against pattern k) and the error.
func readUntilReset(t *testing.T, p *simPair, k int, limit time.Duration) (int, error) {
	t.Helper()
	var r *patternReader
	var err error
	p.run(t, limit, func() bool {
		if r == nil {
			for _, s := range acceptAll(p.server.c, false) {
				r = &patternReader{t: t, s: s, k: k, buf: make([]byte, 64<<10)}
			}
		}
		for r != nil {
			n, e := simRead(r.s, r.buf)
			if string(r.buf[:n]) != string(testPattern(k, r.got, n)) {
				t.Fatalf("wrong data at offset %d", r.got)
			}
			r.got += n
			if e != nil {
				err = e
				return true
			}
			if n == 0 {
				break
			}
		}
		return false
	})
	return r.got, err
}

func wantRemoteReset(t *testing.T, err error, code StreamErrorCode) {
	t.Helper()
	var se *StreamError
	if !errors.As(err, &se) || se.Code != code || !se.Remote {
		t.Fatalf("read error %v, want the peer's reset with code %d", err, code)
	}
}

// "When using a RESET_STREAM_AT frame, the initiator MUST guarantee
// reliable delivery of stream data of at least Reliable Size bytes"
// (Section 5); the receiver delivers them, then the reset.
func TestSimResetStreamAtDeliversReliableSize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lossy    bool
		sentBy   time.Duration // how long the data goes before the reset
		reliable uint64
	}{
		{"before sending", false, 0, 60_000},
		{"while sending", false, 25 * time.Millisecond, 150_000},
		{"below what was sent", false, 40 * time.Millisecond, 30_000},
		{"zero", false, 10 * time.Millisecond, 0},
		{"lossy", true, 25 * time.Millisecond, 150_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, log := prioPair(t, testLink, 601)
			if !p.client.c.streams.peerSupportsResetAt.Load() || !p.server.c.streams.peerSupportsResetAt.Load() {
				t.Fatal("reset_stream_at not negotiated")
			}
			if tc.lossy {
				k := 0
				p.client.dropOut = func(time.Time, []byte) bool { k++; return k%4 == 0 }
			}
			s, _ := openPrio(t, p, DefaultPriority, 0, 400_000)
			if tc.sentBy > 0 {
				p.cnode.Wake()
				p.sim.RunFor(tc.sentBy)
			}
			s.mu.Lock()
			sentBefore := s.send.sentOffset()
			s.mu.Unlock()
			if err := (&SendStream{s: s}).CancelWriteAt(7, tc.reliable); err != nil {
				t.Fatal(err)
			}
			if _, err := simWriteErr(s, []byte("more")); err == nil {
				t.Error("Write after CancelWriteAt succeeded")
			}
			got, err := readUntilReset(t, p, 0, 30*time.Second)
			wantRemoteReset(t, err, 7)
			if uint64(got) < tc.reliable {
				t.Errorf("read %d bytes, want at least the reliable size %d", got, tc.reliable)
			}
			var frames []frameRec
			for _, r := range *log {
				if r.t == wire.FrameTypeResetStreamAt {
					frames = append(frames, r)
				}
			}
			if len(frames) == 0 {
				t.Fatal("no RESET_STREAM_AT arrived")
			}
			if f := frames[0]; f.off != max(tc.reliable, sentBefore) || uint64(f.n) != tc.reliable {
				t.Errorf("RESET_STREAM_AT with final size %d, reliable size %d; want %d, %d", f.off, f.n, max(tc.reliable, sentBefore), tc.reliable)
			}
			if tc.lossy && p.client.droppedOut == 0 {
				t.Error("nothing lost")
			}
			// Both ends finish the stream: the sender once the frame and the
			// data below the reliable size are acknowledged.
			p.run(t, 10*time.Second, func() bool {
				return p.client.c.streams.openCount() == 0 && p.server.c.streams.openCount() == 0
			})
		})
	}
}

// simWriteErr is simWrite that reports the stream's write error.
func simWriteErr(s *stream, b []byte) (int, error) {
	s.mu.Lock()
	err := s.writeErr
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return simWrite(s, b), nil
}

// "The initiator MAY send multiple RESET_STREAM_AT frames for the same
// stream in order to reduce the Reliable Size" (Section 5.2), never to
// raise it, and not with another code.
func TestSimResetStreamAtLowerOnly(t *testing.T) {
	p, _ := prioPair(t, testLink, 602)
	s, _ := openPrio(t, p, DefaultPriority, 0, 100_000)
	ss := &SendStream{s: s}
	if err := ss.CancelWriteAt(3, 80_000); err != nil {
		t.Fatal(err)
	}
	if err := ss.CancelWriteAt(3, 20_000); err != nil {
		t.Fatal(err)
	}
	if err := ss.CancelWriteAt(3, 90_000); err != nil { // ignored: no increase
		t.Fatal(err)
	}
	if err := ss.CancelWriteAt(4, 10_000); err == nil {
		t.Error("CancelWriteAt with another code: no error")
	}
	got, err := readUntilReset(t, p, 0, 10*time.Second)
	wantRemoteReset(t, err, 3)
	if got != 20_000 {
		t.Errorf("read %d bytes, want 20000", got)
	}
}

// The receiving rules of Section 5.2: a higher Reliable Size is ignored,
// another error code is a STREAM_STATE_ERROR, another final size a
// FINAL_SIZE_ERROR; a Reliable Size above the final size is a
// FRAME_ENCODING_ERROR (Section 4).
func TestSimResetStreamAtReceiveRules(t *testing.T) {
	frame := func(code, final, reliable uint64) []byte {
		return wire.ResetStreamAtFrame{StreamID: 2, ErrorCode: code, FinalSize: final, ReliableSize: reliable}.Append(nil)
	}
	for _, tc := range []struct {
		name   string
		second []byte
		code   wire.TransportErrorCode // 0: no error
	}{
		{"higher reliable size ignored", frame(5, 1000, 900), 0},
		{"same again", frame(5, 1000, 500), 0},
		{"other code", frame(6, 1000, 400), wire.StreamStateError},
		{"other final size", frame(5, 1001, 400), wire.FinalSizeError},
		{"reliable above final", frame(5, 1000, 1001), wire.FrameEncodingError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := prioPair(t, testLink, 603)
			p.injectFrames(p.client, ackhandler.SpaceApplication, frame(5, 1000, 500))
			p.injectFrames(p.client, ackhandler.SpaceApplication, tc.second)
			p.sim.RunFor(100 * time.Millisecond)
			c := p.server.c
			if tc.code == 0 {
				if c.closeState != stateActive {
					t.Fatalf("closed: %v", c.closeErr)
				}
				s := acceptAll(c, false)[0]
				s.mu.Lock()
				rel := s.resetAt.recvReliable
				s.mu.Unlock()
				if rel != 500 {
					t.Errorf("reliable size %d, want 500", rel)
				}
				return
			}
			var te *TransportError
			if !errors.As(c.closeErr, &te) || te.Code != tc.code {
				t.Errorf("closed with %v, want %v", c.closeErr, tc.code)
			}
		})
	}
}

// Without the peer's reset_stream_at, CancelWriteAt fails and changes
// nothing.
func TestSimResetStreamAtNeedsPeerSupport(t *testing.T) {
	p, _ := prioPair(t, testLink, 604)
	for _, c := range []*connState{p.client.c, p.server.c} {
		if tp := c.ourTransportParameters(connParams{}); !tp.ResetStreamAt {
			t.Errorf("%v: reset_stream_at not advertised", c.role)
		}
	}
	s, _ := openPrio(t, p, DefaultPriority, 0, 1000)
	p.client.c.streams.peerSupportsResetAt.Store(false) // as if the server had not advertised it
	if err := (&SendStream{s: s}).CancelWriteAt(1, 10); err == nil {
		t.Fatal("no error")
	}
	r := newPatternReader(t, nil, 0)
	p.run(t, 5*time.Second, func() bool {
		if r.s == nil {
			if l := acceptAll(p.server.c, false); len(l) > 0 {
				r.s = l[0]
			}
			return false
		}
		return r.step(0)
	})
	if r.got != 1000 {
		t.Errorf("read %d bytes after a failed CancelWriteAt, want all 1000", r.got)
	}
}

// A RESET_STREAM_AT that the peer turns out not to support (its real
// transport parameters after rejected 0-RTT) goes as RESET_STREAM.
func TestSimResetStreamAtFallsBackToResetStream(t *testing.T) {
	p, log := prioPair(t, testLink, 605)
	s, _ := openPrio(t, p, DefaultPriority, 0, 100_000)
	if err := (&SendStream{s: s}).CancelWriteAt(9, 50_000); err != nil {
		t.Fatal(err)
	}
	p.client.c.streams.peerSupportsResetAt.Store(false)
	_, err := readUntilReset(t, p, 0, 10*time.Second)
	wantRemoteReset(t, err, 9)
	var types []wire.FrameType
	for _, r := range *log {
		if r.t != wire.FrameTypeStream {
			types = append(types, r.t)
		}
	}
	if len(types) == 0 || types[0] != wire.FrameTypeResetStream {
		t.Errorf("reset frames %v, want RESET_STREAM", types)
	}
	p.run(t, 10*time.Second, func() bool { return p.client.c.streams.openCount() == 0 })
}
