package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		n, total int64
		elapsed  time.Duration
		want     string
	}{
		{12_500_000, 100_000_000, 2 * time.Second, "12.5 MB of 100.0 MB (12%), 50.0 Mbit/s, 14 s left"},
		{5_000_000, -1, time.Second, "5.0 MB, 40.0 Mbit/s"},
		{100, 100, time.Second, "100 B of 100 B (100%), 0.0 Mbit/s"},
		{1_000_000, 1_000_000_000, 2 * time.Second, "1.0 MB of 1.00 GB (0%), 4.0 Mbit/s, 33 min 18 s left"},
	} {
		if got := ProgressLine(c.n, c.total, c.elapsed); got != c.want {
			t.Errorf("ProgressLine(%d, %d, %v) = %q, want %q", c.n, c.total, c.elapsed, got, c.want)
		}
	}
}

// The line shows only after a second, is redrawn on each tick, and is
// erased at the end; a writer that is not a terminal gets nothing.
func TestProgressDraws(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(1000, 0)
	p := &Progress{w: &out, start: clock, stop: make(chan struct{})}
	p.total.Store(1000)
	tick := make(chan time.Time)
	p.done.Go(func() { p.run(tick) })
	p.Add(100)
	tick <- clock // at 0 s: nothing
	p.Add(400)
	tick <- clock.Add(2 * time.Second)
	tick <- clock.Add(2 * time.Second)
	p.Done()
	s := out.String()
	if strings.Count(s, "500 B of 1.0 KB (50%)") != 2 || !strings.Contains(s, "2 s left") || !strings.HasSuffix(s, "\r\033[K") {
		t.Errorf("drawn %q", s)
	}
	if strings.Contains(s, "100 B") {
		t.Errorf("drawn before a second passed: %q", s)
	}

	var quiet bytes.Buffer
	q := NewProgress(&quiet, 10)
	q.Add(10)
	q.Done()
	f, _ := os.CreateTemp(t.TempDir(), "out")
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&quiet) || quiet.Len() != 0 {
		t.Errorf("a file or buffer counted as a terminal, or got output %q", quiet.String())
	}
}
