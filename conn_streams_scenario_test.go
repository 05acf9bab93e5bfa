package quic

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// streamTest drives one stream of a connection whose server allows a
// single client bidirectional stream at a time (MaxIncomingStreams 1), so
// that each case can only open its stream once the previous one was
// retired and its credit given back: "the limit rises ... as streams are
// closed" and "Endpoints MUST NOT exceed the limit set by their peer"
// (RFC 9000, Section 4.6).
type streamTest struct {
	t       *testing.T
	p       *simPair
	cs, ss  *stream // client's and server's ends
	slog    *frameLog
	clog    *frameLog
	buf     []byte
	scratch []byte
}

func (st *streamTest) run(limit time.Duration, cond func() bool) {
	st.t.Helper()
	st.p.run(st.t, limit, cond)
}

// open opens the next client stream, waiting for stream credit.
func (st *streamTest) open() {
	st.t.Helper()
	st.cs, st.ss = nil, nil
	st.run(2*time.Second, func() bool {
		s, _, err := st.p.client.c.streams.openStream(true)
		if err != nil {
			st.t.Fatal(err)
		}
		st.cs = s
		return s != nil
	})
}

// server returns the server's end of the current stream once it exists.
func (st *streamTest) server() *stream {
	st.t.Helper()
	st.run(2*time.Second, func() bool {
		for _, s := range acceptAll(st.p.server.c, true) {
			if s.id == st.cs.id {
				st.ss = s
			}
		}
		return st.ss != nil
	})
	return st.ss
}

// readUntilErr reads s until an error and returns it with the bytes read.
func (st *streamTest) readUntilErr(s *stream) (int, error) {
	st.t.Helper()
	total := 0
	var err error
	st.run(2*time.Second, func() bool {
		var n int
		n, err = simRead(s, st.buf)
		total += n
		return err != nil
	})
	return total, err
}

// writeSome writes n bytes, all of which must fit in the send buffer.
func (st *streamTest) writeSome(s *stream, n int) {
	st.t.Helper()
	if m := simWrite(s, st.scratch[:n]); m != n {
		st.t.Fatalf("wrote %d of %d", m, n)
	}
}

// checkStreamError checks that err is a *StreamError for the current
// stream with code and remote.
func (st *streamTest) checkStreamError(who string, err error, code StreamErrorCode, remote bool) {
	st.t.Helper()
	var se *StreamError
	if !errors.As(err, &se) || se.StreamID != st.cs.id || se.Code != code || se.Remote != remote {
		st.t.Errorf("%s: error %v, want a StreamError on stream %d with code %#x, remote %v", who, err, st.cs.id, code, remote)
	}
}

// checkWriteErr checks what writing to s returns now (Stream.Write; it
// does not block, since it fails at once).
func (st *streamTest) checkWriteErr(who string, s *stream, code StreamErrorCode, remote bool) {
	st.t.Helper()
	n, err := s.write([]byte("more"))
	if n != 0 {
		st.t.Errorf("%s: wrote %d bytes to a reset stream", who, n)
	}
	st.checkStreamError(who+" write", err, code, remote)
}

// finishOther ends the direction the case does not test: the server
// sends FIN, and the client reads EOF.
func (st *streamTest) finishOther() {
	st.t.Helper()
	st.ss.closeWrite()
	n, err := st.readUntilErr(st.cs)
	if err != io.EOF || n != 0 {
		st.t.Errorf("client read %d bytes and %v, want EOF", n, err)
	}
}

// retired waits until both ends forgot the stream and checks that its
// Context ended: "Context is cancelled when the stream is finished in
// both directions".
func (st *streamTest) retired() {
	st.t.Helper()
	id := st.cs.id
	deadline := st.p.sim.Now().Add(2 * time.Second)
	st.p.run(st.t, time.Hour, func() bool {
		c, s := st.p.client.c.streams.lookup(id), st.p.server.c.streams.lookup(id)
		if c == nil && s == nil {
			return true
		}
		if st.p.sim.Now().After(deadline) {
			st.t.Fatalf("stream %d not retired: client holds it %v, server %v", id, c != nil, s != nil)
		}
		return false
	})
	for _, s := range []*stream{st.cs, st.ss} {
		if s.context().Err() == nil {
			st.t.Errorf("stream %d: Context not cancelled after both directions finished", id)
		}
	}
}

