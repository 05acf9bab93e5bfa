package webtransport

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
)

// "If flow control is not enabled, clients MUST NOT attempt to establish
// more than one simultaneous WebTransport session." (Section 5.1)
// Concurrent Dials on one connection to a server without flow control
// send one CONNECT request; the others fail with errSecondSession
// without reaching the server.
func TestConcurrentDialsWithoutFlowControlSendOneRequest(t *testing.T) {
	var requests atomic.Int32
	e := newTestEnv(t, func(s *Server) {
		s.Config = &Config{DisableFlowControl: true}
		s.CheckOrigin = func(*http.Request) bool { requests.Add(1); return true }
	}, echo)
	ctx := testCtx(t)
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			_, _, err := e.dialer.Dial(ctx, e.url, nil)
			errs <- err
		}()
	}
	ok := 0
	for range n {
		err := <-errs
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, errSecondSession):
			t.Errorf("a Dial failed with %v, want errSecondSession", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d sessions established, want 1", ok)
	}
	if got := requests.Load(); got != 1 {
		t.Errorf("the server received %d CONNECT requests on a connection without flow control, want 1", got)
	}
}

// "A server that receives more than one session on an underlying
// transport connection when flow control is not enabled MUST reset the
// excessive CONNECT streams" (Section 5.1): of CONNECT requests that a
// client sends at once on one connection, the server establishes one and
// refuses the others with 429, however the handlers interleave.
func TestServerRefusesConcurrentSecondSession(t *testing.T) {
	const n = 4
	var arrived sync.WaitGroup
	arrived.Add(n)
	ctx := testCtx(t)
	e := newTestEnv(t, func(s *Server) {
		s.Config = &Config{DisableFlowControl: true}
		s.CheckOrigin = func(*http.Request) bool {
			// All handlers call Upgrade at once.
			arrived.Done()
			done := make(chan struct{})
			go func() { arrived.Wait(); close(done) }()
			select {
			case <-done:
			case <-ctx.Done():
			}
			return true
		}
	}, echo)
	// A client that does not check the rule itself.
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.pool, ServerName: "localhost"},
		QUICConfig:      &quic.Config{EnableDatagrams: true, EnableResetStreamAt: true},
		EnableDatagrams: true,
		Extensions:      &http3.Extensions{Settings: []http3.Setting{{ID: settingWTEnabled, Value: 1}}},
	}
	defer tr.Close()
	u, _ := url.Parse(e.url)
	codes := make(chan int, n)
	for range n {
		go func() {
			req := (&http.Request{Method: http.MethodConnect, URL: u, Host: u.Host,
				Header: http.Header{":protocol": {protocolH3}}}).WithContext(ctx)
			resp, _, err := tr.OpenRequestStreamIf(req, nil)
			if err != nil {
				t.Error(err)
				codes <- 0
				return
			}
			codes <- resp.StatusCode
		}()
	}
	var ok, refused int
	for range n {
		switch c := <-codes; c {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Errorf("status %d", c)
		}
	}
	if ok != 1 || refused != n-1 {
		t.Fatalf("%d sessions established and %d refused of %d concurrent requests on one connection without flow control, want 1 and %d", ok, refused, n, n-1)
	}
}

// "everything a peer can make us store has a bound": a client that opens
// and closes sessions on one connection, one after another, leaves each
// side with at most maxClosedSessions ended session IDs remembered.
func TestEndedSessionsRememberedAreBounded(t *testing.T) {
	e := newTestEnv(t, nil, echo)
	var cs *connState
	for range maxClosedSessions + 50 {
		sess := e.dial(t)
		if cs == nil {
			cs = sess.cs
		} else if sess.cs != cs {
			t.Fatal("the sessions use two connections")
		}
		sess.CloseWithError(0, "")
	}
	cs.mu.Lock()
	n := len(cs.closed)
	cs.mu.Unlock()
	if n > maxClosedSessions {
		t.Errorf("the client remembers %d ended sessions, want at most %d", n, maxClosedSessions)
	}
	for _, scs := range e.wt.conns.snapshot() {
		scs.mu.Lock()
		n := len(scs.closed)
		scs.mu.Unlock()
		if n > maxClosedSessions {
			t.Errorf("the server remembers %d ended sessions, want at most %d", n, maxClosedSessions)
		}
	}
}

