package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/qlog"
)

// qlogTracer writes the traces of the connections of controller cc to
// dir, as <cc>-<client|server>-<odcid>.sqlog.
func qlogTracer(dir, cc string) qlog.TracerHook {
	return func(_ context.Context, isClient bool, odcid ours.ConnectionID) *ours.Tracer {
		role := "server"
		if isClient {
			role = "client"
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%s-%s.sqlog", cc, role, odcid)))
		if err != nil {
			return nil
		}
		return qlog.NewTracer(f, isClient, odcid)
	}
}

// report is a run's results, and what make weaknet writes.
type report struct {
	Args      string        `json:"args"`
	Start     time.Time     `json:"start"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	LoadStart string        `json:"load_start"`
	LoadEnd   string        `json:"load_end"`
	Delay     time.Duration `json:"delay_ns"`
	Jitter    time.Duration `json:"jitter_ns"`
	Rate      int64         `json:"rate_bps"`
	TCPCC     string        `json:"tcp_cc"`
	Timeout   time.Duration `json:"timeout_ns"`
	Sizes     []int         `json:"sizes"`
	Losses    []float64     `json:"losses"`
	Protos    []proto       `json:"protos"`
	Conns     []string      `json:"conns"`
	Results   []*result     `json:"results"`
}

func (rep *report) find(proto, conn string, size int, loss float64) *result {
	for _, r := range rep.Results {
		if r.Proto == proto && r.conn() == conn && (conn == "handshake" || r.Size == size) && r.Loss == loss {
			return r
		}
	}
	return nil
}

func fmtSec(v *float64) string {
	if v == nil {
		return "—"
	}
	switch {
	case *v < 1:
		return fmt.Sprintf("%.3f", *v)
	case *v < 10:
		return fmt.Sprintf("%.2f", *v)
	}
	return fmt.Sprintf("%.1f", *v)
}

// cellText is a table cell: "p50 / p90", and the success rate below 100%.
func cellText(r *result) string {
	if r == nil {
		return ""
	}
	s := fmtSec(r.P50S) + " / " + fmtSec(r.P90S)
	if r.Failed > 0 {
		s += fmt.Sprintf(" (%.0f%%)", 100*r.success())
	}
	return s
}

func (rep *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Weak networks: HTTP/3 against HTTPS over TCP\n\n")
	fmt.Fprintf(&b, "Measured by `make weaknet` (`go run ./weaknet %s` in internal/interop) on %s, in %s; "+
		"load average (1, 5, 15 min) %s at the start, %s at the end, on 2 cores.\n\n",
		rep.Args, rep.Start.UTC().Format("2006-01-02 15:04 MST"), rep.Elapsed.Round(time.Second), rep.LoadStart, rep.LoadEnd)
	fmt.Fprintf(&b, "The link (internal/linkem, both directions): %v ± %v delay (RTT %v), %g Mbit/s with a 100 ms tail-drop queue, "+
		"random loss as in the column in each direction. Kernel TCP: %s. A request that takes longer than %v fails.\n\n",
		rep.Delay, rep.Jitter, 2*rep.Delay, float64(rep.Rate)/1e6, rep.TCPCC, rep.Timeout)
	fmt.Fprintf(&b, "Each cell: p50 / p90 request time in seconds over all the cell's requests, a failed request counting as "+
		"longer than any other (— where the percentile falls on a failure), then the success rate when below 100%%. "+
		"*new*: a new connection per request (full handshake, no resumption), *reused*: one connection, opened before. "+
		"ours-bbr is the library's default controller (quic.Config.Congestion).\n\n")
	for _, size := range rep.Sizes {
		fmt.Fprintf(&b, "## %s\n\n", sizeName(size))
		rep.table(&b, func(p proto) []string { return rep.Conns }, size)
		fmt.Fprintf(&b, "![request time against loss, %s](weaknet/latency-%s.png)\n\n", sizeName(size), strings.ReplaceAll(sizeName(size), " ", ""))
	}
	if rep.hasHandshakes() {
		fmt.Fprintf(&b, "## Handshakes alone\n\nTime to a completed handshake (TCP: the connection, then TLS 1.3), p50 / p90 in seconds, and the success rate.\n\n")
		rep.table(&b, func(p proto) []string { return []string{"handshake"} }, 0)
		fmt.Fprintf(&b, "![handshake time against loss](weaknet/handshake.png)\n\n")
	}
	fmt.Fprintf(&b, "## Targets (issue 27, section 3)\n\n")
	for _, t := range rep.targets() {
		fmt.Fprintf(&b, "- %s\n", t)
	}
	b.WriteString("\n")
	return b.String()
}

func (rep *report) hasHandshakes() bool {
	for _, r := range rep.Results {
		if r.Handshake {
			return true
		}
	}
	return false
}

func (rep *report) table(b *strings.Builder, conns func(proto) []string, size int) {
	b.WriteString("| protocol | connection |")
	for _, l := range rep.Losses {
		fmt.Fprintf(b, " %s |", pct(l))
	}
	b.WriteString("\n|---|---|")
	for range rep.Losses {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, c := range conns(proto{}) {
		for _, p := range rep.Protos {
			fmt.Fprintf(b, "| %s | %s |", p.Name, c)
			for _, l := range rep.Losses {
				fmt.Fprintf(b, " %s |", cellText(rep.find(p.Name, c, size, l)))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
}

// inf returns the percentile, +Inf for a failure.
func inf(v *float64) float64 {
	if v == nil {
		return math.Inf(1)
	}
	return *v
}

// targets checks the targets of issue 27, section 3, for each of our
// controllers, and returns one line per target and controller.
func (rep *report) targets() []string {
	var out []string
	var ourNames []string
	for _, p := range rep.Protos {
		if p.Kind == "ours" {
			ourNames = append(ourNames, p.Name)
		}
	}
	check := func(title string, f func(ourName string) (n int, misses []string)) {
		for _, on := range ourNames {
			n, misses := f(on)
			if n == 0 {
				continue
			}
			status := fmt.Sprintf("met in all %d cells", n)
			if len(misses) > 0 {
				ties := 0
				for _, m := range misses {
					if strings.Contains(m, ", a tie)") {
						ties++
					}
				}
				status = fmt.Sprintf("**missed in %d of %d cells** (%d of them ties, within 5 ms or 5%%): %s", len(misses), n, ties, strings.Join(misses, "; "))
			}
			out = append(out, fmt.Sprintf("%s (%s): %s", title, on, status))
		}
	}
	// tie marks a miss by less than 5 ms or 5%: within the link's
	// jitter and the noise of the cell's requests.
	tie := func(o, h *float64) string {
		a, b := inf(o), inf(h)
		if !math.IsInf(a, 1) && !math.IsInf(b, 1) && (a-b < 0.005 || a < 1.05*b) {
			return ", a tie"
		}
		return ""
	}
	// tie2 is tie for the worse of the two percentiles.
	tie2 := func(o, h *result) string {
		if tie(o.P50S, h.P50S) != "" && tie(o.P90S, h.P90S) != "" {
			return ", a tie"
		}
		return ""
	}
	cellName := func(c string, size int, loss float64) string {
		return fmt.Sprintf("%s %s %s", c, sizeName(size), pct(loss))
	}
	tcp := []string{"h1", "h2"}
	check("Beats HTTPS over TCP (HTTP/1.1 and HTTP/2) in p50 and p90 from 5% loss", func(on string) (n int, misses []string) {
		for _, size := range rep.Sizes {
			for _, loss := range rep.Losses {
				if loss < 0.05 {
					continue
				}
				for _, c := range rep.Conns {
					o := rep.find(on, c, size, loss)
					if o == nil {
						continue
					}
					for _, t := range tcp {
						h := rep.find(t, c, size, loss)
						if h == nil {
							continue
						}
						n++
						if !(inf(o.P50S) < inf(h.P50S) || math.IsInf(inf(h.P50S), 1) && o.success() > h.success()) ||
							!(inf(o.P90S) < inf(h.P90S) || math.IsInf(inf(h.P90S), 1) && o.success() > h.success()) {
							misses = append(misses, fmt.Sprintf("%s vs %s (%s against %s%s)", cellName(c, size, loss), t, cellText(o), cellText(h), tie2(o, h)))
						}
					}
				}
			}
		}
		return
	})
	check("Success ≥ 99% at 20% loss, ≥ 90% at 30%, every 1 KB request at 50%", func(on string) (n int, misses []string) {
		for _, r := range rep.Results {
			if r.Proto != on || r.Handshake {
				continue
			}
			var want float64
			switch {
			case r.Loss == 0.20:
				want = 0.99
			case r.Loss == 0.30:
				want = 0.90
			case r.Loss == 0.50 && r.Size <= 1000:
				want = 1
			default:
				continue
			}
			n++
			if r.success() < want {
				misses = append(misses, fmt.Sprintf("%s: %.0f%%", cellName(r.conn(), r.Size, r.Loss), 100*r.success()))
			}
		}
		return
	})
	check("At least as fast as quic-go (p50 and p90)", func(on string) (n int, misses []string) {
		for _, r := range rep.Results {
			if r.Proto != on {
				continue
			}
			q := rep.find("quic-go", r.conn(), r.Size, r.Loss)
			if q == nil {
				continue
			}
			n++
			if inf(r.P50S) > inf(q.P50S) || inf(r.P90S) > inf(q.P90S) {
				name := cellName(r.conn(), r.Size, r.Loss)
				if r.Handshake {
					name = "handshake " + pct(r.Loss)
				}
				misses = append(misses, fmt.Sprintf("%s (%s against %s%s)", name, cellText(r), cellText(q), tie2(r, q)))
			}
		}
		return
	})
	check("At 0–1% loss, new connections faster than HTTPS (p50), reused within 5% (p50 and p90)", func(on string) (n int, misses []string) {
		for _, size := range rep.Sizes {
			for _, loss := range rep.Losses {
				if loss > 0.01 {
					continue
				}
				for _, c := range rep.Conns {
					o := rep.find(on, c, size, loss)
					for _, t := range tcp {
						h := rep.find(t, c, size, loss)
						if o == nil || h == nil {
							continue
						}
						n++
						ok := inf(o.P50S) < inf(h.P50S)
						if c == "reused" {
							ok = inf(o.P50S) <= 1.05*inf(h.P50S) && inf(o.P90S) <= 1.05*inf(h.P90S)
						}
						if !ok {
							misses = append(misses, fmt.Sprintf("%s vs %s (%s against %s%s)", cellName(c, size, loss), t, cellText(o), cellText(h), tie2(o, h)))
						}
					}
				}
			}
		}
		return
	})
	return out
}
