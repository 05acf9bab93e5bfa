package quic

import (
	"io"
	"math"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// Tests of the stream-count limits (RFC 9000, Section 4.6: MAX_STREAMS
// and STREAMS_BLOCKED) and of the final size of closed streams (Section
// 4.5), through whole connections on the simulator.

// openRequests opens n client bidirectional streams that each send "req"
// and a FIN, and returns them.
func openRequests(t *testing.T, p *simPair, n int) []*stream {
	t.Helper()
	var list []*stream
	for range n {
		s, _, err := p.client.c.streams.openStream(true)
		if err != nil || s == nil {
			t.Fatalf("open stream %d: %v", len(list), err)
		}
		simWrite(s, []byte("req"))
		s.closeWrite()
		list = append(list, s)
	}
	return list
}

// acceptN runs p until the server accepted n bidirectional streams.
func acceptN(t *testing.T, p *simPair, n int) []*stream {
	t.Helper()
	var list []*stream
	p.run(t, 2*time.Second, func() bool {
		if p.server.c != nil {
			list = append(list, acceptAll(p.server.c, true)...)
		}
		return len(list) >= n
	})
	return list
}

// finishStream reads s to its end and closes its sending part.
func finishStream(t *testing.T, s *stream) {
	t.Helper()
	if _, err := simRead(s, make([]byte, 16)); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if _, err := simRead(s, make([]byte, 16)); err != io.EOF {
		t.Fatalf("stream %d: %v, want EOF", s.id, err)
	}
	s.closeWrite()
}

// The peer keeps MaxIncomingStreams open: as soon as streams close, a
// peer that has opened all it may gets credit for new ones, without
// asking. "Implementations might choose to increase limits as streams are
// closed, to keep the number of streams available to peers roughly
// consistent", "An endpoint MUST NOT wait to receive this signal
// [STREAMS_BLOCKED] before advertising additional credit" and "Endpoints
// MUST NOT exceed the limit set by their peer" (RFC 9000, Section 4.6);
// MaxIncomingStreams is how many the peer "may have open at once".
// MAX_STREAMS waited until an eighth of the limit (12 of 100) had closed:
// with 95 of 100 open the client could not open another.
func TestSimMaxStreamsPromptAtLimit(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 100}, 311)
	p.connect(t)
	openRequests(t, p, 100)
	srv := acceptN(t, p, 100)
	streamsBlocked := 0
	p.server.c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		if f.Type == wire.FrameTypeStreamsBlockedBidi {
			streamsBlocked++
		}
	}
	for _, s := range srv[:5] {
		finishStream(t, s)
	}
	// The FIN out, its ACK back, MAX_STREAMS out: two round trips.
	p.run(t, 3*2*testLink.Delay, func() bool { return p.client.c.streams.peerMaxBidi == 105 })
	if streamsBlocked != 0 {
		t.Errorf("the client sent %d STREAMS_BLOCKED before it could open more", streamsBlocked)
	}
	// Five more, and not one beyond.
	openRequests(t, p, 5)
	if s, _, _ := p.client.c.streams.openStream(true); s != nil {
		t.Fatal("a 106th stream opened beyond the limit")
	}
	acceptN(t, p, 5)
	p.sim.RunFor(time.Second)
	if p.server.c.closeState != stateActive {
		t.Fatalf("server closed: %v", p.server.c.closeErr)
	}
}

// STREAMS_BLOCKED tells that the peer has opened all the streams it may,
// even before the frames opening them arrive: a limit raised since the
// last MAX_STREAMS is sent at once. "An endpoint MUST NOT wait to receive
// this signal before advertising additional credit" (RFC 9000, Section
// 4.6); the signal still says that credit is due now. It was ignored.
func TestSimStreamsBlockedTriggersMaxStreams(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 100}, 312)
	p.connect(t)
	openRequests(t, p, 50)
	srv := acceptN(t, p, 50)
	for _, s := range srv[:3] {
		finishStream(t, s)
	}
	p.run(t, time.Second, func() bool { return p.server.c.streams.maxBidi == 103 })
	p.sim.RunFor(100 * time.Millisecond)
	if got := p.client.c.streams.peerMaxBidi; got != 100 {
		t.Fatalf("client may open %d streams before STREAMS_BLOCKED; the test expects 100", got)
	}
	// The peer reports the 100 streams it may open as used.
	p.injectFrames(p.client, ackhandler.SpaceApplication, wire.StreamsBlockedFrame{Bidi: true, MaximumStreams: 100}.Append(nil))
	p.run(t, time.Second, func() bool { return p.client.c.streams.peerMaxBidi == 103 })
}

