package hq

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
)

// HTTP/0.9 requests reach an http.Handler as GET requests with Proto
// HTTP/0.9; the body goes back alone, and an error status resets the
// stream with a code that StatusOf reads.
func TestServeConn(t *testing.T) {
	cert, pool, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	l, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{ALPN}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/teapot" {
			w.WriteHeader(http.StatusTeapot)
			w.Write([]byte("ignored"))
			return
		}
		w.Header().Set("X-Ignored", "headers are not sent")
		io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+r.Proto+" "+r.TLS.NegotiatedProtocol)
	})
	go func() {
		c, err := l.Accept(ctx)
		if err == nil {
			ServeConn(ctx, c, h)
		}
	}()
	c, err := quic.DialAddr(ctx, l.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{ALPN}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s, err := Get(ctx, c, "/a/b?x=1")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(s); err != nil || string(b) != "GET /a/b?x=1 HTTP/0.9 hq-interop" {
		t.Errorf("response %q, %v", b, err)
	}
	s, err = Get(ctx, c, "/teapot")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(s); StatusOf(err) != http.StatusTeapot {
		t.Errorf("error status: %v", err)
	}
	for _, req := range []string{"PUT /x\r\n", "GET x\r\n", "GET " + strings.Repeat("/a", maxRequestLine) + "\r\n"} {
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			io.WriteString(s, req)
			s.CloseWrite()
		}()
		if _, err := io.ReadAll(s); err == nil || StatusOf(err) != 0 {
			t.Errorf("%.20q: %v, want a reset without a status", req, err)
		}
	}
}
