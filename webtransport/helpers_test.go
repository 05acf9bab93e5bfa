package webtransport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
)

// testEnv is a WebTransport server on 127.0.0.1 and a Dialer for it.
type testEnv struct {
	wt     *Server
	srv    *http3.Server
	dialer *Dialer
	url    string
	pool   *x509.CertPool
}

// newTestEnv serves handle (in a goroutine per session) at /wt, with the
// server changed by setup if not nil.
func newTestEnv(t *testing.T, setup func(*Server), handle func(*Session)) *testEnv {
	t.Helper()
	cert, pool, err := certs.SelfSigned("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{wt: &Server{}, pool: pool}
	if setup != nil {
		setup(e.wt)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/wt", func(w http.ResponseWriter, r *http.Request) {
		sess, err := e.wt.Upgrade(w, r)
		if err != nil {
			return
		}
		go handle(sess)
	})
	e.srv = &http3.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	e.wt.ConfigureServer(e.srv)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go e.srv.Serve(pc)
	e.url = "https://" + pc.LocalAddr().String() + "/wt"
	e.dialer = &Dialer{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
	t.Cleanup(func() {
		e.dialer.Close()
		e.srv.Close()
		pc.Close()
	})
	return e
}

// dial opens a session, failing the test on error.
func (e *testEnv) dial(t *testing.T) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, sess, err := e.dialer.Dial(ctx, e.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return sess
}

// testCtx is a context for a test's blocking calls, so that a bug fails
// the test rather than hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
