// Command weaknetplot draws the weak-network table of make weaknet
// (internal/interop/weaknet's JSON) as PNG plots of request time against
// loss: one file per response size, latency-<size>.png, with a panel for
// new connections and one for reused connections, and handshake.png.
// Solid lines are p50, dotted lines p90; a percentile that falls on a
// failed request is drawn at the timeout, on the dashed line.
//
// Usage:
//
//	go run ./weaknetplot -in results.json -out dir
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	pdraw "github.com/quicstack/quic/internal/plot/internal/draw"
)

// report is the part of weaknet's JSON that is drawn.
type report struct {
	TimeoutNS int64     `json:"timeout_ns"`
	Sizes     []int     `json:"sizes"`
	Losses    []float64 `json:"losses"`
	Protos    []struct {
		Name  string `json:"Name"`
		Label string `json:"Label"`
	} `json:"protos"`
	Conns   []string `json:"conns"`
	Results []struct {
		Proto     string   `json:"proto"`
		Reuse     bool     `json:"reuse"`
		Handshake bool     `json:"handshake"`
		Size      int      `json:"size"`
		Loss      float64  `json:"loss"`
		P50       *float64 `json:"p50_s"`
		P90       *float64 `json:"p90_s"`
	} `json:"results"`
}

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "weaknetplot:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("weaknetplot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "weaknet's JSON results")
	out := fs.String("out", ".", "directory of the PNG files")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	if len(rep.Results) == 0 {
		return errors.New(*in + ": no results")
	}
	timeout := float64(rep.TimeoutNS) / 1e9
	if timeout <= 0 {
		timeout = 60
	}
	for _, size := range rep.Sizes {
		var row []*plot.Plot
		for _, conn := range rep.Conns {
			p, err := rep.panel(fmt.Sprintf("%s, %s connection", sizeName(size), conn), timeout, func(r int) bool {
				x := rep.Results[r]
				return !x.Handshake && x.Size == size && (conn == "reused") == x.Reuse
			})
			if err != nil {
				return err
			}
			row = append(row, p)
		}
		name := filepath.Join(*out, "latency-"+strings.ReplaceAll(sizeName(size), " ", "")+".png")
		if err := pdraw.SaveGrid(name, [][]*plot.Plot{row}, 5*vg.Inch, 4*vg.Inch); err != nil {
			return err
		}
	}
	hasHS := false
	for _, r := range rep.Results {
		hasHS = hasHS || r.Handshake
	}
	if hasHS {
		p, err := rep.panel("handshake alone", timeout, func(r int) bool { return rep.Results[r].Handshake })
		if err != nil {
			return err
		}
		if err := pdraw.SaveGrid(filepath.Join(*out, "handshake.png"), [][]*plot.Plot{{p}}, 6*vg.Inch, 4*vg.Inch); err != nil {
			return err
		}
	}
	return nil
}

// panel plots p50 and p90 against loss for each protocol, over the
// results that match.
func (rep *report) panel(title string, timeout float64, match func(int) bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title + " (solid p50, dotted p90; dashed: the timeout)"
	p.X.Label.Text = "random loss in each direction (%)"
	var ticks []plot.Tick
	for _, l := range rep.Losses {
		ticks = append(ticks, plot.Tick{Value: 100 * l, Label: strconv.FormatFloat(100*l, 'f', -1, 64)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Label.Text = "request time (s)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	lo := timeout
	for i, pr := range rep.Protos {
		var p50, p90 plotter.XYs
		for r := range rep.Results {
			x := rep.Results[r]
			if x.Proto != pr.Name || !match(r) {
				continue
			}
			v50, v90 := timeout, timeout
			if x.P50 != nil {
				v50 = *x.P50
			}
			if x.P90 != nil {
				v90 = *x.P90
			}
			lo = min(lo, v50)
			p50 = append(p50, plotter.XY{X: 100 * x.Loss, Y: v50})
			p90 = append(p90, plotter.XY{X: 100 * x.Loss, Y: v90})
		}
		if len(p50) == 0 {
			continue
		}
		sortXY(p50)
		sortXY(p90)
		col := pdraw.Palette[i%len(pdraw.Palette)]
		l50, s50, err := plotter.NewLinePoints(p50)
		if err != nil {
			return nil, err
		}
		l50.Color, s50.Color = col, col
		l50.Width = vg.Points(1.5)
		s50.Shape = draw.CircleGlyph{}
		l90, err := plotter.NewLine(p90)
		if err != nil {
			return nil, err
		}
		l90.Color = col
		l90.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		p.Add(l50, s50, l90)
		p.Legend.Add(pr.Name, l50, s50)
	}
	tl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: timeout}, {X: 100 * rep.Losses[len(rep.Losses)-1], Y: timeout}})
	if err != nil {
		return nil, err
	}
	tl.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	tl.Color = pdraw.Palette[len(pdraw.Palette)-1]
	p.Add(tl)
	p.Y.Min = max(0.01, lo/1.5)
	p.Y.Max = timeout * 8 // room for the legend above the timeout
	return p, nil
}

func sortXY(xy plotter.XYs) {
	for i := 1; i < len(xy); i++ {
		for j := i; j > 0 && xy[j].X < xy[j-1].X; j-- {
			xy[j], xy[j-1] = xy[j-1], xy[j]
		}
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1000_000 && n%1000_000 == 0:
		return fmt.Sprintf("%d MB", n/1000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%d KB", n/1000)
	}
	return fmt.Sprintf("%d B", n)
}