func TestSimStreamResetAndStopSending(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 1}, 31)
	p.connect(t)
	st := &streamTest{t: t, p: p, buf: make([]byte, 64<<10), scratch: make([]byte, 256<<10),
		slog: watchFrames(p.server.c), clog: watchFrames(p.client.c)}
	cases := []struct {
		name string
		run  func(st *streamTest)
	}{
		{
			// RFC 9000, Section 3.1: "From any of the 'Ready', 'Send', or
			// 'Data Sent' states, an application can signal that it wishes
			// to abandon transmission of stream data. ... the endpoint
			// sends a RESET_STREAM frame". Section 3.2: the receiver learns
			// of the stream from it: "Receiving ... RESET_STREAM ... for a
			// bidirectional stream ... causes the receiving part of the
			// stream to be created".
			name: "client resets before sending data",
			run: func(st *streamTest) {
				st.cs.cancelWrite(0x11)
				ss := st.server()
				n, err := st.readUntilErr(ss)
				if n != 0 {
					st.t.Errorf("server read %d bytes of a stream reset before data", n)
				}
				st.checkStreamError("server read", err, 0x11, true)
				st.checkWriteErr("client", st.cs, 0x11, false)
				if size, ok := ss.recvFC.FinalSize(); !ok || size != 0 {
					st.t.Errorf("final size %d, %v; want 0", size, ok)
				}
				st.finishOther()
			},
		},
		{
			// RFC 9000, Section 3.2: "Receiving a RESET_STREAM frame in
			// the 'Recv' or 'Size Known' state causes the stream to enter
			// the 'Reset Recvd' state. This might cause the delivery of
			// stream data to the application to be interrupted."
			name: "client resets after sending data",
			run: func(st *streamTest) {
				st.writeSome(st.cs, 100<<10)
				ss := st.server()
				got := 0
				st.run(2*time.Second, func() bool {
					n, _ := simRead(ss, st.buf[:1000])
					got += n
					return got >= 10<<10
				})
				st.cs.cancelWrite(0x12)
				n, err := st.readUntilErr(ss)
				st.checkStreamError("server read", err, 0x12, true)
				st.checkWriteErr("client", st.cs, 0x12, false)
				// "the final size is the number of bytes sent" (Section 4.5)
				st.cs.mu.Lock()
				sent := st.cs.sentEnd
				st.cs.mu.Unlock()
				if size, ok := ss.recvFC.FinalSize(); !ok || size != sent || uint64(got+n) > size {
					st.t.Errorf("final size %d, %v; client sent %d, server read %d", size, ok, sent, got+n)
				}
				st.finishOther()
			},
		},
		{
			// RFC 9000, Section 3.1: reset from "Data Sent", after the
			// FIN was sent and before it was acknowledged. The receiver
			// may deliver all data and EOF or report the reset: "An
			// implementation MAY interrupt delivery of stream data,
			// discard any data that was not consumed, and signal the
			// receipt of the RESET_STREAM." (Section 3.2)
			name: "client resets after FIN",
			run: func(st *streamTest) {
				st.writeSome(st.cs, 10<<10)
				st.cs.closeWrite()
				st.run(time.Second, func() bool {
					st.cs.mu.Lock()
					defer st.cs.mu.Unlock()
					return st.cs.send.finSent
				})
				if st.cs.finAcked {
					st.t.Fatal("FIN acknowledged before the test could reset")
				}
				st.cs.cancelWrite(0x13)
				st.checkWriteErr("client", st.cs, 0x13, false)
				ss := st.server()
				n, err := st.readUntilErr(ss)
				st.t.Logf("server read %d bytes, then %v", n, err)
				if err != io.EOF {
					st.checkStreamError("server read", err, 0x13, true)
				} else if n != 10<<10 {
					st.t.Errorf("server read %d bytes and EOF, want %d", n, 10<<10)
				}
				if size, ok := ss.recvFC.FinalSize(); !ok || size != 10<<10 {
					st.t.Errorf("final size %d, %v; want %d", size, ok, 10<<10)
				}
				st.finishOther()
			},
		},
		{
			// RFC 9000, Section 3.1: "Data Recvd" is a terminal state;
			// once all data and the FIN are acknowledged nothing is left
			// to reset.
			name: "client resets after FIN acknowledged",
			run: func(st *streamTest) {
				resets := st.slog.counts[wire.FrameTypeResetStream]
				st.writeSome(st.cs, 10<<10)
				st.cs.closeWrite()
				st.run(time.Second, func() bool {
					st.cs.mu.Lock()
					defer st.cs.mu.Unlock()
					return st.cs.finAcked
				})
				st.cs.cancelWrite(0x14)
				if _, err := st.cs.write([]byte("more")); err != errWriteAfterClose {
					st.t.Errorf("write after FIN and a reset of the finished stream: %v, want %v", err, errWriteAfterClose)
				}
				ss := st.server()
				n, err := st.readUntilErr(ss)
				if err != io.EOF || n != 10<<10 {
					st.t.Errorf("server read %d bytes and %v, want %d and EOF", n, err, 10<<10)
				}
				st.finishOther()
				if got := st.slog.counts[wire.FrameTypeResetStream]; got != resets {
					st.t.Errorf("server received %d RESET_STREAM frames for a finished stream", got-resets)
				}
			},
		},
		{
			// RFC 9000, Section 3.5: "An endpoint that receives a
			// STOP_SENDING frame MUST send a RESET_STREAM frame if the
			// stream is in the 'Ready' or 'Send' state." and Section 3.2:
			// STOP_SENDING for a stream the peer has not yet used opens
			// it: "Receiving ... STOP_SENDING ... for a bidirectional
			// stream ... causes the receiving part of the stream to be
			// created".
			name: "client stops sending before data",
			run: func(st *streamTest) {
				resets := st.clog.counts[wire.FrameTypeResetStream]
				st.cs.cancelRead(0x21)
				ss := st.server()
				st.run(time.Second, func() bool { return st.clog.counts[wire.FrameTypeResetStream] > resets })
				st.checkWriteErr("server", ss, 0x21, true)
				_, err := simRead(st.cs, st.buf)
				st.checkStreamError("client read", err, 0x21, false)
				// The client's direction ends with a FIN.
				st.cs.closeWrite()
				n, err := st.readUntilErr(ss)
				if err != io.EOF || n != 0 {
					st.t.Errorf("server read %d bytes and %v, want EOF", n, err)
				}
			},
		},
		{
			// RFC 9000, Section 3.5: "An endpoint SHOULD copy the error
			// code from the STOP_SENDING frame to the RESET_STREAM frame
			// it sends".
			name: "server stops sending after data",
			run: func(st *streamTest) {
				resets := st.slog.counts[wire.FrameTypeResetStream]
				w := newPatternWriter(st.cs, 0, 10<<20)
				w.step()
				ss := st.server()
				r := newPatternReader(st.t, ss, 0)
				st.run(2*time.Second, func() bool {
					w.step()
					r.step(4096)
					return r.got >= 20<<10
				})
				ss.cancelRead(0x22)
				st.run(2*time.Second, func() bool {
					w.step()
					st.cs.mu.Lock()
					defer st.cs.mu.Unlock()
					return st.cs.writeErr != nil
				})
				st.checkWriteErr("client", st.cs, 0x22, true)
				if w.written >= w.size {
					t.Error("the whole 10 MB was written: the sender was not stopped")
				}
				st.run(time.Second, func() bool { return st.slog.counts[wire.FrameTypeResetStream] > resets })
				_, err := simRead(ss, st.buf)
				st.checkStreamError("server read", err, 0x22, false)
				st.finishOther()
			},
		},
		{
			// RFC 9000, Section 3.5: "STOP_SENDING SHOULD only be sent for
			// a stream that has not been reset by the peer. STOP_SENDING
			// is most useful for streams in the 'Recv' or 'Size Known'
			// states." When all data arrived there is nothing to stop.
			name: "server stops reading after all data arrived",
			run: func(st *streamTest) {
				stops := st.clog.counts[wire.FrameTypeStopSending]
				st.writeSome(st.cs, 5000)
				st.cs.closeWrite()
				ss := st.server()
				st.run(time.Second, func() bool {
					st.cs.mu.Lock()
					defer st.cs.mu.Unlock()
					return st.cs.finAcked
				})
				ss.cancelRead(0x23)
				_, err := simRead(ss, st.buf)
				st.checkStreamError("server read", err, 0x23, false)
				st.finishOther()
				if got := st.clog.counts[wire.FrameTypeStopSending]; got != stops {
					st.t.Errorf("client received %d STOP_SENDING frames for a stream whose data had all arrived", got-stops)
				}
			},
		},
		{
			// Both ends abandon both directions at once.
			name: "both reset and stop",
			run: func(st *streamTest) {
				st.writeSome(st.cs, 50<<10)
				ss := st.server()
				st.writeSome(ss, 50<<10)
				st.cs.cancelWrite(0x31)
				st.cs.cancelRead(0x32)
				ss.cancelWrite(0x33)
				ss.cancelRead(0x34)
				st.checkWriteErr("client", st.cs, 0x31, false)
				st.checkWriteErr("server", ss, 0x33, false)
				_, err := simRead(st.cs, st.buf)
				st.checkStreamError("client read", err, 0x32, false)
				_, err = simRead(ss, st.buf)
				st.checkStreamError("server read", err, 0x34, false)
			},
		},
		{
			// The server answers and finishes its direction before it
			// reads the request to its end: the stream must still be
			// retired when the reader reaches EOF.
			name: "server reads EOF after its FIN was acknowledged",
			run: func(st *streamTest) {
				st.writeSome(st.cs, 1000)
				st.cs.closeWrite()
				ss := st.server()
				st.writeSome(ss, 2000)
				ss.closeWrite()
				st.run(time.Second, func() bool {
					ss.mu.Lock()
					defer ss.mu.Unlock()
					return ss.finAcked
				})
				n, err := st.readUntilErr(st.cs)
				if n != 2000 || err != io.EOF {
					st.t.Errorf("client read %d and %v", n, err)
				}
				n, err = st.readUntilErr(ss)
				if n != 1000 || err != io.EOF {
					st.t.Errorf("server read %d and %v", n, err)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st.t = t
			st.open()
			c.run(st)
			st.retired()
			if c := p.client.c; c.closeState != stateActive {
				t.Fatalf("connection closed: %v", c.closeErr)
			}
		})
		if t.Failed() {
			break
		}
	}
	// Every stream was given back: the server granted one more stream per
	// stream retired, and neither end holds any.
	if n := len(p.server.c.streams.streams) + len(p.client.c.streams.streams); n != 0 {
		t.Errorf("%d streams still held", n)
	}
	if got, want := p.client.c.streams.peerMaxBidi, uint64(len(cases)); got < want {
		t.Errorf("client may open %d streams in total, want at least %d", got, want)
	}
}

