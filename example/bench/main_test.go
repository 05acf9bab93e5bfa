package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/internal/serve"
)

// bench against the example server: with shared connections one
// handshake per connection, with -new one per request.
func TestBench(t *testing.T) {
	cert, _, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.Start(serve.Options{Addr: "127.0.0.1:0", Cert: cert})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u := "https://" + s.Addr.String() + "/bytes/1000"
	for _, c := range []struct {
		args       []string
		handshakes int
	}{
		{[]string{"-c", "3", "-n", "4"}, 3},
		{[]string{"-c", "2", "-n", "3", "-new"}, 6},
	} {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"-u", u, "-insecure"}, c.args...), &out)
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.args, err, out.String())
		}
		n := 12
		if c.handshakes == 6 {
			n = 6
		}
		for _, re := range []string{
			`(?m)^bench: https://\S+, \d+ connections, ` + itoa(n) + ` requests in \S+ \([\d.]+ requests/s\), 0 errors$`,
			`(?m)^handshakes: ` + itoa(c.handshakes) + `, latency p50 [\d.]+ ms, p99 [\d.]+ ms$`,
			`(?m)^requests: latency p50 [\d.]+ ms, p99 [\d.]+ ms; throughput [\d.]+ Mbit/s \(` + itoa(n) + `\.0 KB of bodies\)$`,
			`(?m)^memory: peak RSS [\d.]+ [KMG]?B \(resident\); Go heap peak [\d.]+ [KMG]?B allocated \(untouched buffer pages are not resident\); CPU time `,
		} {
			if !regexp.MustCompile(re).MatchString(out.String()) {
				t.Errorf("%q: output does not match %s:\n%s", c.args, re, out.String())
			}
		}
	}
	// Errors are counted and make the exit status 1.
	err = run(context.Background(), []string{"-u", "https://" + s.Addr.String() + "/missing", "-insecure", "-c", "1", "-n", "2"}, io.Discard)
	if code := cli.ExitCode("bench", err, io.Discard); code != 1 || !strings.Contains(err.Error(), "2 of 2 requests failed") {
		t.Errorf("failing requests: exit status %d, %v", code, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "-new") {
		t.Errorf("-h: %v", err)
	}
	for _, args := range [][]string{{}, {"-u", "http://x/"}, {"-u", "https://x/", "-c", "0"}, {"-u", "https://x/", "-n", "0"}} {
		if code := cli.ExitCode("bench", run(context.Background(), args, io.Discard), io.Discard); code != 2 {
			t.Errorf("%q: exit status %d, want 2", args, code)
		}
	}
}
