package main

import (
	"testing"
	"time"
)

func TestMeanP99(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	ds = append(ds, -1) // a failure, left out
	mean, p99 := meanP99(ds)
	if mean != 50500*time.Microsecond || p99 != 99*time.Millisecond {
		t.Fatalf("mean %v, p99 %v", mean, p99)
	}
	if m, p := meanP99([]time.Duration{-1}); m != 0 || p != 0 {
		t.Fatalf("all failed: %v %v", m, p)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"1m": 1000_000, "10k": 10_000, "1500": 1500} {
		if n, err := parseSize(in); n != want || err != nil {
			t.Errorf("%s: %d, %v", in, n, err)
		}
	}
	for _, bad := range []string{"", "x", "0", "101m"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Both implementations run the scenario, small, in this process: every
// connection fetches its response, and the times are measured.
func TestRunImpl(t *testing.T) {
	for _, impl := range []string{"ours", "quic-go"} {
		s, err := runImpl(impl, 20, 20_000, 4, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Failed != 0 || s.SetupMean <= 0 || s.XferMean <= 0 || s.Setup99 < s.SetupMean/2 || s.MaxRSS == 0 {
			t.Fatalf("%s: %+v", impl, s)
		}
	}
	if _, err := runImpl("nope", 1, 1, 1, time.Second, nil); err == nil {
		t.Fatal("unknown implementation ran")
	}
}