// A STREAMS_BLOCKED frame that repeats a limit below the one sent means
// that the MAX_STREAMS carrying it was lost or is late: the current limit
// is sent again.
func TestSimStreamsBlockedBelowSentLimit(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 10}, 313)
	p.connect(t)
	openRequests(t, p, 10)
	srv := acceptN(t, p, 10)
	clog := watchFrames(p.client.c)
	for _, s := range srv[:2] {
		finishStream(t, s)
	}
	p.run(t, time.Second, func() bool { return p.client.c.streams.peerMaxBidi == 12 })
	p.sim.RunFor(time.Second)
	p.client.c.streams.mu.Lock()
	p.client.c.streams.peerMaxBidi = 10 // as if that MAX_STREAMS never arrived
	p.client.c.streams.mu.Unlock()
	before := clog.counts[wire.FrameTypeMaxStreamsBidi]
	p.injectFrames(p.client, ackhandler.SpaceApplication, wire.StreamsBlockedFrame{Bidi: true, MaximumStreams: 10}.Append(nil))
	p.run(t, time.Second, func() bool { return p.client.c.streams.peerMaxBidi == 12 })
	if clog.counts[wire.FrameTypeMaxStreamsBidi] != before+1 {
		t.Errorf("%d MAX_STREAMS frames after STREAMS_BLOCKED, want 1", clog.counts[wire.FrameTypeMaxStreamsBidi]-before)
	}
}

// A lost STREAMS_BLOCKED is sent again, with the limit of the time: "Blocked signals are carried in DATA_BLOCKED,
// STREAM_DATA_BLOCKED, and STREAMS_BLOCKED frames. ... A new frame is sent
// if a packet containing the most recent frame for a scope is lost, but
// only while the endpoint is blocked on the corresponding limit. These
// frames always include the limit that is causing blocking at the time
// that they are transmitted." (RFC 9000, Section 13.3) It was not
// recorded as sent, so its loss went unnoticed.
func TestSimLostStreamsBlockedResent(t *testing.T) {
	for _, bidi := range []bool{true, false} {
		p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 2, MaxIncomingUniStreams: 2}, 314)
		p.connect(t)
		for range 2 {
			s, _, err := p.client.c.streams.openStream(bidi)
			if err != nil || s == nil {
				t.Fatal(err)
			}
			simWrite(s, []byte("open, not finished"))
		}
		p.sim.RunFor(200 * time.Millisecond)
		var got []wire.StreamsBlockedFrame
		p.server.c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
			if f.Type == wire.FrameTypeStreamsBlockedBidi || f.Type == wire.FrameTypeStreamsBlockedUni {
				got = append(got, f.StreamsBlocked)
			}
		}
		// The packet carrying the first STREAMS_BLOCKED is lost.
		p.client.dropOut = func(time.Time, []byte) bool { return true }
		if s, _, _ := p.client.c.streams.openStream(bidi); s != nil {
			t.Fatal("opened beyond the limit")
		}
		p.sim.RunFor(5 * time.Millisecond)
		if p.client.droppedOut == 0 {
			t.Fatal("no packet sent for STREAMS_BLOCKED")
		}
		p.client.dropOut = nil
		p.run(t, 3*time.Second, func() bool { return len(got) > 0 })
		p.sim.RunFor(time.Second)
		if len(got) != 1 || got[0] != (wire.StreamsBlockedFrame{Bidi: bidi, MaximumStreams: 2}) {
			t.Errorf("bidi %v: STREAMS_BLOCKED frames received %+v", bidi, got)
		}
	}
}

