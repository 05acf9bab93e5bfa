package serve

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/hq"
)

// One UDP port serves HTTP/3 and HTTP/0.9 with the same pages, and the
// TCP port HTTP/2 with Alt-Svc.
func TestServer(t *testing.T) {
	cert, pool, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "file.txt"), []byte("from a file"), 0o644)
	s, err := Start(Options{Addr: "127.0.0.1:0", Cert: cert, Root: root, TCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := "https://" + s.Addr.String()
	ctls := &tls.Config{RootCAs: pool}

	tr := &http3.Transport{TLSClientConfig: ctls}
	defer tr.Close()
	h3 := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func(c *http.Client, path string) (*http.Response, string) {
		t.Helper()
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	if _, body := get(h3, "/"); !strings.Contains(body, "arrived over HTTP/3.0") {
		t.Errorf("GET / over HTTP/3: %q", body)
	}
	if resp, body := get(h3, "/bytes/70000"); resp.StatusCode != 200 || len(body) != 70000 || body[:3] != "abc" {
		t.Errorf("GET /bytes/70000: %d, %d bytes", resp.StatusCode, len(body))
	}
	if resp, _ := get(h3, "/bytes/x"); resp.StatusCode != 400 {
		t.Errorf("GET /bytes/x: %d", resp.StatusCode)
	}
	if _, body := get(h3, "/file.txt"); body != "from a file" {
		t.Errorf("GET /file.txt: %q", body)
	}
	resp, err := h3.Post(base+"/echo", "text/plain", strings.NewReader("echo me"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "echo me" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("POST /echo: %q %v", b, resp.Header)
	}
	resp.Body.Close()

	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: ctls, ForceAttemptHTTP2: true}, Timeout: 10 * time.Second}
	resp, body := get(h2, "/")
	if !strings.Contains(body, "arrived over HTTP/2.0") || resp.Header.Get("Alt-Svc") != altSvcOfHTTP3(s.Addr.Port) {
		t.Errorf("GET / over TCP: %q, Alt-Svc %q", body, resp.Header.Get("Alt-Svc"))
	}

	// HTTP/0.9 over QUIC.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := quic.DialAddr(ctx, s.Addr.String(), &tls.Config{RootCAs: pool, NextProtos: []string{hq.ALPN}, ServerName: "localhost"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	for path, want := range map[string]string{"/": "arrived over HTTP/0.9", "/file.txt": "from a file"} {
		st, err := hq.Get(ctx, c, path)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(st); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("hq GET %s: %q, %v", path, b, err)
		}
	}
	st, err := hq.Get(ctx, c, "/missing")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(st); hq.StatusOf(err) != 404 {
		t.Errorf("hq GET /missing: %v, want a reset carrying 404", err)
	}
	bad, _ := c.OpenStreamSync(ctx)
	bad.Write([]byte("POST /\r\n"))
	bad.CloseWrite()
	if _, err := io.ReadAll(bad); err == nil {
		t.Error("a bad hq request was answered")
	}
}

// altSvcOfHTTP3 is the Alt-Svc value package http3 advertises for port,
// which the example server's TCP side must match (the same max age).
func altSvcOfHTTP3(port int) string {
	hdr := http.Header{}
	(&http3.Server{Addr: ":" + strconv.Itoa(port)}).SetQUICHeaders(hdr)
	return hdr.Get("Alt-Svc")
}
