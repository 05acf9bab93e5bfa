package webtransport

// WebTransport over HTTP/3 between our package webtransport and quic-go's
// webtransport-go (v0.13, draft-ietf-webtrans-http3-16), in both
// directions: the server echoes each bidirectional stream on itself, each
// unidirectional stream on a new one and each datagram; the client checks
// them, a stream reset's application error code, and the WT_CLOSE_SESSION
// capsule's code and message seen by the server.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	qgh3 "github.com/quic-go/quic-go/http3"
	qgwt "github.com/quic-go/webtransport-go"
	oursh3 "github.com/quicstack/quic/http3"
	ourwt "github.com/quicstack/quic/webtransport"
)

// wtSession is what the tests use of either implementation's session.
type wtSession interface {
	AcceptStream(context.Context) (wtAccepted, error)
	AcceptUniStream(context.Context) (io.Reader, error)
	OpenStream(context.Context) (wtBidi, error)
	OpenUniStream(context.Context) (io.WriteCloser, error)
	SendDatagram([]byte) error
	ReceiveDatagram(context.Context) ([]byte, error)
}

// wtAccepted is a bidirectional stream the server accepts: Close ends
// the sending direction, reset cancels both with application codes.
type wtAccepted interface {
	io.ReadWriteCloser
	reset(write, read uint32)
}

// wtBidi is a bidirectional stream the client opens.
type wtBidi interface {
	io.ReadWriter
	CloseWrite() error
}

// wtEcho serves a session until ctx ends (see the file comment); a
// bidirectional stream that starts with "reset" is reset instead, with
// code 0xfffffff0 for writing and 77 for reading (STOP_SENDING).
func wtEcho(ctx context.Context, s wtSession) {
	go func() {
		for {
			str, err := s.AcceptStream(ctx)
			if err != nil {
				return
			}
			go func() {
				first := make([]byte, 5)
				if _, err := io.ReadFull(str, first); err != nil {
					return
				}
				if string(first) == "reset" {
					str.reset(0xfffffff0, 77)
					return
				}
				str.Write(first)
				io.Copy(str, str)
				str.Close()
			}()
		}
	}()
	go func() {
		for {
			str, err := s.AcceptUniStream(ctx)
			if err != nil {
				return
			}
			go func() {
				b, err := io.ReadAll(str)
				if err != nil {
					return
				}
				out, err := s.OpenUniStream(ctx)
				if err != nil {
					return
				}
				out.Write(b)
				out.Close()
			}()
		}
	}()
	for {
		d, err := s.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		s.SendDatagram(d)
	}
}

// wtCheckEcho runs the client's side of the echo.
func wtCheckEcho(t *testing.T, ctx context.Context, s wtSession) {
	t.Helper()
	str, err := s.OpenStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("webtransport "), 20000)
	go func() { str.Write(msg); str.CloseWrite() }()
	got, err := io.ReadAll(str)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("bidirectional echo: %d of %d bytes, %v", len(got), len(msg), err)
	}
	u, err := s.OpenUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u.Write([]byte("unidirectional"))
	u.Close()
	in, err := s.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(in); err != nil || string(got) != "unidirectional" {
		t.Fatalf("unidirectional echo: %q, %v", got, err)
	}
	// Resets carry application error codes both ways (Section 4.4).
	rst, err := s.OpenStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rst.Write([]byte("reset"))
	_, err = io.ReadAll(rst)
	if code, ok := wtStreamErrorCode(err); !ok || code != 0xfffffff0 {
		t.Fatalf("read of a reset stream: %v, want an error with code 0xfffffff0", err)
	}
	for {
		if _, err = rst.Write([]byte("more")); err != nil {
			break
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("writes go on after STOP_SENDING")
		}
	}
	if code, ok := wtStreamErrorCode(err); !ok || code != 77 {
		t.Fatalf("write after STOP_SENDING: %v, want an error with code 77", err)
	}

	dg := make(chan []byte, 1)
	go func() {
		if d, err := s.ReceiveDatagram(ctx); err == nil {
			dg <- d
		}
	}()
	for {
		if err := s.SendDatagram([]byte("datagram")); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-dg:
			if string(d) != "datagram" {
				t.Fatalf("datagram %q", d)
			}
			return
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("no datagram came back")
		}
	}
}

// wtStreamErrorCode returns the application error code of either
// implementation's stream error, with the peer as its origin.
func wtStreamErrorCode(err error) (uint32, bool) {
	var ose *ourwt.StreamError
	if errors.As(err, &ose) && ose.Remote && ose.HasCode {
		return uint32(ose.ErrorCode), true
	}
	var qse *qgwt.StreamError
	if errors.As(err, &qse) && qse.Remote {
		return uint32(qse.ErrorCode), true
	}
	return 0, false
}

// ourWTSession adapts our session.
type ourWTSession struct{ s *ourwt.Session }

func (o ourWTSession) AcceptStream(ctx context.Context) (wtAccepted, error) {
	s, err := o.s.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return closeWriter{s}, nil
}

// closeWriter makes Close end only the sending direction, as in
// webtransport-go, for the echo.
type closeWriter struct{ *ourwt.Stream }

func (c closeWriter) Close() error { return c.CloseWrite() }