// Data beyond the final size of a stream already closed and forgotten: "A
// receiver SHOULD treat receipt of data at or beyond the final size as an
// error of type FINAL_SIZE_ERROR, even after a stream is closed" (RFC 9000,
// Section 4.5). Such data was ignored. A copy of data within the final
// size (a retransmission that crossed the acknowledgment) is no error.
func TestSimDataBeyondFinalSizeOfRetiredStream(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offset uint64
		data   string
		fin    bool
		reset  bool // RESET_STREAM with final size offset
		err    bool
	}{
		{"retransmission", 0, "req", true, false, false},
		{"empty at the end", 3, "", false, false, false},
		{"beyond", 3, "x", false, false, true},
		{"straddling", 2, "qx", false, false, true},
		{"other final size", 0, "re", true, false, true},
		{"reset with the final size", 3, "", false, true, false},
		{"reset with another final size", 4, "", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newSimPair(t, testLink, nil, 315)
			p.connect(t)
			cs := openRequests(t, p, 1)[0]
			ss := acceptN(t, p, 1)[0]
			finishStream(t, ss)
			p.run(t, time.Second, func() bool { return p.server.c.streams.openCount() == 0 })
			frame := wire.StreamFrame{StreamID: cs.id, Offset: tc.offset, Data: []byte(tc.data), Fin: tc.fin, HasLength: true}.Append(nil)
			ft := wire.FrameTypeStream
			if tc.reset {
				frame = wire.ResetStreamFrame{StreamID: cs.id, FinalSize: tc.offset}.Append(nil)
				ft = wire.FrameTypeResetStream
			}
			p.injectFrames(p.client, ackhandler.SpaceApplication, frame)
			if !tc.err {
				p.sim.RunFor(time.Second)
				if p.server.c.closeState != stateActive {
					t.Fatalf("server closed: %v", p.server.c.closeErr)
				}
				return
			}
			checkCloseErrors(t, p, wire.RoleServer,
				&TransportError{Code: wire.FinalSizeError, FrameType: ft},
				&TransportError{Code: wire.FinalSizeError, Remote: true})
		})
	}
}

// A MaxIncomingStreams above 2^60 is advertised as 2^60: "If a
// max_streams transport parameter or a MAX_STREAMS frame is received with
// a value greater than 2^60 ... the connection MUST be closed immediately
// with a connection error of type TRANSPORT_PARAMETER_ERROR" (RFC 9000,
// Section 4.6); the peer closed the connection at once.
func TestSimMaxIncomingStreamsAbove2To60(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: math.MaxInt64, MaxIncomingUniStreams: math.MaxInt64}, 316)
	p.connect(t)
	openRequests(t, p, 1)
	finishStream(t, acceptN(t, p, 1)[0]) // a MAX_STREAMS follows
	p.run(t, time.Second, func() bool { return p.server.c.streams.openCount() == 0 })
	p.sim.RunFor(time.Second)
	for _, c := range []*connState{p.client.c, p.server.c} {
		if c.closeState != stateActive {
			t.Fatalf("%v closed: %v", c.role, c.closeErr)
		}
	}
	if m := p.client.c.streams; m.peerMaxBidi != wire.MaxStreamCount || m.peerMaxUni != wire.MaxStreamCount {
		t.Errorf("client may open %d and %d streams, want 2^60", m.peerMaxBidi, m.peerMaxUni)
	}
}

// The final sizes of the streams retired last are remembered, a fixed
// number: data beyond the final size of a stream retired long before is
// ignored, as the RFC allows ("Generating these errors is not mandatory,
// because requiring that an endpoint generate these errors also means
// that the endpoint needs to maintain the final size state for closed
// streams", RFC 9000, Section 4.5).
func TestSimRetiredFinalSizesBounded(t *testing.T) {
	p := newSimPair(t, testLink, nil, 317)
	p.connect(t)
	const n = retiredFinalSizesLen + 1
	cs := openRequests(t, p, n)
	for _, s := range acceptN(t, p, n) {
		finishStream(t, s)
	}
	p.run(t, time.Second, func() bool { return p.server.c.streams.openCount() == 0 })
	// The first stream is forgotten; the second is not.
	for i, want := range []bool{false, true} {
		_, known := p.server.c.streams.retiredSizes.lookup(cs[i].id)
		if known != want {
			t.Fatalf("stream %d: final size known %v, want %v", cs[i].id, known, want)
		}
	}
	frame := wire.StreamFrame{StreamID: cs[0].id, Offset: 3, Data: []byte("x"), HasLength: true}.Append(nil)
	p.injectFrames(p.client, ackhandler.SpaceApplication, frame)
	p.sim.RunFor(100 * time.Millisecond) // less than idleReleaseDelay
	if p.server.c.closeState != stateActive {
		t.Fatalf("server closed: %v", p.server.c.closeErr)
	}
	frame = wire.StreamFrame{StreamID: cs[1].id, Offset: 3, Data: []byte("x"), HasLength: true}.Append(nil)
	p.injectFrames(p.client, ackhandler.SpaceApplication, frame)
	checkCloseErrors(t, p, wire.RoleServer,
		&TransportError{Code: wire.FinalSizeError, FrameType: wire.FrameTypeStream},
		&TransportError{Code: wire.FinalSizeError, Remote: true})
}

