package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/cli"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The server runs until its context ends, serves HTTP/3 on the UDP port,
// writes qlog files and serves its statistics with -expvar, and exits 0.
func TestRun(t *testing.T) {
	qdir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-qlog", qdir, "-expvar", "127.0.0.1:0", "-cc", "bbr", "-retry"}, &out,
			func(addr string) { ready <- addr })
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr.Close()
	if !strings.Contains(string(body), "HTTP/3.0") {
		t.Errorf("GET /: %q", body)
	}
	m := regexp.MustCompile(`statistics at (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no statistics address in:\n%s", out.String())
	}
	resp, err = http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	var vars struct {
		Quic struct{ HandshakesCompleted, RetriesSent uint64 } `json:"quic"`
	}
	err = json.NewDecoder(resp.Body).Decode(&vars)
	resp.Body.Close()
	if err != nil || vars.Quic.HandshakesCompleted != 1 || vars.Quic.RetriesSent == 0 {
		t.Errorf("expvar: %+v, %v", vars, err)
	}
	cancel()
	if err := <-done; err != nil || cli.ExitCode("server", err, io.Discard) != 0 {
		t.Errorf("run returned %v", err)
	}
	for _, re := range []string{
		`(?m)^server: SPKI SHA-256 \(base64\): [A-Za-z0-9+/]{43}=$`,
		`(?m)^server: listening on 127\.0\.0\.1:\d+ \(UDP: h3, hq-interop\), congestion control bbr, Retry true$`,
		`(?m)^server: qlog files in `,
		`(?m)^server: shutting down; 1 handshakes completed, 0 failed, 0 with 0-RTT$`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output does not match %s:\n%s", re, out.String())
		}
	}
	if files, _ := filepath.Glob(filepath.Join(qdir, "*_server.sqlog")); len(files) != 1 {
		t.Errorf("qlog files: %v", files)
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-h"}, &out, nil)
	if !errors.Is(err, flag.ErrHelp) || cli.ExitCode("server", err, io.Discard) != 0 || !strings.Contains(out.String(), "-listen") {
		t.Errorf("-h: %v\n%s", err, out.String())
	}
	for _, args := range [][]string{{"-cc", "vegas"}, {"-cert", "x.pem"}, {"-root", "/nonexistent"}, {"extra"}, {"-nosuchflag"}} {
		if code := cli.ExitCode("server", run(context.Background(), args, io.Discard, nil), io.Discard); code != 2 {
			t.Errorf("%q: exit status %d, want 2", args, code)
		}
	}
	err = run(context.Background(), []string{"-listen", "256.0.0.1:1"}, io.Discard, nil)
	if code := cli.ExitCode("server", err, io.Discard); code != 1 {
		t.Errorf("unusable address: exit status %d (%v), want 1", code, err)
	}
	if _, err := os.Stat("x.pem"); err == nil {
		t.Error("created x.pem")
	}
}