// Unidirectional streams the peer resets are given back once the
// application has seen them: "An endpoint that receives a RESET_STREAM
// frame ... the receiving part of the stream ... enters the 'Reset Recvd'
// state" and the limit is raised "as streams are closed" (RFC 9000,
// Sections 3.2 and 4.6). Streams the application never accepted are not
// given back, so a peer cannot make the accept queue grow without bound:
// "Endpoints MUST NOT exceed the limit set by their peer" only protects
// the endpoint if its limit counts the streams it still holds.
func TestSimUniStreamsResetRetired(t *testing.T) {
	const limit = 4
	p := newSimPair(t, testLink, &Config{MaxIncomingUniStreams: limit}, 32)
	p.connect(t)
	buf := make([]byte, 100)
	opened, done := 0, 0
	const total = 30
	p.run(t, 10*time.Second, func() bool {
		for opened < total {
			s, _, err := p.client.c.streams.openStream(false)
			if err != nil {
				t.Fatal(err)
			}
			if s == nil {
				break
			}
			opened++
			simWrite(s, []byte("some data"))
			s.cancelWrite(StreamErrorCode(opened))
		}
		for _, s := range acceptAll(p.server.c, false) {
			p.server.pending = append(p.server.pending, s)
		}
		keep := p.server.pending[:0]
		for _, s := range p.server.pending {
			_, err := simRead(s, buf)
			var se *StreamError
			switch {
			case err == nil:
				keep = append(keep, s)
			case errors.As(err, &se) && se.Remote && se.Code == StreamErrorCode(s.id.Num()):
				done++
			default:
				t.Fatalf("stream %d: read %v", s.id, err)
			}
		}
		p.server.pending = keep
		return done == total
	})

	// Now the server stops accepting: the client can open no more than
	// the limit, however fast it resets them.
	end := p.sim.Now().Add(2 * time.Second)
	p.run(t, 3*time.Second, func() bool {
		for {
			s, _, _ := p.client.c.streams.openStream(false)
			if s == nil {
				break
			}
			opened++
			s.cancelWrite(1)
		}
		return !p.sim.Now().Before(end)
	})
	m := p.server.c.streams
	m.mu.Lock()
	queued, held := len(m.acceptUni), len(m.streams)
	m.mu.Unlock()
	if queued > limit || held > limit {
		t.Fatalf("server holds %d streams, %d waiting to be accepted, with a limit of %d", held, queued, limit)
	}
	if opened != total+limit {
		t.Errorf("client opened %d streams, want %d", opened, total+limit)
	}
}

