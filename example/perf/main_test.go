package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/quicstack/quic/internal/cli"
)

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

// The perf client against the perf server: three streams upload and
// download the sizes asked, and the summary reports them.
func TestClientServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	var srvOut syncBuffer
	srvDone := make(chan error, 1)
	go func() {
		srvDone <- run(ctx, []string{"-listen", "127.0.0.1:0"}, &srvOut, func(a string) { ready <- a })
	}()
	addr := <-ready
	var out bytes.Buffer
	err := run(context.Background(), []string{"-connect", addr, "-insecure", "-upload", "100KB", "-download", "2MB", "-streams", "3", "-cc", "bbr"}, &out, nil)
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out.String())
	}
	for _, re := range []string{
		`(?m)^perf: connected: QUIC v2, .*ALPN perf`,
		`(?m)^perf: 3 requests on 3 streams in \S+: uploaded 300\.0 KB \(.*\), downloaded 6\.0 MB \(.* Mbit/s\)$`,
		`(?m)^perf: CPU time \S+ \(\d+% of one core\)`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output does not match %s:\n%s", re, out.String())
		}
	}
	cancel()
	if err := <-srvDone; err != nil {
		t.Errorf("server: %v", err)
	}
	if !strings.Contains(srvOut.String(), "sent 6.0 MB, received 300.0 KB") {
		t.Errorf("server output:\n%s", srvOut.String())
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, nil); !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "-download") {
		t.Errorf("-h: %v", err)
	}
	for _, args := range [][]string{{}, {"-listen", ":0", "-connect", "x:1"}, {"-connect", "x:1", "-download", "lots"},
		{"-connect", "x:1", "-streams", "0"}, {"-connect", "x:1", "-cc", "vegas"}} {
		if code := cli.ExitCode("perf", run(context.Background(), args, io.Discard, nil), io.Discard); code != 2 {
			t.Errorf("%q: exit status %d, want 2", args, code)
		}
	}
}
