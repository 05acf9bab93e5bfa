package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A proto is one way to fetch a response: a client and server pair, and
// how the client keeps its connections.
type proto struct {
	Name  string // as in the tables: "ours-cubic", "quic-go", "h2", ...
	Kind  string // "ours", "quic-go" or "tcp"
	CC    string // ours: "cubic", "bbr" or "reno"; tcp: HTTP version "h1" or "h2"
	Label string // for humans
}

// protos lists every client/server pair the table compares.
var protos = []proto{
	{"ours-cubic", "ours", "cubic", "our HTTP/3, Cubic"},
	{"ours-bbr", "ours", "bbr", "our HTTP/3, BBR"},
	{"ours-reno", "ours", "reno", "our HTTP/3, NewReno"},
	// BBR with quic-go's (and Chromium's) initial window of 32 packets
	// instead of RFC 9002's 10: how much of a gap to quic-go on new
	// connections without loss is that window.
	{"ours-bbr-iw32", "ours", "bbr-iw32", "our HTTP/3, BBR, initial window 32"},
	{"quic-go", "quic-go", "", "quic-go HTTP/3"},
	{"h1", "tcp", "h1", "HTTP/1.1 over TLS 1.3/TCP"},
	{"h2", "tcp", "h2", "HTTP/2 over TLS 1.3/TCP"},
}

func protoByName(name string) (proto, bool) {
	for _, p := range protos {
		if p.Name == name {
			return p, true
		}
	}
	return proto{}, false
}

// A cell is one line of work: Requests requests of Size bytes at Loss, or
// (Handshake) Requests handshakes alone.
type cell struct {
	Proto     string  `json:"proto"`
	Reuse     bool    `json:"reuse"`     // one connection for all the requests
	Handshake bool    `json:"handshake"` // handshakes only (Size 0)
	Size      int     `json:"size"`
	Loss      float64 `json:"loss"` // in [0, 1], each direction
	Requests  int     `json:"requests"`
}

func (c cell) conn() string {
	switch {
	case c.Handshake:
		return "handshake"
	case c.Reuse:
		return "reused"
	}
	return "new"
}

func (c cell) String() string {
	if c.Handshake {
		return fmt.Sprintf("%s handshake loss %s", c.Proto, pct(c.Loss))
	}
	return fmt.Sprintf("%s %s %s loss %s", c.Proto, c.conn(), sizeName(c.Size), pct(c.Loss))
}

// busy reports whether the cell keeps its link near its rate for most of
// its time, and so takes a real share of the CPU: the cells at low loss
// with large responses.
func (c cell) busy() bool {
	return !c.Handshake && c.Size >= 100_000 && c.Loss < 0.10
}

// weight orders the cells, the longest first, so that the last cells to
// finish are short ones.
func (c cell) weight() float64 {
	w := float64(c.Requests) * (1 + float64(c.Size)/50_000)
	if c.Loss >= 0.2 {
		w *= 1 + 20*c.Loss
		if p, _ := protoByName(c.Proto); p.Kind == "tcp" {
			w *= 10 // requests that time out after a minute
		}
	}
	return w
}

// result is what a cell measured: for each request, its time, or the
// error that ended it.
type result struct {
	cell
	Times  []time.Duration `json:"-"`
	TimesS []float64       `json:"times_s"` // seconds; failed requests are absent
	Failed int             `json:"failed"`
	Errors []string        `json:"errors,omitempty"` // a few of them
	// P50 and P90 are over every request, a failed one counting as
	// longer than any that succeeded; +Inf (JSON null) when that one
	// is a failure.
	P50S *float64 `json:"p50_s"`
	P90S *float64 `json:"p90_s"`
	Wall float64  `json:"wall_s"`
}

// finish computes the percentiles.
func (r *result) finish() {
	r.TimesS = r.TimesS[:0]
	for _, t := range r.Times {
		r.TimesS = append(r.TimesS, t.Seconds())
	}
	sort.Float64s(r.TimesS)
	r.P50S, r.P90S = percentile(r.TimesS, r.Failed, 50), percentile(r.TimesS, r.Failed, 90)
}

// percentile returns the p-th percentile (nearest rank) of the successful
// times ok (sorted) and failed requests that count as infinitely long, or
// nil when it falls on a failure or there is nothing.
func percentile(ok []float64, failed int, p float64) *float64 {
	n := len(ok) + failed
	if n == 0 {
		return nil
	}
	rank := int(float64(n)*p/100+0.999999) - 1 // nearest rank, 0-based
	rank = max(0, min(rank, n-1))
	if rank >= len(ok) {
		return nil
	}
	v := ok[rank]
	return &v
}

func (r *result) success() float64 {
	n := len(r.TimesS) + r.Failed
	if n == 0 {
		return 0
	}
	return float64(len(r.TimesS)) / float64(n)
}

// parseSizes parses "1k,10k,100k,1m" (k = 1,000, m = 1,000,000, as the
// field's table) into byte counts.
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		mul := 1
		switch {
		case strings.HasSuffix(f, "k"):
			mul, f = 1000, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "m"):
			mul, f = 1000_000, strings.TrimSuffix(f, "m")
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n*mul > 100_000_000 {
			return nil, fmt.Errorf("size %q: want a count of bytes with k or m, up to 100m", f)
		}
		out = append(out, n*mul)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no size")
	}
	return out, nil
}

// parseLosses parses "0,1,5" (percent) into probabilities.
func parseLosses(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSuffix(strings.TrimSpace(f), "%")
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 0 || v > 90 {
			return nil, fmt.Errorf("loss %q: want a percentage in [0, 90]", f)
		}
		out = append(out, v/100)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no loss rate")
	}
	return out, nil
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

func pct(f float64) string {
	return strconv.FormatFloat(f*100, 'f', -1, 64) + "%"
}
