package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-h"}, &out, &errOut); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	if !strings.Contains(errOut.String(), "transferloss") || !strings.Contains(errOut.String(), "-seed") {
		t.Fatalf("help text:\n%s", errOut.String())
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-scenario", "nope"}, {"-controller", "vegas"}, {"-bogus"}, {"extra"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// -cc names the controllers as in the other programs (reno is newreno);
// -controller, the older name, still works.
func TestCCFlag(t *testing.T) {
	var a, b, errOut bytes.Buffer
	if code := run([]string{"-scenario", "loss1", "-cc", "reno", "-seed", "2"}, &a, &errOut); code != 0 {
		t.Fatalf("-cc reno: exit %d: %s", code, errOut.String())
	}
	if code := run([]string{"-scenario", "loss1", "-controller", "newreno", "-seed", "2"}, &b, &errOut); code != 0 {
		t.Fatalf("-controller newreno: exit %d: %s", code, errOut.String())
	}
	if a.String() != b.String() || !strings.Contains(a.String(), "| newreno |") {
		t.Errorf("-cc reno and -controller newreno differ:\n%s\n%s", a.String(), b.String())
	}
}

func TestTable(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-scenario", "transferloss,loss1", "-controller", "cubic", "-seed", "3"}
	code := run(args, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "| Scenario | Controller |") ||
		!strings.Contains(lines[2], "10 Mbit/s") || !strings.Contains(lines[3], "1% loss") || !strings.Contains(lines[3], "| cubic |") {
		t.Fatalf("table:\n%s", out.String())
	}
	var again bytes.Buffer
	run(args, &again, &errOut)
	if again.String() != out.String() {
		t.Fatalf("same seed, different tables:\n%s\n%s", out.String(), again.String())
	}
}
