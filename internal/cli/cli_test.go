package cli

import (
	"bytes"
	"errors"
	"flag"
	"testing"
	"time"
)

func TestParseSizeAndPercentile(t *testing.T) {
	for in, want := range map[string]uint64{"1000": 1000, "64KB": 64000, "10 MB": 10e6, "1gb": 1e9, "7B": 7} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ten", "-1", "99999999999GB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(101-i)*time.Millisecond)
	}
	if p := Percentile(ds, 50); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := Percentile(ds, 99); p != 99*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if Percentile(nil, 50) != 0 || Percentile([]time.Duration{3}, 99) != 3 {
		t.Error("percentiles of tiny sets")
	}
}

func TestExitCode(t *testing.T) {
	var b bytes.Buffer
	if ExitCode("p", nil, &b) != 0 || ExitCode("p", flag.ErrHelp, &b) != 0 || b.Len() != 0 {
		t.Error("success and -h must exit 0 silently")
	}
	if ExitCode("p", Usagef("bad %d", 1), &b) != 2 || b.String() != "p: bad 1 (see -h)\n" {
		t.Errorf("usage error: %q", b.String())
	}
	if ExitCode("p", errors.New("boom"), &b) != 1 {
		t.Error("failure must exit 1")
	}
	if _, err := Congestion("vegas"); !errors.As(err, new(*UsageError)) {
		t.Errorf("-cc vegas: %v", err)
	}
	for _, n := range []string{"cubic", "BBR", "reno"} {
		if f, err := Congestion(n); f == nil || err != nil {
			t.Errorf("-cc %s: %v", n, err)
		}
	}
}
