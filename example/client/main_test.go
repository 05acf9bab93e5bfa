package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/internal/serve"
)

// startServer starts the example server's code on loopback and returns
// its base URL and a PEM file with its certificate.
func startServer(t *testing.T) (base, caFile string) {
	t.Helper()
	cert, _, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello, file"), 0o644)
	s, err := serve.Start(serve.Options{Addr: "127.0.0.1:0", Cert: cert, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644)
	return "https://localhost:" + strings.TrimPrefix(s.Addr.String(), "127.0.0.1:"), caFile
}

// startDualServer is startServer with HTTP/1.1 and HTTP/2 over TCP too,
// advertising HTTP/3 with Alt-Svc.
func startDualServer(t *testing.T) (base, caFile string) {
	t.Helper()
	cert, _, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	var s *serve.Server
	for i := 0; ; i++ {
		if s, err = serve.Start(serve.Options{Addr: "127.0.0.1:0", Cert: cert, TCP: true}); err == nil {
			break
		}
		if i == 20 {
			t.Fatal(err) // no port free for both UDP and TCP
		}
	}
	t.Cleanup(func() { s.Close() })
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644)
	return "https://127.0.0.1:" + strings.TrimPrefix(s.Addr.String(), "127.0.0.1:"), caFile
}

func runClient(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, &out)
	var stderr bytes.Buffer
	code := cli.ExitCode("client", err, &stderr)
	return out.String() + stderr.String(), code
}

// HTTP/3: parallel fetches on one connection, saved under -out, with a
// key log and qlog files.
func TestH3(t *testing.T) {
	base, ca := startServer(t)
	out, qdir, keylog := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "keys.log")
	text, code := runClient(t, "-ca", ca, "-out", out, "-qlog", qdir, "-keylog", keylog, "-cc", "reno",
		base+"/", base+"/bytes/300000", base+"/hello.txt")
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, text)
	}
	for _, re := range []string{
		`(?m)^200 HTTP/3\.0 +\d+ bytes +[\d.]+ ms  https://localhost:\d+/$`,
		`(?m)^200 HTTP/3\.0 +300000 bytes +[\d.]+ ms  https://localhost:\d+/bytes/300000$`,
		`(?m)^connection 1: QUIC v2, TLS_\w+, ALPN h3, handshake [\d.]+ ms, resumed: no, 0-RTT: no$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("output does not match %s:\n%s", re, text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "hello.txt")); string(b) != "hello, file" {
		t.Errorf("saved hello.txt: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "index.html")); !bytes.Contains(b, []byte("HTTP/3.0")) {
		t.Errorf("saved index.html: %q", b)
	}
	if st, _ := os.Stat(filepath.Join(out, "300000")); st == nil || st.Size() != 300000 {
		t.Errorf("saved /bytes/300000: %v", st)
	}
	if b, _ := os.ReadFile(keylog); !bytes.Contains(b, []byte("CLIENT_HANDSHAKE_TRAFFIC_SECRET ")) || !bytes.Contains(b, []byte("SERVER_TRAFFIC_SECRET_0 ")) {
		t.Errorf("key log:\n%s", b)
	}
	if files, _ := filepath.Glob(filepath.Join(qdir, "*_client.sqlog")); len(files) != 1 {
		t.Errorf("qlog files %v", files)
	}
}

// HTTP/0.9 over QUIC with resumption and 0-RTT, the interop runner's
// zerortt case, and QUIC v2 with key updates.
func TestHQ0RTT(t *testing.T) {
	base, _ := startServer(t)
	text, code := runClient(t, "-insecure", "-alpn", "hq-interop", "-0rtt", base+"/bytes/10", base+"/hello.txt", base+"/bytes/200000")
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, text)
	}
	for _, re := range []string{
		`(?m)^connection 1: .*ALPN hq-interop.*resumed: no, 0-RTT: no$`,
		`(?m)^connection 2: .*ALPN hq-interop.*resumed: yes, 0-RTT: yes$`,
		`(?m)^200 HTTP/0\.9 +11 bytes .*/hello.txt$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("output does not match %s:\n%s", re, text)
		}
	}
	qdir := t.TempDir()
	// 30 MB: over loopback's 64 KB packets a downloading client sends
	// few ACKs, and updates keys every 10 packets it sends.
	text, code = runClient(t, "-insecure", "-v2", "-keyupdate", "-resume", "-qlog", qdir, base+"/bytes/10", base+"/bytes/30000000")
	if code != 0 || !strings.Contains(text, "connection 2: QUIC v2") || !strings.Contains(text, "resumed: yes") {
		t.Errorf("-v2 -keyupdate -resume: exit status %d:\n%s", code, text)
	}
	// The client's qlog shows that it initiated a 1-RTT key update.
	files, _ := filepath.Glob(filepath.Join(qdir, "*_client.sqlog"))
	updated := false
	for _, f := range files {
		b, _ := os.ReadFile(f)
		updated = updated || bytes.Contains(b, []byte(`"trigger":"local_update"`))
	}
	if len(files) != 2 || !updated {
		t.Errorf("-keyupdate: %d client qlog files, a local key update logged: %v", len(files), updated)
	}
}

