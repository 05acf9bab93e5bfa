// Command ccsim runs the congestion-control scenarios of internal/ccsim
// on the deterministic network simulator and prints, for each scenario
// and controller, the link utilisation, goodput, average queueing delay
// and fairness as a Markdown table: the table of docs/performance.md.
//
// Usage:
//
//	go run ./example/ccsim [-scenario list] [-controller list] [-seed n] [-qlog dir]
//
// Scenarios are 1bdp, loss1, 5bdp, fairness, fairness-nojitter and
// transferloss (default all); controllers newreno, cubic and bbr (default
// all). With -qlog, each flow's congestion window, pacing rate, bytes in
// flight and RTT over simulated time are written as qlog traces, which
// internal/plot's qlogplot draws side by side (make ccplots). Every run is identical for the same seed. It exits with status 0 on success, 1 if a
// run failed (a flow reported an error) and 2 on a usage error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/ccsim"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/internal/qlog"
)

var controllers = []struct {
	name string
	f    congestion.ControllerFactory
}{
	{"newreno", congestion.NewNewReno},
	{"cubic", congestion.NewCubic},
	{"bbr", congestion.NewBBR},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ccsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var names []string
	for _, p := range ccsim.Presets() {
		names = append(names, p.Name)
	}
	scenarios := fs.String("scenario", "all", "comma-separated scenarios: "+strings.Join(names, ", ")+", or all")
	ctls := fs.String("cc", "all", "congestion controllers, comma-separated: cubic, bbr, reno, or all")
	fs.StringVar(ctls, "controller", "all", "the same as -cc (the older name)")
	seed := fs.Uint64("seed", 1, "simulation seed; the same seed gives the same figures")
	qlogDir := fs.String("qlog", "", "write each flow's congestion window, pacing rate, bytes in flight and RTT over time as a qlog trace `dir`/<scenario>-<controller>-flow<n>.sqlog (recovery_metrics_updated events), for plotting")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: ccsim [flags]\n\n"+
			"ccsim simulates the congestion-control scenarios of the issue \"Recovery,\n"+
			"congestion control and flow control\" and prints a Markdown table of link\n"+
			"utilisation, goodput, average queueing delay and Jain's fairness index.\n\n"+
			"Scenarios:\n")
		for _, p := range ccsim.Presets() {
			fmt.Fprintf(stderr, "  %-13s %s\n", p.Name, p.Title)
		}
		fmt.Fprintf(stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ccsim: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	presets, err := selectPresets(*scenarios)
	if err != nil {
		fmt.Fprintln(stderr, "ccsim:", err)
		return 2
	}
	chosen, err := selectControllers(*ctls)
	if err != nil {
		fmt.Fprintln(stderr, "ccsim:", err)
		return 2
	}

	type job struct {
		preset ccsim.Preset
		ctl    string
		res    ccsim.Result
	}
	var jobs []*job
	for _, p := range presets {
		for _, c := range chosen {
			jobs = append(jobs, &job{preset: p, ctl: c.name})
		}
	}
	// Runs are independent and deterministic: do them in parallel.
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			sc := j.preset.Make(factory(j.ctl), *seed)
			var closers []func() error
			if *qlogDir != "" {
				var err error
				if closers, err = traceFlows(&sc, *qlogDir, j.ctl); err != nil {
					fmt.Fprintln(stderr, "ccsim:", err)
				}
			}
			j.res = ccsim.Run(sc)
			for _, c := range closers {
				if err := c(); err != nil {
					fmt.Fprintln(stderr, "ccsim:", err)
				}
			}
		}()
	}
	wg.Wait()

	fmt.Fprintf(stdout, "| Scenario | Controller | Utilisation | Goodput (Mbit/s) | Avg queueing delay | Fairness |\n")
	fmt.Fprintf(stdout, "|---|---|---:|---:|---:|---:|\n")
	status := 0
	for _, j := range jobs {
		r := &j.res
		goodputs := make([]string, len(r.Flows))
		for i, f := range r.Flows {
			goodputs[i] = fmt.Sprintf("%.1f", f.Goodput/1e6)
			if f.Err != "" {
				fmt.Fprintf(stderr, "ccsim: %s/%s flow %d: %s\n", j.preset.Name, j.ctl, i, f.Err)
				status = 1
			}
		}
		fairness := "–"
		if len(r.Flows) > 1 {
			fairness = fmt.Sprintf("%.3f", r.Fairness)
		}
		fmt.Fprintf(stdout, "| %s (s %g–%g) | %s | %.1f%% | %s | %.1f ms | %s |\n",
			j.preset.Title, r.MeasureFrom.Seconds(), r.MeasureTo.Seconds(), j.ctl,
			100*r.Utilization, strings.Join(goodputs, " + "),
			float64(r.AvgQueueDelay)/float64(time.Millisecond), fairness)
	}
	fmt.Fprintf(stderr, "ccsim: %d runs, seed %d, %.1f s\n", len(jobs), *seed, time.Since(start).Seconds())
	return status
}

// traceFlows makes each flow of sc write its metrics to a qlog trace in
// dir, with the simulated times; the functions returned close the traces.
func traceFlows(sc *ccsim.Scenario, dir, ctl string) ([]func() error, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var closers []func() error
	for i := range sc.Flows {
		name := fmt.Sprintf("%s-%s-flow%d", sc.Name, ctl, i)
		f, err := os.Create(filepath.Join(dir, name+".sqlog"))
		if err != nil {
			return closers, err
		}
		w := qlog.NewWriterAt(f, "client", name, "ccsim "+name, netsim.Epoch())
		sc.Flows[i].OnMetrics = func(now time.Time, m ccsim.Metrics) {
			qlog.WriteMetrics(w, now, quic.RecoveryMetrics(m))
		}
		closers = append(closers, w.Close)
	}
	return closers, nil
}

func factory(name string) congestion.ControllerFactory {
	for _, c := range controllers {
		if c.name == name {
			return c.f
		}
	}
	return nil
}

func selectPresets(list string) ([]ccsim.Preset, error) {
	if list == "all" {
		return ccsim.Presets(), nil
	}
	var out []ccsim.Preset
	for _, name := range strings.Split(list, ",") {
		p, ok := ccsim.PresetByName(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("unknown scenario %q", name)
		}
		out = append(out, p)
	}
	return out, nil
}

func selectControllers(list string) ([]struct {
	name string
	f    congestion.ControllerFactory
}, error) {
	if list == "all" {
		return controllers, nil
	}
	var out []struct {
		name string
		f    congestion.ControllerFactory
	}
	for _, name := range strings.Split(list, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "reno" {
			name = "newreno" // as -cc reno in the other programs
		}
		if factory(name) == nil {
			return nil, fmt.Errorf("unknown controller %q", name)
		}
		out = append(out, struct {
			name string
			f    congestion.ControllerFactory
		}{name, factory(name)})
	}
	return out, nil
}
