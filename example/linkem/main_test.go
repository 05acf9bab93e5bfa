//go:build linux

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/linkem"
)

// The flags build the configuration: a profile, then -both, then -up and
// -down on top.
func TestParseArgs(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseArgs([]string{"-profile", "4g", "-both", "loss=1%", "-up", "delay=50ms", "-down", "burst=2%/3", "-seed", "9", "--", "true"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := linkem.LookupProfile("4g")
	wantAB, wantBA := g.AB, g.BA
	wantAB.Loss, wantAB.Delay = 0.01, 50*time.Millisecond
	wantBA.Loss, wantBA.GE = 0.01, linkem.Gilbert(0.02, 3)
	if o.cfg.AB != wantAB || o.cfg.BA != wantBA || o.cfg.Seed != 9 || len(o.command) != 1 {
		t.Fatalf("got %+v", o)
	}
	for _, bad := range [][]string{
		{"-up", "loss=5"}, {"-profile", "no-such-profile"}, {"-addr-a", "10.0.0.1"}, {"-in", "c", "--", "true"},
		{"-in", "a"}, {"-control", "--", "true"}, {"-both", "rate=fast"},
	} {
		if _, err := parseArgs(bad, &stderr); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"-up", "loss=5"}, nil, &out, &stderr, nil); code != 2 {
		t.Errorf("usage error: exit %d; want 2", code)
	}
	if code := run([]string{"-list"}, nil, &out, &stderr, nil); code != 0 || !strings.Contains(out.String(), "satellite") {
		t.Errorf("-list: exit %d, %q", code, out.String())
	}
}

// A command runs inside a namespace of the link and linkem exits with its
// status.
func TestRunCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("linkem needs root")
	}
	var out, stderr bytes.Buffer
	code := run([]string{"-both", "delay=1ms rate=10mbit", "-in", "b", "--", "sh", "-c", "ip -4 -o addr show dev linkem0; exit 3"}, nil, &out, &stderr, nil)
	if code != 3 {
		t.Fatalf("exit %d; want the command's 3; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(out.String(), "inet 10.77.0.2/24") || !strings.Contains(out.String(), "A→B: ") {
		t.Fatalf("output: %s", out.String())
	}
}

// With -control, lines on standard input change the link.
func TestRunControl(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("linkem needs root")
	}
	stop := make(chan os.Signal)
	r, w, _ := os.Pipe()
	defer w.Close()
	var out syncBuffer
	var stderr bytes.Buffer
	done := make(chan int)
	go func() { done <- run([]string{"-control"}, r, &out, &stderr, stop) }()
	w.WriteString("down delay=30ms\nbogus\nstats\n")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "B→A now delay=30ms") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(out.String(), "B→A now delay=30ms") {
		t.Fatalf("output: %s", out.String())
	}
}