// "MAX_STREAMS frames that do not increase the stream limit MUST be
// ignored." (RFC 9000, Section 4.6)
func TestSimMaxStreamsNotIncreasingIgnored(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 10, MaxIncomingUniStreams: 10}, 318)
	p.connect(t)
	for _, bidi := range []bool{true, false} {
		p.injectFrames(p.server, ackhandler.SpaceApplication, wire.MaxStreamsFrame{Bidi: bidi, MaximumStreams: 3}.Append(nil))
	}
	p.sim.RunFor(100 * time.Millisecond)
	m := p.client.c.streams
	if m.peerMaxBidi != 10 || m.peerMaxUni != 10 {
		t.Fatalf("limits %d and %d after smaller MAX_STREAMS, want 10", m.peerMaxBidi, m.peerMaxUni)
	}
	openRequests(t, p, 10)
	acceptN(t, p, 10)
	p.sim.RunFor(100 * time.Millisecond)
	if p.client.c.closeState != stateActive || p.server.c.closeState != stateActive {
		t.Fatalf("closed: %v, %v", p.client.c.closeErr, p.server.c.closeErr)
	}
}

// "An endpoint MUST NOT send data on a stream at or beyond the final
// size." (RFC 9000, Section 4.5) Under loss, retransmissions of a stream
// closed with a FIN and of one reset after some of its data was sent stay
// below the final size; the peer would close the connection with
// FINAL_SIZE_ERROR otherwise (the receiver's checks are
// TestStreamReceiverFinalSize and TestSimDataBeyondFinalSizeOfRetiredStream).
func TestSimNoDataAtOrBeyondFinalSize(t *testing.T) {
	link := linkWith(func(l *netsim.LinkConfig) { l.LossProb = 0.05 })
	p := newSimPair(t, link, nil, 319)
	p.connect(t)
	type seen struct{ end, fins, resets, finalSize uint64 }
	frames := map[wire.StreamID]*seen{}
	get := func(id wire.StreamID) *seen {
		if frames[id] == nil {
			frames[id] = &seen{}
		}
		return frames[id]
	}
	p.server.c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		switch {
		case f.Type.IsStream():
			x := get(f.Stream.StreamID)
			x.end = max(x.end, f.Stream.Offset+uint64(len(f.Stream.Data)))
			if f.Stream.Fin {
				x.fins++
				x.finalSize = f.Stream.Offset + uint64(len(f.Stream.Data))
			}
		case f.Type == wire.FrameTypeResetStream:
			x := get(f.ResetStream.StreamID)
			x.resets++
			x.finalSize = f.ResetStream.FinalSize
		}
	}
	const size = 300 << 10
	fin, _, _ := p.client.c.streams.openStream(false)
	reset, _, _ := p.client.c.streams.openStream(false)
	w := newPatternWriter(fin, 0, size)
	rw := 0
	var srv []*stream
	buf := make([]byte, 64<<10)
	p.run(t, 10*time.Second, func() bool {
		w.step()
		if rw < size/2 {
			rw += simWrite(reset, testPattern(1, rw, min(64<<10, size/2-rw)))
		}
		reset.mu.Lock()
		sent, canceled := reset.sentEnd, reset.resetPending || reset.resetSent
		reset.mu.Unlock()
		if sent >= size/4 && !canceled {
			reset.cancelWrite(7)
		}
		if p.server.c != nil {
			srv = append(srv, acceptAll(p.server.c, false)...)
		}
		for _, s := range srv {
			for {
				if n, err := simRead(s, buf); n == 0 || err != nil {
					break
				}
			}
		}
		fin.mu.Lock()
		finDone := fin.finAcked
		fin.mu.Unlock()
		reset.mu.Lock()
		resetDone := reset.resetAcked
		reset.mu.Unlock()
		return w.closed && finDone && resetDone
	})
	p.sim.RunFor(time.Second)
	if p.path.AB.Stats().DroppedLoss == 0 {
		t.Fatal("no datagram lost: nothing was retransmitted")
	}
	if f := frames[fin.id]; f == nil || f.fins == 0 || f.finalSize != size || f.end != size {
		t.Errorf("stream closed with FIN: %+v, want final size and end %d", f, size)
	}
	if f := frames[reset.id]; f == nil || f.resets == 0 || f.end > f.finalSize || f.finalSize == 0 {
		t.Errorf("stream reset: %+v, want data only below the final size", f)
	}
	if p.server.c.closeState != stateActive {
		t.Fatalf("server closed: %v", p.server.c.closeErr)
	}
}
