package webtransport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quicstack/quic"
)

// "If an endpoint receives a session ID on a unidirectional stream ...
// that does not correspond to a client-initiated bidirectional stream
// ID, the endpoint MUST close the connection with an H3_ID_ERROR error
// code." (Section 4)
func TestSessionIDOfWrongStreamTypeClosesConnection(t *testing.T) {
	e := newTestEnv(t, nil, echo)
	sess := e.dial(t)
	qc := sess.cs.qc
	str, err := qc.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	str.Write([]byte{0x40, uniStreamType, 0x01}) // session ID 1: a server-initiated bidi stream
	<-qc.Context().Done()
	var ae *quic.ApplicationError
	if err := context.Cause(qc.Context()); !errors.As(err, &ae) || ae.Code != h3IDError || !ae.Remote {
		t.Fatalf("connection ended with %v, want the server's H3_ID_ERROR", err)
	}
}

// The peer's WT_MAX_STREAMS limit holds OpenUniStream back, and
// OpenUniStreamSync waits for the capsule that raises it once the server
// finished streams (Section 5.6.1).
func TestStreamLimitAndMaxStreamsCapsule(t *testing.T) {
	e := newTestEnv(t, func(s *Server) { s.Config = &Config{MaxIncomingUniStreams: 2} }, func(sess *Session) {
		for {
			str, err := sess.AcceptUniStream(sess.Context())
			if err != nil {
				return
			}
			io.ReadAll(str)
		}
	})
	sess := e.dial(t)
	ctx := testCtx(t)
	for i := range 2 {
		s, err := sess.OpenUniStream()
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		s.Write([]byte("data"))
		s.Close()
	}
	if _, err := sess.OpenUniStream(); err != errTooManyStreams {
		t.Fatalf("a third stream beyond the limit of 2: %v", err)
	}
	// The server read both to the end: the limit rises.
	s, err := sess.OpenUniStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// A peer that opens more streams than allowed gets its session closed
// with WT_FLOW_CONTROL_ERROR: "If an endpoint receives an incoming stream
// for a session that would exceed the advertised Maximum Streams value,
// it MUST close the WebTransport session with a WT_FLOW_CONTROL_ERROR
// error code." (Section 5.6.1)
func TestStreamsBeyondLimitCloseSession(t *testing.T) {
	ended := make(chan error, 1)
	e := newTestEnv(t, func(s *Server) { s.Config = &Config{MaxIncomingUniStreams: 2} }, func(sess *Session) {
		<-sess.Context().Done()
		ended <- context.Cause(sess.Context())
	})
	sess := e.dial(t)
	qc := sess.cs.qc
	for range 3 { // past our own limiter, straight on QUIC
		str, err := qc.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		str.Write(appendVarint(appendVarint(nil, uniStreamType), sess.id))
	}
	ctx := testCtx(t)
	select {
	case err := <-ended:
		if err == nil || !strings.Contains(err.Error(), "WT_FLOW_CONTROL_ERROR") {
			t.Fatalf("server session ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the server kept the session")
	}
	<-sess.Context().Done() // the client learns it from its CONNECT stream
}

// A small session data window (WT_MAX_DATA) still carries much more data:
// the receiver raises it as its application reads (Section 5.6.3).
func TestDataWindowIsRaised(t *testing.T) {
	e := newTestEnv(t, func(s *Server) { s.Config = &Config{MaxIncomingData: 1000} }, echo)
	sess := e.dial(t)
	if sess.fc.peerMaxData != 1000 {
		t.Fatalf("the server's initial data limit is %d", sess.fc.peerMaxData)
	}
	str, err := sess.OpenStreamSync(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	msg := strings.Repeat("0123456789", 10000)
	go func() { io.WriteString(str, msg); str.CloseWrite() }()
	got, err := io.ReadAll(str)
	if err != nil || string(got) != msg {
		t.Fatalf("echo of %d bytes through a 1000-byte window: %d, %v", len(msg), len(got), err)
	}
	sess.mu.Lock()
	sent, limit := sess.fc.sentData, sess.fc.peerMaxData
	sess.mu.Unlock()
	if sent < 100000 || limit < sent {
		t.Fatalf("sent %d under a limit of %d", sent, limit)
	}
}

// Data of streams that end unread still counts: "For streams that were
// reset, implementing WT_MAX_DATA requires that the QUIC stack provide
// the WebTransport implementation with information about the final size
// of streams ... This guarantees that both endpoints agree on how much
// WebTransport session flow control credit was consumed by the sender on
// that stream." (Section 5.6.3) The receiver credits the unread bytes
// back when such a stream ends, so a sender that resets its streams, or
// whose streams the application stops reading, is not starved of
// credit: here 20 streams of 600 bytes each through a 1000-byte window.
func TestUnreadDataOfEndedStreamsIsCredited(t *testing.T) {
	e := newTestEnv(t, func(s *Server) { s.Config = &Config{MaxIncomingData: 1000} }, func(sess *Session) {
		ctx := sess.Context()
		for i := 0; ; i++ {
			str, err := sess.AcceptUniStream(ctx)
			if err != nil {
				return
			}
			if i%2 == 1 {
				str.CancelRead(5) // not read, and the peer is asked to stop
				// (the server sees the streams in an order of its own)
			} else {
				go io.Copy(io.Discard, str) // until the reset
			}
		}
	})
	sess := e.dial(t)
	payload := bytes.Repeat([]byte("d"), 600)
	for i := range 20 {
		str, err := sess.OpenUniStreamSync(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		str.SetWriteDeadline(time.Now().Add(20 * time.Second))
		if _, err := str.Write(payload); err != nil {
			var se *StreamError
			if errors.As(err, &se) && se.Remote && se.ErrorCode == 5 {
				continue // the server stopped reading this one first
			}
			t.Fatalf("stream %d: %v", i, err)
		}
		if i%2 == 0 {
			str.CancelWrite(3) // reset after the data
		} else {
			str.Close()
		}
	}
}

// A Write waiting for session credit (WT_MAX_DATA) on a stream that the
// peer then stops with STOP_SENDING returns the peer's code, not the end
// of the stream's context.
func TestWriteBlockedOnSessionCreditSeesStopSending(t *testing.T) {
	e := newTestEnv(t, func(s *Server) { s.Config = &Config{MaxIncomingData: 1000} }, func(sess *Session) {
		str, err := sess.AcceptUniStream(sess.Context())
		if err != nil {
			return
		}
		str.CancelRead(9)
	})
	sess := e.dial(t)
	str, err := sess.OpenUniStreamSync(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	str.SetWriteDeadline(time.Now().Add(20 * time.Second))
	_, err = str.Write(bytes.Repeat([]byte("w"), 5000))
	var se *StreamError
	if !errors.As(err, &se) || !se.Remote || se.ErrorCode != 9 {
		t.Fatalf("Write: %v, want the peer's code 9", err)
	}
}

// "the number of buffered streams is exceeded, a stream MUST be closed by
// sending a RESET_STREAM and/or STOP_SENDING with the
// WT_BUFFERED_STREAM_REJECTED error code" (Section 4.6).
// Here the streams never time out: only the bound rejects one of them
// (the server sees them in an order of its own).
func TestBufferedStreamsAreBounded(t *testing.T) {
	e := newTestEnv(t, func(s *Server) { s.conns.pendingTimeout = time.Hour }, echo)
	sess := e.dial(t)
	qc := sess.cs.qc
	var strs []*quic.SendStream
	for range maxPendingStreams + 1 {
		str, err := qc.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		str.Write(appendVarint(appendVarint(nil, uniStreamType), 400)) // no such session yet
		strs = append(strs, str)
	}
	ctx := testCtx(t)
	for {
		for _, str := range strs {
			_, err := str.Write([]byte("x"))
			var se *quic.StreamError
			if errors.As(err, &se) {
				if se.Code != codeBufferedStreamRejected || !se.Remote {
					t.Fatalf("stream reset with %v", err)
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("17 streams kept for a session that does not exist")
		case <-after(5):
		}
	}
}

// Drain sends WT_DRAIN_SESSION; the peer's Draining channel closes and
// the session goes on (Section 4.7).
func TestDrain(t *testing.T) {
	drained := make(chan *Session, 1)
	e := newTestEnv(t, nil, func(sess *Session) {
		<-sess.Draining()
		drained <- sess
		echo(sess)
	})
	sess := e.dial(t)
	if err := sess.Drain(); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	select {
	case <-drained:
	case <-ctx.Done():
		t.Fatal("the server did not see WT_DRAIN_SESSION")
	}
	str, err := sess.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	str.Write([]byte("still open"))
	str.CloseWrite()
	if b, err := io.ReadAll(str); err != nil || string(b) != "still open" {
		t.Fatalf("after drain: %q %v", b, err)
	}
}

// Server.Drain sends WT_DRAIN_SESSION on every session, on each of the
// server's connections: each client session's Draining channel closes,
// and the sessions go on.
func TestServerDrainAllSessions(t *testing.T) {
	up := make(chan *Session, 3)
	e := newTestEnv(t, nil, func(sess *Session) {
		up <- sess
		echo(sess)
	})
	other := &Dialer{TLSClientConfig: e.dialer.TLSClientConfig}
	defer other.Close()
	ctx := testCtx(t)
	_, c, err := other.Dial(ctx, e.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := e.dial(t), e.dial(t)
	if a.cs == c.cs {
		t.Fatal("the second Dialer shares the first's connection")
	}
	for range 3 {
		select {
		case <-up:
		case <-ctx.Done():
			t.Fatal("sessions not established on the server")
		}
	}
	for _, s := range []*Session{a, b, c} {
		select {
		case <-s.Draining():
			t.Fatal("draining before Server.Drain")
		default:
		}
	}
	e.wt.Drain()
	for i, s := range []*Session{a, b, c} {
		select {
		case <-s.Draining():
		case <-ctx.Done():
			t.Fatalf("session %d: no WT_DRAIN_SESSION", i)
		}
		str, err := s.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		str.Write([]byte("after drain"))
		str.CloseWrite()
		if got, err := io.ReadAll(str); err != nil || string(got) != "after drain" {
			t.Fatalf("session %d after drain: %q %v", i, got, err)
		}
	}
}

// "Senders that truncate an application-supplied message MUST do so at a
// UTF-8 character boundary", and its "length MUST NOT exceed 1024 bytes"
// (Section 6).
func TestCloseMessageTruncatedAtCharacter(t *testing.T) {
	closed := make(chan error, 1)
	e := newTestEnv(t, nil, func(sess *Session) {
		<-sess.Context().Done()
		closed <- context.Cause(sess.Context())
	})
	sess := e.dial(t)
	long := strings.Repeat("é", 600) // 1200 bytes, two per character
	sess.CloseWithError(9, "a"+long)
	var se *SessionError
	if err := <-closed; !errors.As(err, &se) || len(se.Message) > maxCloseMessage || !utf8.ValidString(se.Message) || len(se.Message) < maxCloseMessage-1 {
		t.Fatalf("server saw %v (%d bytes)", err, len(se.Message))
	}
}

// Error codes map into WT_APPLICATION_ERROR skipping the reserved HTTP/3
// codepoints, both ways (Section 4.4, Figure 4).
func TestErrorCodeMapping(t *testing.T) {
	if httpCode(0) != firstAppCode || httpCode(0xffffffff) != lastAppCode {
		t.Fatalf("ends: %#x %#x", httpCode(0), httpCode(0xffffffff))
	}
	for _, n := range []StreamErrorCode{0, 1, 0x1c, 0x1d, 0x1e, 0x1f, 0x3c, 12345678, 0xfffffffe, 0xffffffff} {
		h := httpCode(n)
		if (h-0x21)%0x1f == 0 {
			t.Fatalf("%#x maps to the reserved codepoint %#x", n, h)
		}
		if back, ok := appCode(h); !ok || back != n {
			t.Fatalf("%#x -> %#x -> %#x %v", n, h, back, ok)
		}
	}
	for _, h := range []uint64{firstAppCode - 1, lastAppCode + 1, 0x0, 0x100, codeSessionGone} {
		if _, ok := appCode(h); ok {
			t.Fatalf("%#x mapped", h)
		}
	}
	// The reserved codepoints in the range are not application codes.
	for h := uint64(firstAppCode); h < firstAppCode+0x40; h++ {
		if _, ok := appCode(h); ok == ((h-0x21)%0x1f == 0) {
			t.Fatalf("%#x: ok %v", h, ok)
		}
	}
}

// FuzzFlowControlCapsule feeds flow control capsules to a session's flow
// control: never a panic, limits never fall, and values above 2^60 for
// streams close the session.
func FuzzFlowControlCapsule(f *testing.F) {
	f.Add(uint64(capsuleMaxStreamsBidi), appendVarint(nil, 10))
	f.Add(uint64(capsuleMaxData), appendVarint(nil, 1<<40))
	f.Add(uint64(capsuleStreamsBlockedUni), appendVarint(nil, maxStreamsLimit+1))
	f.Add(uint64(capsuleDataBlocked), []byte{0x40})
	f.Fuzz(func(t *testing.T, typ uint64, v []byte) {
		fc := flowControl{enabled: true, peerMaxBidi: 5, peerMaxUni: 5, peerMaxData: 1000}
		before := fc
		raised, ok := fc.onCapsule(typ, v)
		if fc.peerMaxBidi < before.peerMaxBidi || fc.peerMaxUni < before.peerMaxUni || fc.peerMaxData < before.peerMaxData {
			t.Fatalf("a limit fell: %+v -> %+v", before, fc)
		}
		if raised && !ok {
			t.Fatal("raised on a violation")
		}
		if fc.peerMaxBidi > maxStreamsLimit || fc.peerMaxUni > maxStreamsLimit {
			t.Fatalf("stream limit above 2^60: %+v", fc)
		}
	})
}

// The server's GOAWAY (Server.Shutdown) makes the client's sessions
// drain (Section 4.7).
func TestGoawayDrainsSessions(t *testing.T) {
	e := newTestEnv(t, nil, echo)
	sess := e.dial(t)
	go e.srv.Shutdown(context.Background())
	select {
	case <-sess.Draining():
	case <-testCtx(t).Done():
		t.Fatal("GOAWAY did not drain the session")
	}
}
