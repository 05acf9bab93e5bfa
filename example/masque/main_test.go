package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
)

// syncBuffer is a bytes.Buffer for one writer and one reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The program's proxy and client: a UDP payload reaches an echo server on
// loopback (-allow-loopback) with the token, and is refused without it.
func TestProxyAndClient(t *testing.T) {
	echo, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := echo.ReadFrom(buf)
			if err != nil {
				return
			}
			echo.WriteTo(append([]byte("echo: "), buf[:n]...), from)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, done := startProxy(t, ctx, "-token", "t0k")
	var cout bytes.Buffer
	err = run(ctx, []string{"-proxy", "https://" + addr, "-target", echo.LocalAddr().String(), "-send", "ping", "-insecure", "-token", "t0k"}, &cout)
	if err != nil || !strings.Contains(cout.String(), `"echo: ping"`) {
		t.Fatalf("client: %v, %q", err, cout.String())
	}
	err = run(ctx, []string{"-proxy", "https://" + addr, "-target", echo.LocalAddr().String(), "-insecure", "-token", "wrong"}, &cout)
	if err == nil || !strings.Contains(err.Error(), "407") {
		t.Fatalf("client with a wrong token: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("proxy: %v", err)
	}
}

// startProxy runs the program's proxy on 127.0.0.1 with -allow-loopback
// and extra flags, and returns its address and the channel run's result
// comes on once ctx ends.
func startProxy(t *testing.T, ctx context.Context, extra ...string) (string, chan error) {
	t.Helper()
	var out syncBuffer
	done := make(chan error, 1)
	args := append([]string{"-listen", "127.0.0.1:0", "-allow-loopback"}, extra...)
	go func() { done <- run(ctx, args, &out) }()
	re := regexp.MustCompile(`proxy listening on ([0-9.:]+),`)
	for {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1], done
		}
		select {
		case err := <-done:
			t.Fatalf("proxy ended: %v", err)
		case <-ctx.Done():
			t.Fatal("proxy did not start")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// -get fetches a page from an HTTP/3 server through the proxy, its QUIC
// connection inside the tunnel.
func TestGetThroughProxy(t *testing.T) {
	cert, _, err := certs.SelfSigned("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	origin := &http3.Server{TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "page from the origin")
		})}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go origin.Serve(pc)
	defer func() { origin.Close(); pc.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, done := startProxy(t, ctx)
	var cout bytes.Buffer
	err = run(ctx, []string{"-proxy", "https://" + addr, "-get", "https://" + pc.LocalAddr().String() + "/", "-insecure"}, &cout)
	if err != nil || !strings.Contains(cout.String(), "HTTP/3.0 200 OK through the proxy") || !strings.Contains(cout.String(), "page from the origin") {
		t.Fatalf("client: %v, %q", err, cout.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("proxy: %v", err)
	}
}
