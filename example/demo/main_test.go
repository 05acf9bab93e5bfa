package main

import (
	"bytes"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	qdir := t.TempDir()
	err := run([]string{"-size", "256KB", "-v", "-qlog", qdir}, &out)
	if err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, out.String())
	}
	if code := exitCode(err, &bytes.Buffer{}); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	text := out.String()
	if strings.Contains(text, "hq-interop") || strings.Contains(text, "HTTP/0.9") {
		t.Errorf("output still mentions HTTP/0.9 over QUIC:\n%s", text)
	}
	for _, re := range []string{
		`(?m)^server: listening on 127\.0\.0\.1:\d+ \(HTTP/3`,
		`(?m)^GET /      200  \d+ B +protocol HTTP/3\.0  QUIC v2  TLS 1\.3 \S+  handshake [\d.]+ ms  time to headers [\d.]+ ms`,
		`(?m)^GET /256kb 200  256\.0 KB in [\d.]+ ms = \d+ Mbit/s \(body verified: 256000 bytes match\)$`,
		`(?m)^    Content-Length: 256000$`,
		`(?m)^reconnect: GET / 200  handshake [\d.]+ ms  time to headers [\d.]+ ms  TLS session resumed: yes \(server: yes\)$`,
		`(?m)^0-RTT: GET / 200  handshake [\d.]+ ms  time to headers [\d.]+ ms  request sent in 0-RTT, accepted: yes \(server: yes\)$`,
		`(?m)^qlog: 6 files in ` + regexp.QuoteMeta(qdir) + ` `,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("output does not match %s:\n%s", re, text)
		}
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"-h"}, &out)
	if !errors.Is(err, flag.ErrHelp) || exitCode(err, &bytes.Buffer{}) != 0 {
		t.Errorf("-h: err %v, exit status %d; want flag.ErrHelp and 0", err, exitCode(err, &bytes.Buffer{}))
	}
	if !strings.Contains(out.String(), "Usage: demo") || !strings.Contains(out.String(), "-size") {
		t.Errorf("-h printed:\n%s", out.String())
	}
	for _, args := range [][]string{{"-size", "ten"}, {"-size", "-1"}, {"-nosuchflag"}, {"extra"}} {
		var stderr bytes.Buffer
		err := run(args, &bytes.Buffer{})
		if code := exitCode(err, &stderr); code != 2 {
			t.Errorf("%q: exit status %d (err %v), want 2", args, code, err)
		}
		if !strings.HasPrefix(stderr.String(), "demo: ") {
			t.Errorf("%q: stderr %q, want a demo: message", args, stderr.String())
		}
	}
	var stderr bytes.Buffer
	if code := exitCode(errors.New("boom"), &stderr); code != 1 || stderr.String() != "demo: FAILED: boom\n" {
		t.Errorf("failure: exit status %d, stderr %q", code, stderr.String())
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"10MB": 10e6, "64kb": 64e3, "1500": 1500, "0": 0, "2GB": 2e9, "7B": 7} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if sizeName(10e6) != "10mb" || sizeName(1500) != "1500" || sizeName(256e3) != "256kb" {
		t.Errorf("sizeName: %q %q %q", sizeName(10e6), sizeName(1500), sizeName(256e3))
	}
}
