package main

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"
)

// trace returns a qlog JSON-SEQ trace with n metrics events 10 ms apart,
// the window growing by 1,000 bytes each, and a packet event between.
func trace(n int) string {
	var b strings.Builder
	b.WriteString("\x1e{\"file_schema\":\"urn:ietf:params:qlog:file:sequential\",\"trace\":{}}\n")
	for i := range n {
		fmt.Fprintf(&b, "\x1e{\"time\":%d,\"name\":\"quic:packet_sent\",\"data\":{}}\n", 10*i)
		rtt := ""
		if i > 0 {
			rtt = `"smoothed_rtt":40.5,"latest_rtt":41,`
		}
		fmt.Fprintf(&b, "\x1e{\"time\":%d,\"name\":\"quic:recovery_metrics_updated\",\"data\":{%s\"congestion_window\":%d,\"bytes_in_flight\":%d,\"pacing_rate\":%d}}\n",
			10*i, rtt, 14720+1000*i, 1200*i, 8_000_000)
	}
	return b.String()
}

func TestParse(t *testing.T) {
	s, err := parse(strings.NewReader(trace(100)), "x", 100*time.Millisecond, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.cwnd) != 41 || s.cwnd[0].X != 0.1 || s.cwnd[0].Y != 24.72 || s.cwnd[40].X != 0.5 {
		t.Fatalf("window: %d points, first %v, last %v", len(s.cwnd), s.cwnd[0], s.cwnd[len(s.cwnd)-1])
	}
	if s.pacing[0].Y != 8 || s.inflight[1].Y != 13.2 || s.srtt[0].Y != 40.5 || s.latest[0].Y != 41 {
		t.Fatalf("pacing %v, in flight %v, RTT %v %v", s.pacing[0], s.inflight[1], s.srtt[0], s.latest[0])
	}
	// The first event has no RTT sample, and none is drawn for it.
	s, err = parse(strings.NewReader(trace(3)), "x", 0, 0)
	if err != nil || len(s.latest) != 2 || s.latest[0].X != 0.01 {
		t.Fatalf("RTT before the first sample: %v, %v", s.latest, err)
	}
	if _, err := parse(strings.NewReader("\x1e{\"time\":1,\"name\":\"quic:packet_sent\"}"), "y", 0, 0); err == nil {
		t.Fatal("a trace without metrics parsed")
	}
	if _, err := parse(strings.NewReader("\x1e{\"time\":1,\"name\":\"quic:recovery_metrics_updated\",\"data\":{\"congestion_window\":\"x\"}}"), "z", 0, 0); err == nil {
		t.Fatal("a malformed event parsed")
	}
}

// Decimation keeps every peak and drop of a long series, and the ends.
func TestDecimate(t *testing.T) {
	var xy plotter.XYs
	for i := range 100_000 {
		y := float64(i % 7)
		if i == 54_321 {
			y = 1000
		}
		if i == 12_345 {
			y = -5
		}
		xy = append(xy, plotter.XY{X: float64(i) / 1000, Y: y})
	}
	d := decimate(xy, 0.1)
	if len(d) > 4*1001 || len(d) < 1000 {
		t.Fatalf("%d points left of %d", len(d), len(xy))
	}
	var hi, lo bool
	for i, p := range d {
		hi = hi || p.Y == 1000
		lo = lo || p.Y == -5
		if i > 0 && p.X < d[i-1].X {
			t.Fatalf("point %d out of order", i)
		}
	}
	if !hi || !lo || d[0] != xy[0] || d[len(d)-1] != xy[len(xy)-1] {
		t.Fatalf("peak kept %v, drop kept %v, ends %v %v", hi, lo, d[0], d[len(d)-1])
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.sqlog"), filepath.Join(dir, "b.sqlog")
	os.WriteFile(a, []byte(trace(50)), 0o644)
	os.WriteFile(b, []byte(trace(80)), 0o644)
	out := filepath.Join(dir, "cc.png")
	if err := run([]string{"-o", out, "-title", "t", "cubic=" + a, "bbr=" + b}, io.Discard); err != nil {
		t.Fatal(err)
	}
	f, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() < 500 || r.Dy() < 500 {
		t.Fatalf("image of %v", r)
	}
	if err := run([]string{"-o", out}, io.Discard); err == nil {
		t.Fatal("no trace: no error")
	}
	if err := run([]string{"-o", out, "x=" + filepath.Join(dir, "missing")}, io.Discard); err == nil {
		t.Fatal("missing trace: no error")
	}
}