// Many streams need control frames at once, more than one packet holds:
// each must still get its turn. "An endpoint that receives a STOP_SENDING
// frame MUST send a RESET_STREAM frame if the stream is in the 'Ready' or
// 'Send' state." (RFC 9000, Section 3.5), and a receiver that abandons a
// stream tells the sender with STOP_SENDING; here the server abandons 100
// streams in both directions in one go.
func TestSimManyStreamsCanceledAtOnce(t *testing.T) {
	const n = 300
	// Each stream sends its 3000 bytes in its turn (DefaultPriority's
	// turns are longer): the server's connection window must take all
	// their data, which it does not read, for all of them to reach it.
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: n, InitialConnectionReceiveWindow: 2 << 20}, 33)
	p.connect(t)
	var cs []*stream
	for range n {
		s, _, _ := p.client.c.streams.openStream(true)
		simWrite(s, make([]byte, 3000))
		cs = append(cs, s)
	}
	var ss []*stream
	p.run(t, 2*time.Second, func() bool {
		ss = append(ss, acceptAll(p.server.c, true)...)
		return len(ss) == n
	})
	for i, s := range ss {
		simWrite(s, make([]byte, 100))
		s.cancelWrite(StreamErrorCode(1<<40 + i)) // 8-byte codes: frames of 13 bytes and more
		s.cancelRead(StreamErrorCode(1<<41 + i))
	}
	buf := make([]byte, 4096)
	p.run(t, 5*time.Second, func() bool {
		finished := 0
		for _, s := range cs {
			s.mu.Lock()
			werr := s.writeErr
			s.mu.Unlock()
			_, rerr := simRead(s, buf)
			var se *StreamError
			if werr != nil && errors.As(rerr, &se) && se.Remote {
				finished++
			}
		}
		return finished == n
	})
	// The client's ends finish when it closes its own directions
	// (RESET_STREAM answers STOP_SENDING by itself); then both forget
	// every stream.
	p.run(t, 5*time.Second, func() bool {
		return len(p.client.c.streams.streams) == 0 && len(p.server.c.streams.streams) == 0
	})
}

// A stream whose control frame did not fit in a packet keeps its turn for
// the next packet. Here the packet has room for neither the RESET_STREAM
// (13 bytes) nor STREAM data: the stream must stay queued, or the frame
// "MUST send a RESET_STREAM frame" (RFC 9000, Section 3.5) asks for would
// never go out.
func TestStreamControlFrameKeepsTurn(t *testing.T) {
	p := newSimPair(t, testLink, nil, 36)
	p.connect(t)
	c := p.client.c
	s, _, _ := c.streams.openStream(true)
	simWrite(s, []byte("data"))
	s.cancelWrite(1 << 40)
	c.streams.processAttention(p.sim.Now())
	if !c.streams.hasDataToSend() {
		t.Fatal("reset stream not queued")
	}
	b := make([]byte, 0, 1500)
	b = c.streams.appendStreamFrames(p.sim.Now(), b, 12)
	if len(b) != 0 {
		t.Fatalf("appended %d bytes", len(b))
	}
	if !c.streams.hasDataToSend() {
		t.Fatal("stream with a RESET_STREAM to send was dropped from the send queue")
	}
	p.run(t, time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.resetAcked
	})
}
