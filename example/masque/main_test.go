package main

import (
	"bytes"
	"context"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
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
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-allow-loopback", "-token", "t0k"}, &out) }()
	re := regexp.MustCompile(`proxy listening on ([0-9.:]+),`)
	var addr string
	for addr == "" {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("proxy ended: %v", err)
		case <-ctx.Done():
			t.Fatal("proxy did not start")
		case <-time.After(10 * time.Millisecond):
		}
	}
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
