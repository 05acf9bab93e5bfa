// Command qlogplot draws congestion control over time from qlog traces
// (the quic:recovery_metrics_updated events that quic.Config.Tracer with
// package qlog writes, and that example/ccsim -qlog writes for its
// simulated flows): the congestion window, the pacing rate, the bytes in
// flight and the RTT (smoothed and latest), one column per trace, side by
// side on shared scales, in one PNG file.
//
// Usage:
//
//	go run ./qlogplot -o cc.png [-title text] [-from 0s] [-to 10s] label=trace.sqlog ...
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	pdraw "github.com/quicstack/quic/internal/plot/internal/draw"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "qlogplot:", err)
		os.Exit(1)
	}
}

// series are one trace's metrics over time (seconds).
type series struct {
	label                     string
	cwnd, pacing, inflight    plotter.XYs // KB, Mbit/s, KB
	srtt, latest              plotter.XYs // ms
	lastCwnd, lastPace, lastI float64
}

// parse reads a qlog JSON-SEQ trace (RFC 7464 records, or one JSON object
// a line) and returns the metrics between from and to.
func parse(r io.Reader, label string, from, to time.Duration) (*series, error) {
	s := &series{label: label}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	sc.Split(splitRecords)
	for sc.Scan() {
		rec := bytes.TrimSpace(sc.Bytes())
		if len(rec) == 0 || !bytes.Contains(rec, []byte("recovery_metrics_updated")) {
			continue
		}
		var ev struct {
			Time float64 `json:"time"` // ms
			Name string  `json:"name"`
			Data struct {
				Cwnd     *float64 `json:"congestion_window"`
				InFlight *float64 `json:"bytes_in_flight"`
				Pacing   *float64 `json:"pacing_rate"` // bit/s
				SRTT     *float64 `json:"smoothed_rtt"`
				Latest   *float64 `json:"latest_rtt"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec, &ev); err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		if !strings.HasSuffix(ev.Name, "recovery_metrics_updated") {
			continue
		}
		t := time.Duration(ev.Time * float64(time.Millisecond))
		if t < from || (to > 0 && t > to) {
			continue
		}
		x := t.Seconds()
		d := ev.Data
		if d.Cwnd != nil {
			s.cwnd = append(s.cwnd, plotter.XY{X: x, Y: *d.Cwnd / 1000})
		}
		if d.InFlight != nil {
			s.inflight = append(s.inflight, plotter.XY{X: x, Y: *d.InFlight / 1000})
		}
		if d.Pacing != nil {
			s.pacing = append(s.pacing, plotter.XY{X: x, Y: *d.Pacing / 1e6})
		}
		// RTTs from the first sample on: the initial estimate (RFC 9002,
		// Section 6.2.2) is no measurement.
		if d.Latest != nil && *d.Latest > 0 {
			s.latest = append(s.latest, plotter.XY{X: x, Y: *d.Latest})
			if d.SRTT != nil {
				s.srtt = append(s.srtt, plotter.XY{X: x, Y: *d.SRTT})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	if len(s.cwnd) == 0 {
		return nil, fmt.Errorf("%s: no recovery_metrics_updated event", label)
	}
	return s, nil
}

// splitRecords splits JSON text sequences at record separators (0x1e)
// and newlines.
func splitRecords(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\x1e\n"); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("qlogplot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "cc.png", "PNG file to write")
	title := fs.String("title", "", "title over the first row")
	from := fs.Duration("from", 0, "start of the time window")
	to := fs.Duration("to", 0, "end of the time window (0: the end of the traces)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no trace: want label=file.sqlog arguments")
	}
	var all []*series
	for _, a := range fs.Args() {
		label, file, ok := strings.Cut(a, "=")
		if !ok {
			label, file = a, a
		}
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		s, err := parse(f, label, *from, *to)
		f.Close()
		if err != nil {
			return err
		}
		all = append(all, s)
	}
	rows := make([][]*plot.Plot, 4)
	xmax := 0.0
	for _, s := range all {
		xmax = math.Max(xmax, s.cwnd[len(s.cwnd)-1].X)
	}
	type metric struct {
		name string
		get  func(*series) []plotter.XYs
		legs []string
	}
	metrics := []metric{
		{"congestion window (KB)", func(s *series) []plotter.XYs { return []plotter.XYs{s.cwnd} }, nil},
		{"pacing rate (Mbit/s)", func(s *series) []plotter.XYs { return []plotter.XYs{s.pacing} }, nil},
		{"bytes in flight (KB)", func(s *series) []plotter.XYs { return []plotter.XYs{s.inflight} }, nil},
		{"RTT (ms)", func(s *series) []plotter.XYs { return []plotter.XYs{s.latest, s.srtt} }, []string{"latest", "smoothed"}},
	}
	for i, m := range metrics {
		ymax := 0.0
		for _, s := range all {
			for _, xy := range m.get(s) {
				for _, p := range xy {
					ymax = math.Max(ymax, p.Y)
				}
			}
		}
		for j, s := range all {
			p := plot.New()
			if i == 0 {
				p.Title.Text = s.label
				if *title != "" {
					p.Title.Text = *title + ": " + s.label
				}
			}
			if j == 0 {
				p.Y.Label.Text = m.name
			}
			if i == len(metrics)-1 {
				p.X.Label.Text = "time (s)"
			}
			p.Add(plotter.NewGrid())
			p.X.Min, p.X.Max = from.Seconds(), math.Max(xmax, from.Seconds()+1e-3)
			for k, xy := range m.get(s) {
				if len(xy) == 0 {
					continue
				}
				l, err := plotter.NewLine(stairs(decimate(xy, (p.X.Max-p.X.Min)/1500)))
				if err != nil {
					return err
				}
				l.Color = pdraw.Palette[j%len(pdraw.Palette)]
				if k > 0 {
					l.Color = pdraw.Palette[len(pdraw.Palette)-1]
				}
				l.Width = vg.Points(0.8)
				p.Add(l)
				if m.legs != nil {
					p.Legend.Add(m.legs[k], l)
				}
			}
			p.Legend.Top = true
			p.X.Min, p.X.Max = from.Seconds(), math.Max(xmax, from.Seconds()+1e-3)
			p.Y.Min, p.Y.Max = 0, math.Max(ymax*1.05, 1e-3)
			rows[i] = append(rows[i], p)
		}
	}
	return pdraw.SaveGrid(*out, rows, 4*vg.Inch, 2*vg.Inch)
}

// decimate keeps, of each time bucket of width res, the first, lowest,
// highest and last points, in order: a trace of a million events draws
// as fast as one of a few thousand and keeps its peaks and drops.
func decimate(xy plotter.XYs, res float64) plotter.XYs {
	if res <= 0 || len(xy) < 4000 {
		return xy
	}
	var out plotter.XYs
	for i := 0; i < len(xy); {
		b := math.Floor(xy[i].X / res)
		j := i
		lo, hi := i, i
		for j < len(xy) && math.Floor(xy[j].X/res) == b {
			if xy[j].Y < xy[lo].Y {
				lo = j
			}
			if xy[j].Y > xy[hi].Y {
				hi = j
			}
			j++
		}
		keep := []int{i, lo, hi, j - 1}
		sort.Ints(keep)
		for k, idx := range keep {
			if k == 0 || idx != keep[k-1] {
				out = append(out, xy[idx])
			}
		}
		i = j
	}
	return out
}

// stairs draws a metric as the step function it is: each value holds
// until the next event.
func stairs(xy plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, 2*len(xy))
	for i, p := range xy {
		if i > 0 {
			out = append(out, plotter.XY{X: p.X, Y: xy[i-1].Y})
		}
		out = append(out, p)
	}
	return out
}
