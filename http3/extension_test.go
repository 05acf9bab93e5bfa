package http3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// Extensions: settings are sent (leaving out the package's own and
// repeated identifiers), each side sees all of the peer's, streams of
// unknown types or with a signal value reach the hooks, and a
// server-initiated stream the client's hook declines closes the
// connection.
func TestExtensionsSettingsAndStreams(t *testing.T) {
	type stream struct {
		kind string
		v    uint64
		data string
	}
	got := make(chan stream, 4)
	hookRead := func(kind string, v uint64, r io.Reader) {
		b, _ := io.ReadAll(r)
		got <- stream{kind, v, string(b)}
	}
	var serverQC *quic.Conn
	peerSettings := make(chan []Setting, 1)
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := w.(ExtendedConnectWriter)
		s, err := ew.PeerSettings(r.Context())
		if err != nil {
			t.Error(err)
		}
		peerSettings <- s
		serverQC = ew.QUICConn()
		io.WriteString(w, "ok")
	}), func(s *Server) {
		s.EnableExtendedConnect = true
		s.Extensions = &Extensions{
			Settings: []Setting{{ID: 0x2c7cf000, Value: 1}, {ID: settingQPACKMaxTableCapacity, Value: 9}, {ID: 0x2c7cf000, Value: 2}},
			UniStream: func(qc *quic.Conn, typ uint64, str *quic.ReceiveStream, r io.Reader) bool {
				if typ != 0x54 {
					return false
				}
				go hookRead("uni", typ, r)
				return true
			},
			BidiStream: func(qc *quic.Conn, signal uint64, str *quic.Stream, r io.Reader) bool {
				if signal != 0x41 {
					return false
				}
				go hookRead("bidi", signal, r)
				return true
			},
		}
	})
	clientGot := make(chan stream, 1)
	e.tr.Extensions = &Extensions{
		Settings: []Setting{{ID: 0xabc, Value: 7}},
		BidiStream: func(qc *quic.Conn, signal uint64, str *quic.Stream, r io.Reader) bool {
			if signal != 0x41 {
				return false
			}
			go func() {
				b, _ := io.ReadAll(r)
				clientGot <- stream{"server bidi", signal, string(b)}
			}()
			return true
		},
	}
	resp, body := e.get(t, "/")
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if s := <-peerSettings; !hasSetting(s, 0xabc, 7) {
		t.Fatalf("the server saw the client's SETTINGS as %v", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodConnect, e.url+"/x", nil)
	req.Header.Set(":protocol", "p")
	var seen []Setting
	_, _, err := e.tr.OpenRequestStreamIf(req, func(qc *quic.Conn, peer []Setting) error {
		seen = peer
		return errors.New("not this time")
	})
	if err == nil || err.Error() != "not this time" {
		t.Fatalf("OpenRequestStreamIf: %v", err)
	}
	n := 0
	for _, s := range seen {
		if s.ID == 0x2c7cf000 {
			n++
			if s.Value != 1 {
				t.Errorf("extension setting with value %d", s.Value)
			}
		}
		if s.ID == settingQPACKMaxTableCapacity && s.Value == 9 {
			t.Error("the package's own setting was overridden")
		}
	}
	if n != 1 {
		t.Fatalf("the client saw the server's SETTINGS as %v", seen)
	}

	// Streams, opened raw on the client's QUIC connection.
	qc := transportConn(t, e)
	us, _ := qc.OpenUniStream()
	us.Write([]byte{0x40, 0x54, 'u'})
	us.Close()
	bs, _ := qc.OpenStream()
	bs.Write([]byte{0x40, 0x41, 'b'})
	bs.CloseWrite()
	for range 2 {
		select {
		case s := <-got:
			if s.kind == "uni" && s.data != "u" || s.kind == "bidi" && s.data != "b" {
				t.Fatalf("hook got %+v", s)
			}
		case <-ctx.Done():
			t.Fatal("hooks not called")
		}
	}
	// A server-initiated stream with the signal reaches the client's hook.
	ss, err := serverQC.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	ss.Write([]byte{0x40, 0x41, 's'})
	ss.CloseWrite()
	select {
	case s := <-clientGot:
		if s.data != "s" {
			t.Fatalf("client hook got %+v", s)
		}
	case <-ctx.Done():
		t.Fatal("client hook not called")
	}
	// One with another value closes the connection (RFC 9114, Section 6.1).
	ss, _ = serverQC.OpenStream()
	ss.Write([]byte{0x21})
	<-qc.Context().Done()
	var ae *quic.ApplicationError
	if err := context.Cause(qc.Context()); !errors.As(err, &ae) || ae.Code != quic.ApplicationErrorCode(ErrCodeStreamCreationError) {
		t.Fatalf("connection ended with %v", err)
	}
}

// transportConn returns the QUIC connection of e's Transport to its server.
func transportConn(t *testing.T, e *testEnv) *quic.Conn {
	t.Helper()
	e.tr.mu.Lock()
	defer e.tr.mu.Unlock()
	for cc := range e.tr.all {
		return cc.qc
	}
	t.Fatal("no connection")
	return nil
}

func hasSetting(l []Setting, id, v uint64) bool {
	for _, s := range l {
		if s.ID == id && s.Value == v {
			return true
		}
	}
	return false
}
