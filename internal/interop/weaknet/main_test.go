package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	s, err := parseSizes("1k, 10k,100k,1m,1500")
	if err != nil || len(s) != 5 || s[0] != 1000 || s[3] != 1000_000 || s[4] != 1500 {
		t.Fatalf("sizes %v, %v", s, err)
	}
	for _, bad := range []string{"", "x", "-1k", "200m", "1g"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("sizes %q parsed", bad)
		}
	}
	l, err := parseLosses("0,1%,50")
	if err != nil || len(l) != 3 || l[1] != 0.01 || l[2] != 0.5 {
		t.Fatalf("losses %v, %v", l, err)
	}
	for _, bad := range []string{"", "-1", "91", "x"} {
		if _, err := parseLosses(bad); err == nil {
			t.Errorf("losses %q parsed", bad)
		}
	}
}

// Percentiles count a failed request as longer than any that succeeded.
func TestPercentile(t *testing.T) {
	ok := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if p := percentile(ok, 0, 50); p == nil || *p != 5 {
		t.Fatalf("p50 of 1..9: %v", p)
	}
	if p := percentile(ok, 1, 90); p == nil || *p != 9 {
		t.Fatalf("p90 of 1..9 and a failure: %v", p)
	}
	if p := percentile(ok, 2, 90); p != nil {
		t.Fatalf("p90 of 1..9 and 2 failures: %v, want a failure", *p)
	}
	if p := percentile(nil, 3, 50); p != nil {
		t.Fatalf("p50 of failures: %v", *p)
	}
	if p := percentile(nil, 0, 50); p != nil {
		t.Fatal("p50 of nothing")
	}
}

func f(v float64) *float64 { return &v }

// The targets of the issue are checked cell by cell, a failed percentile
// losing to any time.
func TestTargets(t *testing.T) {
	rep := &report{Sizes: []int{1000}, Losses: []float64{0, 0.2, 0.5}, Conns: []string{"new"},
		Protos: []proto{protos[0], protos[3], protos[4]}}
	add := func(p string, loss float64, p50, p90 *float64, failed int) {
		r := &result{cell: cell{Proto: p, Size: 1000, Loss: loss}, Failed: failed}
		for range 10 - failed {
			r.TimesS = append(r.TimesS, 1)
		}
		r.P50S, r.P90S = p50, p90
		rep.Results = append(rep.Results, r)
	}
	add("ours-cubic", 0, f(0.2), f(0.3), 0)
	add("h1", 0, f(0.3), f(0.3), 0)
	add("h2", 0, f(0.25), f(0.3), 0)
	add("ours-cubic", 0.2, f(1), f(2), 0)
	add("h1", 0.2, f(3), nil, 2)
	add("h2", 0.2, f(0.5), f(4), 0) // faster p50 than ours: a miss
	add("ours-cubic", 0.5, f(10), nil, 1)
	add("h1", 0.5, nil, nil, 10)
	add("h2", 0.5, nil, nil, 10)
	got := strings.Join(rep.targets(), "\n")
	for _, want := range []string{
		"from 5% loss (ours-cubic): **missed in 1 of 4 cells** (0 of them ties, within 5 ms or 5%): new 1 KB 20% vs h2",
		"every 1 KB request at 50% (ours-cubic): **missed in 1 of 2 cells** (0 of them ties, within 5 ms or 5%): new 1 KB 50%: 90%",
		"new connections faster than HTTPS (p50), reused within 5% (p50 and p90) (ours-cubic): met in all 2 cells",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("targets lack %q:\n%s", want, got)
		}
	}
}

// A small table across the emulator: every protocol answers, over new
// and reused connections, and the outputs are written.
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	md, js := filepath.Join(dir, "w.md"), filepath.Join(dir, "w.json")
	err := run(ctx, []string{"-sizes", "2k", "-loss", "0", "-n", "2", "-hs", "1", "-parallel", "2",
		"-protos", "ours-cubic,ours-bbr,ours-reno,quic-go,h1,h2", "-md", md, "-json", js, "-qlog", filepath.Join(dir, "qlog")}, &out, &log)
	if errors.Is(err, errors.ErrUnsupported) || err != nil && strings.Contains(err.Error(), "unsupported") {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var rep struct{ Results []*result }
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 6*3 {
		t.Fatalf("%d results, want 18", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Failed != 0 || len(r.TimesS) != r.Requests {
			t.Errorf("%s: %d failed (%v)", r.cell, r.Failed, r.Errors)
		}
	}
	m, _ := os.ReadFile(md)
	if !bytes.Equal(m, out.Bytes()) || !bytes.Contains(m, []byte("| quic-go | reused |")) {
		t.Fatalf("markdown:\n%s", m)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "qlog", "bbr-server-*.sqlog"))
	if len(traces) == 0 {
		t.Fatal("no qlog trace of our BBR server")
	}
}
