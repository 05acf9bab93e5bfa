package webtransport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

// echo serves a session: each bidirectional stream is echoed on itself,
// each unidirectional stream on a new one, each datagram back.
func echo(sess *Session) {
	ctx := sess.Context()
	go func() {
		for {
			str, err := sess.AcceptStream(ctx)
			if err != nil {
				return
			}
			go func() {
				io.Copy(str, str)
				str.CloseWrite()
			}()
		}
	}()
	go func() {
		for {
			str, err := sess.AcceptUniStream(ctx)
			if err != nil {
				return
			}
			go func() {
				b, err := io.ReadAll(str)
				if err != nil {
					return
				}
				out, err := sess.OpenUniStreamSync(ctx)
				if err != nil {
					return
				}
				out.Write(b)
				out.Close()
			}()
		}
	}()
	for {
		d, err := sess.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		sess.SendDatagram(d)
	}
}

func TestEchoStreamsAndDatagrams(t *testing.T) {
	e := newTestEnv(t, nil, echo)
	sess := e.dial(t)
	ctx := testCtx(t)

	str, err := sess.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("bidi "), 50000)
	go func() { str.Write(msg); str.CloseWrite() }()
	got, err := io.ReadAll(str)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("bidi echo: %d bytes, %v", len(got), err)
	}

	u, err := sess.OpenUniStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u.Write([]byte("uni hello"))
	u.Close()
	in, err := sess.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(in)
	if err != nil || string(got) != "uni hello" {
		t.Fatalf("uni echo: %q, %v", got, err)
	}

	// Datagrams are unreliable even on loopback: send until one comes
	// back.
	done := make(chan []byte, 1)
	go func() {
		d, err := sess.ReceiveDatagram(ctx)
		if err == nil {
			done <- d
		}
	}()
	for i := 0; ; i++ {
		if err := sess.SendDatagram([]byte("datagram")); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-done:
			if string(d) != "datagram" {
				t.Fatalf("datagram %q", d)
			}
			return
		case <-ctx.Done():
			t.Fatal("no datagram came back")
		case <-after(50):
		}
	}
}

func TestCloseWithErrorReachesPeer(t *testing.T) {
	closed := make(chan error, 1)
	e := newTestEnv(t, nil, func(sess *Session) {
		<-sess.Context().Done()
		closed <- context.Cause(sess.Context())
	})
	sess := e.dial(t)
	ctx := testCtx(t)
	str, err := sess.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.CloseWithError(42, "bye bye"); err != nil {
		t.Fatal(err)
	}
	var se *SessionError
	select {
	case err := <-closed:
		if !errors.As(err, &se) || se.ErrorCode != 42 || se.Message != "bye bye" || !se.Remote {
			t.Fatalf("server saw %v", err)
		}
	case <-ctx.Done():
		t.Fatal("server did not see the close")
	}
	if err := context.Cause(sess.Context()); !errors.As(err, &se) || se.Remote || se.ErrorCode != 42 {
		t.Fatalf("client's cause %v", err)
	}
	if _, err := str.Write([]byte("x")); err == nil {
		t.Fatal("write on a stream of a closed session succeeded")
	}
	if _, err := sess.OpenStream(); err == nil {
		t.Fatal("OpenStream after close succeeded")
	}
}

func TestServerCloseEndsClientSession(t *testing.T) {
	e := newTestEnv(t, nil, func(sess *Session) {
		sess.CloseWithError(7, "server says no")
	})
	sess := e.dial(t)
	ctx := testCtx(t)
	_, err := sess.AcceptStream(ctx)
	var se *SessionError
	if !errors.As(err, &se) || se.ErrorCode != 7 || se.Message != "server says no" || !se.Remote {
		t.Fatalf("AcceptStream: %v", err)
	}
}

func TestStreamResetCodes(t *testing.T) {
	e := newTestEnv(t, nil, func(sess *Session) {
		str, err := sess.AcceptStream(sess.Context())
		if err != nil {
			return
		}
		str.CancelWrite(1234567)
		str.CancelRead(0xffffffff)
	})
	sess := e.dial(t)
	str, err := sess.OpenStreamSync(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	str.Write([]byte("hi"))
	_, err = io.ReadAll(str)
	var se *StreamError
	if !errors.As(err, &se) || !se.HasCode || se.ErrorCode != 1234567 || !se.Remote {
		t.Fatalf("read: %v", err)
	}
	// The STOP_SENDING makes writes fail with the peer's code.
	for {
		_, err = str.Write([]byte("more"))
		if err != nil {
			break
		}
		<-after(5)
	}
	if !errors.As(err, &se) || se.ErrorCode != 0xffffffff || !se.Remote {
		t.Fatalf("write: %v", err)
	}
}

func TestSeveralSessionsOnOneConnection(t *testing.T) {
	e := newTestEnv(t, nil, echo)
	a, b := e.dial(t), e.dial(t)
	if a.cs != b.cs {
		t.Fatal("the sessions use two connections")
	}
	if !a.fc.enabled {
		t.Fatal("flow control not in force")
	}
	ctx := testCtx(t)
	for i, s := range []*Session{a, b} {
		str, err := s.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []byte{byte('a' + i)}
		str.Write(want)
		str.CloseWrite()
		got, err := io.ReadAll(str)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("session %d: %q %v", i, got, err)
		}
	}
	a.CloseWithError(0, "")
	// b lives on.
	str, err := b.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	str.Write([]byte("still"))
	str.CloseWrite()
	if got, err := io.ReadAll(str); err != nil || string(got) != "still" {
		t.Fatalf("after the other closed: %q %v", got, err)
	}
}

// "WebTransport implementations MUST use the RESET_STREAM_AT frame ...
// with a Reliable Size set to at least the size of the WebTransport
// header when resetting a WebTransport data stream. This ensures reliable
// delivery of the ID field associating the data stream with a
// WebTransport session." (Section 4.4) Streams reset right after they
// were opened still reach the peer's session, with the reset's code.
func TestResetRightAfterOpenReachesSession(t *testing.T) {
	got := make(chan error, 20)
	e := newTestEnv(t, nil, func(sess *Session) {
		for {
			str, err := sess.AcceptUniStream(sess.Context())
			if err != nil {
				return
			}
			_, err = io.ReadAll(str)
			got <- err
		}
	})
	sess := e.dial(t)
	if !sess.cs.qc.ConnectionState().SupportsResetStreamAt {
		t.Fatal("RESET_STREAM_AT not negotiated")
	}
	ctx := testCtx(t)
	for i := range 10 {
		str, err := sess.OpenUniStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		str.CancelWrite(StreamErrorCode(100 + i))
	}
	seen := map[StreamErrorCode]bool{}
	for range 10 {
		select {
		case err := <-got:
			var se *StreamError
			if !errors.As(err, &se) || !se.HasCode || !se.Remote {
				t.Fatalf("server read %v", err)
			}
			seen[se.ErrorCode] = true
		case <-ctx.Done():
			t.Fatalf("the server saw %d of the 10 reset streams", len(seen))
		}
	}
	if len(seen) != 10 {
		t.Fatalf("codes %v", seen)
	}
}