// HTTP/3 with resumption and 0-RTT: the second connection's GET requests
// go out in 0-RTT and the server accepts them.
func TestH30RTT(t *testing.T) {
	base, ca := startServer(t)
	text, code := runClient(t, "-ca", ca, "-0rtt", base+"/bytes/10", base+"/hello.txt", base+"/bytes/200000")
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, text)
	}
	for _, re := range []string{
		`(?m)^connection 1: .*ALPN h3.*resumed: no, 0-RTT: no$`,
		`(?m)^connection 2: .*ALPN h3.*resumed: yes, 0-RTT: yes$`,
		`(?m)^200 HTTP/3\.0 +11 bytes .*/hello.txt$`,
		`(?m)^200 HTTP/3\.0 +200000 bytes .*/bytes/200000$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("output does not match %s:\n%s", re, text)
		}
	}
}

// A failed fetch makes the exit status 1; the others are still reported.
func TestFailures(t *testing.T) {
	base, _ := startServer(t)
	for _, alpn := range []string{"h3", "hq-interop"} {
		text, code := runClient(t, "-insecure", "-alpn", alpn, base+"/missing", base+"/bytes/5")
		if code != 1 || !strings.Contains(text, "FAIL "+base+"/missing") || !regexp.MustCompile(`(?m)^200 HTTP/[0-9.]+ +5 bytes`).MatchString(text) {
			t.Errorf("%s: exit status %d:\n%s", alpn, code, text)
		}
	}
	// Without -insecure or -ca, the self-signed certificate is refused.
	if text, code := runClient(t, base+"/"); code != 1 || !strings.Contains(text, "certificate") {
		t.Errorf("untrusted certificate: exit status %d:\n%s", code, text)
	}
}

// -proto auto (the default) learns HTTP/3 from the first response's
// Alt-Svc and uses it for the others; -altsvc keeps that across runs;
// -proto tcp and -proto h3 stick to one side.
func TestProto(t *testing.T) {
	base, ca := startDualServer(t)
	cache := filepath.Join(t.TempDir(), "altsvc.json")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-altsvc", cache, base + "/bytes/1", base + "/bytes/2", base + "/bytes/3"},
			[]string{`(?m)^200 HTTP/2\.0 +1 bytes`, `(?m)^200 HTTP/3\.0 +2 bytes`, `(?m)^200 HTTP/3\.0 +3 bytes`}},
		// The next run knows from the file: HTTP/3 from the start.
		{[]string{"-altsvc", cache, base + "/bytes/4"}, []string{`(?m)^200 HTTP/3\.0 +4 bytes`}},
		{[]string{"-proto", "tcp", base + "/bytes/5", base + "/bytes/6"}, []string{`(?m)^200 HTTP/2\.0 +5 bytes`, `(?m)^200 HTTP/2\.0 +6 bytes`}},
		{[]string{"-proto", "h3", base + "/bytes/7"}, []string{`(?m)^200 HTTP/3\.0 +7 bytes`, `(?m)^connection 1: .*ALPN h3`}},
	} {
		text, code := runClient(t, append([]string{"-ca", ca}, c.args...)...)
		if code != 0 {
			t.Fatalf("%q: exit status %d:\n%s", c.args, code, text)
		}
		for _, re := range c.want {
			if !regexp.MustCompile(re).MatchString(text) {
				t.Errorf("%q: output does not match %s:\n%s", c.args, re, text)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-h"}, &out)
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "-0rtt") {
		t.Errorf("-h: %v\n%s", err, out.String())
	}
	for _, args := range [][]string{
		{}, {"http://x/"}, {"-alpn", "spdy", "https://x/"}, {"-0rtt", "https://x/a"},
		{"-resume", "https://x/a"}, {"https://x/a", "https://y/b"}, {"-cc", "vegas", "https://x/"},
		{"-ca", "/nonexistent", "https://x/"}, {"-proto", "spdy", "https://x/"}, {"-proto", "tcp", "-resume", "https://x/a", "https://x/b"},
	} {
		if code := cli.ExitCode("client", run(context.Background(), args, io.Discard), io.Discard); code != 2 {
			t.Errorf("%q: exit status %d, want 2", args, code)
		}
	}
}