// Streams that arrived before their session and exceed its stream limit
// end the session when it is established (Section 5.6.1): the CONNECT
// stream is reset with WT_FLOW_CONTROL_ERROR, so the peer learns it too
// (Section 6), although the limit is found exceeded before the session's
// CONNECT stream reader runs.
func TestEarlyStreamsBeyondLimitResetConnectStream(t *testing.T) {
	e := newTestEnv(t, func(s *Server) {
		s.Config = &Config{MaxIncomingUniStreams: 1}
		s.conns.pendingTimeout = time.Hour
	}, echo)
	a := e.dial(t)
	qc := a.cs.qc
	next := a.id + 4 // the request stream of the next Dial
	for range 2 {
		str, err := qc.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		str.Write(appendVarint(appendVarint(nil, uniStreamType), next))
	}
	ctx := testCtx(t)
	for pending := 0; pending < 2; {
		for _, cs := range e.wt.conns.snapshot() {
			cs.mu.Lock()
			pending = len(cs.pending)
			cs.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			t.Fatal("the server did not buffer the early streams")
		case <-after(5):
		}
	}
	// The server may reset the CONNECT stream before the client read the
	// response, or after.
	_, b, err := e.dialer.Dial(ctx, e.url, nil)
	if err == nil {
		if b.id != next {
			t.Fatalf("session ID %d, want %d", b.id, next)
		}
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		select {
		case <-b.Context().Done():
		case <-wait.Done():
			t.Fatal("the server ended the session for too many streams, but the client was never told")
		}
		err = context.Cause(b.Context())
	}
	var se *quic.StreamError
	if !errors.As(err, &se) || se.Code != codeFlowControlError {
		t.Fatalf("client session ended with %v, want its CONNECT stream reset with WT_FLOW_CONTROL_ERROR", err)
	}
}

// Closing a session while streams are being opened, written and accepted
// on both sides, and datagrams sent, races nothing (-race) and leaves no
// call blocked: every call returns, and those after the close fail.
func TestCloseDuringConcurrentUse(t *testing.T) {
	for range 5 {
		e := newTestEnv(t, nil, echo)
		sess := e.dial(t)
		ctx := testCtx(t)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					str, err := sess.OpenStreamSync(ctx)
					if err != nil {
						return
					}
					str.Write([]byte("payload"))
					str.CloseWrite()
					sess.SendDatagram([]byte("d"))
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, err := sess.ReceiveDatagram(ctx); err != nil {
					return
				}
			}
		}()
		<-after(20)
		sess.CloseWithError(7, "bye")
		wg.Wait()
		if ctx.Err() != nil {
			t.Fatal("calls blocked after the close")
		}
		if _, err := sess.OpenStream(); err == nil {
			t.Fatal("OpenStream after the close")
		}
	}
}

// "If the Application Error Message exceeds 1024 bytes or is not valid
// UTF-8, the receiver MUST reset the stream with code H3_MESSAGE_ERROR."
// (Section 6) A client that lies with such a WT_CLOSE_SESSION sees its
// CONNECT stream reset so, and the server's session ends.
func TestMalformedCloseCapsuleResetsConnectStream(t *testing.T) {
	for _, msg := range []string{strings.Repeat("x", 1025), "\xff\xfe"} {
		ended := make(chan error, 1)
		e := newTestEnv(t, nil, func(sess *Session) {
			<-sess.Context().Done()
			ended <- context.Cause(sess.Context())
		})
		sess := e.dial(t)
		v := append([]byte{0, 0, 0, 9}, msg...)
		if err := sess.rs.WriteCapsule(capsuleCloseSession, v); err != nil {
			t.Fatal(err)
		}
		ctx := testCtx(t)
		select {
		case err := <-ended:
			var se *SessionError
			if errors.As(err, &se) {
				t.Fatalf("server accepted the malformed close as %v", se)
			}
		case <-ctx.Done():
			t.Fatal("the server kept the session")
		}
		<-sess.Context().Done()
		var qe *quic.StreamError
		if err := context.Cause(sess.Context()); !errors.As(err, &qe) || qe.Code != quic.StreamErrorCode(http3.ErrCodeMessageError) {
			t.Fatalf("message of %d bytes: client session ended with %v, want H3_MESSAGE_ERROR", len(msg), err)
		}
	}
}