func (c closeWriter) reset(w, r uint32) {
	c.CancelWrite(ourwt.StreamErrorCode(w))
	c.CancelRead(ourwt.StreamErrorCode(r))
}

func (o ourWTSession) AcceptUniStream(ctx context.Context) (io.Reader, error) {
	return o.s.AcceptUniStream(ctx)
}
func (o ourWTSession) OpenStream(ctx context.Context) (wtBidi, error) {
	return o.s.OpenStreamSync(ctx)
}
func (o ourWTSession) OpenUniStream(ctx context.Context) (io.WriteCloser, error) {
	return o.s.OpenUniStreamSync(ctx)
}
func (o ourWTSession) SendDatagram(p []byte) error { return o.s.SendDatagram(p) }
func (o ourWTSession) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	return o.s.ReceiveDatagram(ctx)
}

// qgWTSession adapts webtransport-go's session.
type qgWTSession struct{ s *qgwt.Session }

func (q qgWTSession) AcceptStream(ctx context.Context) (wtAccepted, error) {
	s, err := q.s.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return qgAccepted{s}, nil
}

type qgAccepted struct{ *qgwt.Stream }

func (q qgAccepted) reset(w, r uint32) {
	q.CancelWrite(qgwt.StreamErrorCode(w))
	q.CancelRead(qgwt.StreamErrorCode(r))
}
func (q qgWTSession) AcceptUniStream(ctx context.Context) (io.Reader, error) {
	return q.s.AcceptUniStream(ctx)
}
func (q qgWTSession) OpenStream(ctx context.Context) (wtBidi, error) {
	s, err := q.s.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return qgBidi{s}, nil
}

// qgBidi gives webtransport-go's stream CloseWrite (its Close ends the
// sending direction).
type qgBidi struct{ *qgwt.Stream }

func (b qgBidi) CloseWrite() error { return b.Close() }

func (q qgWTSession) OpenUniStream(ctx context.Context) (io.WriteCloser, error) {
	return q.s.OpenUniStreamSync(ctx)
}
func (q qgWTSession) SendDatagram(p []byte) error { return q.s.SendDatagram(p) }
func (q qgWTSession) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	return q.s.ReceiveDatagram(ctx)
}

func TestWebTransportOurClientQuicGoServer(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	closed := make(chan error, 1)
	wts := &qgwt.Server{H3: &qgh3.Server{TLSConfig: stls}, CheckOrigin: func(*http.Request) bool { return true }}
	mux := http.NewServeMux()
	mux.HandleFunc("/wt", func(w http.ResponseWriter, r *http.Request) {
		sess, err := wts.Upgrade(w, r)
		if err != nil {
			return
		}
		go func() {
			go wtEcho(sess.Context(), qgWTSession{sess})
			<-sess.Context().Done()
			// webtransport-go cancels the context without a cause; a
			// closed session's AcceptStream returns why.
			_, err := sess.AcceptStream(context.Background())
			closed <- err
		}()
	})
	wts.H3.Handler = mux
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	go wts.Serve(udp)
	t.Cleanup(func() { wts.Close(); udp.Close() })

	d := &ourwt.Dialer{TLSClientConfig: ctls}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, sess, err := d.Dial(ctx, "https://"+udp.LocalAddr().String()+"/wt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	wtCheckEcho(t, ctx, ourWTSession{sess})
	if err := sess.CloseWithError(4242, "ours closes"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-closed:
		var se *qgwt.SessionError
		if !errors.As(err, &se) || se.ErrorCode != 4242 || se.Message != "ours closes" || !se.Remote {
			t.Fatalf("webtransport-go saw the session end with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("webtransport-go did not see the session end")
	}
}

func TestWebTransportQuicGoClientOurServer(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	closed := make(chan error, 1)
	wts := &ourwt.Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("/wt", func(w http.ResponseWriter, r *http.Request) {
		sess, err := wts.Upgrade(w, r)
		if err != nil {
			return
		}
		go func() {
			go wtEcho(sess.Context(), ourWTSession{sess})
			<-sess.Context().Done()
			closed <- context.Cause(sess.Context())
		}()
	})
	srv := &oursh3.Server{Handler: mux, TLSConfig: stls}
	wts.ConfigureServer(srv)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(udp)
	t.Cleanup(func() { srv.Close(); udp.Close() })

	// A session of webtransport-go's Transport.Dial closes its QUIC
	// connection when it closes, possibly before its WT_CLOSE_SESSION
	// capsule went out; ClientConn sessions leave the connection open.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	qc, err := quicgo.DialAddr(ctx, udp.LocalAddr().String(), ctls, &quicgo.Config{EnableDatagrams: true, EnableStreamResetPartialDelivery: true})
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	tr := &qgwt.Transport{}
	defer tr.Close()
	d, err := tr.NewClientConn(qc)
	if err != nil {
		t.Fatal(err)
	}
	resp, sess, err := d.Dial(ctx, "https://"+udp.LocalAddr().String()+"/wt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	wtCheckEcho(t, ctx, qgWTSession{sess})

	if err := sess.CloseWithError(31337, "quic-go closes"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-closed:
		var se *ourwt.SessionError
		if !errors.As(err, &se) || se.ErrorCode != 31337 || se.Message != "quic-go closes" || !se.Remote {
			t.Fatalf("our server saw the session end with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("our server did not see the session end")
	}
}
