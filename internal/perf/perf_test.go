package perf

import (
	"context"
	"crypto/tls"
	"io"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
)

// pair returns a client connection to a perf server on loopback and the
// server's counters.
func pair(t *testing.T) (*quic.Conn, *Counters) {
	t.Helper()
	cert, pool, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	l, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{ALPN}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); l.Close() })
	var served Counters
	go func() {
		c, err := l.Accept(ctx)
		if err == nil {
			ServeConn(ctx, c, &served)
		}
	}()
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	c, err := quic.DialAddr(dctx, l.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{ALPN}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseWithError(0, "") })
	return c, &served
}

func TestRunStreams(t *testing.T) {
	c, served := pair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var n Counters
	for _, sizes := range [][2]uint64{{0, 0}, {100, 0}, {0, 100_000}, {300_000, 1_000_000}} {
		if err := RunStream(ctx, c, sizes[0], sizes[1], &n); err != nil {
			t.Fatalf("upload %d, download %d: %v", sizes[0], sizes[1], err)
		}
	}
	if n.Sent.Load() != 300_100 || n.Received.Load() != 1_100_000 {
		t.Errorf("client counted %d sent, %d received", n.Sent.Load(), n.Received.Load())
	}
	if served.Sent.Load() != 1_100_000 {
		t.Errorf("server counted %d sent", served.Sent.Load())
	}
}

// A request shorter than the 8-byte size is reset.
func TestMalformedRequest(t *testing.T) {
	c, _ := pair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte{0, 0, 1})
	s.CloseWrite()
	if _, err := io.ReadAll(s); err == nil {
		t.Error("a 3-byte request was answered")
	}
}
