// Command weaknet measures HTTP request times over a weak network, the
// way the field reports them (Weibo, QCon 2018): for each response size
// and random loss rate, the p50 and p90 request time and the success rate
// of
//
//   - our HTTP/3 client and server, with Cubic and with BBR,
//   - quic-go's HTTP/3 client and server,
//   - Go's net/http over TLS 1.3 on kernel TCP, HTTP/1.1 and HTTP/2,
//
// each with a new connection per request (a full handshake, no session
// resumption: the cold start) and with one reused connection, and the
// handshakes alone at each loss rate.
//
// Every cell crosses the same emulated link (internal/linkem): two
// network namespaces joined by a forwarder that gives each direction the
// delay (default 50 ms, so an RTT of 100 ms) with a smooth jitter that
// does not reorder, the rate (20 Mbit/s) with a 100 ms tail-drop queue,
// and the random loss of the cell. The clients run in namespace A, the
// servers in B. Kernel TCP uses -tcpcc (default cubic, Linux's default)
// in both namespaces.
//
// Cells run in parallel on links of their own (-parallel), at most
// -parallel-busy of them at once among those that keep a link busy
// (responses of 100 KB and more below 10% loss), so that the CPU they
// take does not distort one another; within a cell the requests run one
// after another. A request that takes longer than -timeout (60 s) fails.
//
// Usage (root; make weaknet):
//
//	go run ./weaknet [-sizes 1k,10k,100k,1m] [-loss 0,1,5,10,20,30,50]
//	    [-n 20] [-protos ours-cubic,ours-bbr,quic-go,h1,h2] [-parallel 12]
//	    [-md ../../docs/weaknet.md] [-json ../../docs/weaknet/results.json]
//
// It prints the tables (Markdown) and writes them with the command line,
// the machine's load and the targets of issue 27 checked against them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quicstack/quic/internal/linkem"
)

type options struct {
	sizes        []int
	losses       []float64
	n, hsN       int
	protos       []proto
	conns        []string // "new", "reused"
	parallel     int
	parallelBusy int
	timeout      time.Duration
	delay        time.Duration
	jitter       time.Duration
	rate         int64
	tcpCC        string
	qlogDir      string
	body         []byte
	seed         uint64
}

// params returns the link's parameters in each direction at a loss rate.
func (o *options) params(loss float64) linkem.Params {
	return linkem.Params{Delay: o.delay, Jitter: o.jitter, Rate: o.rate, Loss: loss}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "weaknet:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weaknet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("sizes", "1k,10k,100k,1m", "response sizes (k = 1,000 bytes, m = 1,000,000)")
	losses := fs.String("loss", "0,1,5,10,20,30,50", "random loss rates in percent, in each direction")
	n := fs.Int("n", 20, "requests per cell")
	hsN := fs.Int("hs", -1, "handshakes per loss rate in the handshake table (-1: as -n; 0: no table)")
	protoList := fs.String("protos", "ours-cubic,ours-bbr,quic-go,h1,h2", "protocols: ours-cubic, ours-bbr, quic-go, h1, h2")
	connList := fs.String("conns", "new,reused", "connection use: new, reused")
	parallel := fs.Int("parallel", 12, "cells run at once, each on a link of its own")
	parallelBusy := fs.Int("parallel-busy", 2, "of which at most this many cells that keep their link busy")
	timeout := fs.Duration("timeout", 60*time.Second, "time limit of each request (and QUIC's handshake idle timeout)")
	delay := fs.Duration("delay", 50*time.Millisecond, "one-way delay of each direction")
	jitter := fs.Duration("jitter", 5*time.Millisecond, "jitter of each direction (smooth: no reordering)")
	rate := fs.Int64("rate", 20e6, "rate of each direction in bit/s")
	tcpCC := fs.String("tcpcc", "cubic", "kernel TCP congestion control in the namespaces")
	qlogDir := fs.String("qlog", "", "write qlog traces of our connections to this directory, as <cc>-<role>-<odcid>.sqlog")
	mdOut := fs.String("md", "", "write the tables as Markdown to this file")
	jsonOut := fs.String("json", "", "write every measurement as JSON to this file")
	seed := fs.Uint64("seed", 1, "seed of the links' random decisions")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	o := &options{n: *n, parallel: *parallel, parallelBusy: *parallelBusy, timeout: *timeout,
		delay: *delay, jitter: *jitter, rate: *rate, tcpCC: *tcpCC, qlogDir: *qlogDir, seed: *seed}
	var err error
	if o.sizes, err = parseSizes(*sizes); err != nil {
		return err
	}
	if o.losses, err = parseLosses(*losses); err != nil {
		return err
	}
	for _, name := range strings.Split(*protoList, ",") {
		p, ok := protoByName(strings.TrimSpace(name))
		if !ok {
			return fmt.Errorf("-protos: unknown protocol %q", name)
		}
		o.protos = append(o.protos, p)
	}
	for _, c := range strings.Split(*connList, ",") {
		c = strings.TrimSpace(c)
		if c != "new" && c != "reused" {
			return fmt.Errorf("-conns: %q: want new or reused", c)
		}
		o.conns = append(o.conns, c)
	}
	if o.qlogDir != "" {
		if err := os.MkdirAll(o.qlogDir, 0o755); err != nil {
			return err
		}
	}
	o.hsN = *hsN
	if o.hsN < 0 {
		o.hsN = o.n
	}
	if o.n < 1 || o.parallel < 1 || o.parallelBusy < 1 || o.timeout <= 0 {
		return errors.New("-n, -parallel, -parallel-busy and -timeout must be positive")
	}
	maxSize := 0
	for _, s := range o.sizes {
		maxSize = max(maxSize, s)
	}
	o.body = make([]byte, maxSize)
	x := uint32(2463534242)
	for i := range o.body { // poorly compressible
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		o.body[i] = byte(x)
	}

	var cells []cell
	for _, p := range o.protos {
		for _, loss := range o.losses {
			if o.hsN > 0 {
				cells = append(cells, cell{Proto: p.Name, Handshake: true, Loss: loss, Requests: o.hsN})
			}
			for _, size := range o.sizes {
				for _, c := range o.conns {
					cells = append(cells, cell{Proto: p.Name, Reuse: c == "reused", Size: size, Loss: loss, Requests: o.n})
				}
			}
		}
	}
	load0 := loadAvg()
	start := time.Now()
	fmt.Fprintf(stderr, "weaknet: %d cells, %d at once (%d busy); load average %s\n", len(cells), o.parallel, o.parallelBusy, load0)
	results, err := runCells(ctx, o, cells, stderr)
	if err != nil {
		return err
	}
	rep := &report{
		Args: strings.Join(args, " "), Start: start, Elapsed: time.Since(start), LoadStart: load0, LoadEnd: loadAvg(),
		Delay: o.delay, Jitter: o.jitter, Rate: o.rate, TCPCC: o.tcpCC, Timeout: o.timeout,
		Sizes: o.sizes, Losses: o.losses, Protos: o.protos, Conns: o.conns, Results: results,
	}
	md := rep.markdown()
	fmt.Fprint(stdout, md)
	if *mdOut != "" {
		if err := os.WriteFile(*mdOut, []byte(md), 0o644); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// runCells runs the cells on o.parallel beds, the heaviest first.
func runCells(ctx context.Context, o *options, cells []cell, log io.Writer) ([]*result, error) {
	order := make([]int, len(cells))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cells[order[a]].weight() > cells[order[b]].weight() })
	results := make([]*result, len(cells))

	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	taken := make([]bool, len(cells))
	busy, left := 0, len(cells)
	// next returns the index of the next cell to run, or -1 when none is
	// left; it waits while only busy cells remain and busy is full.
	next := func() int {
		mu.Lock()
		defer mu.Unlock()
		for {
			if left == 0 || ctx.Err() != nil {
				return -1
			}
			for _, i := range order {
				if taken[i] || (cells[i].busy() && busy >= o.parallelBusy) {
					continue
				}
				taken[i] = true
				left--
				if cells[i].busy() {
					busy++
				}
				return i
			}
			cond.Wait()
		}
	}
	done := func(i int) {
		mu.Lock()
		if cells[i].busy() {
			busy--
		}
		mu.Unlock()
		cond.Broadcast()
	}
	stopWait := context.AfterFunc(ctx, cond.Broadcast)
	defer stopWait()

	workers := min(o.parallel, len(cells))
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	var finished int
	for w := range workers {
		wg.Go(func() {
			b, err := newBed(o, o.seed+uint64(2*w))
			if err != nil {
				errs <- err
				// Let the others take this worker's cells.
				return
			}
			defer b.close()
			for {
				i := next()
				if i < 0 {
					return
				}
				r := b.run(ctx, cells[i])
				results[i] = r
				done(i)
				mu.Lock()
				finished++
				fmt.Fprintf(log, "[%d/%d] %s: %s (%.0f s; load %s)\n", finished, len(cells), cells[i], r.summary(), r.Wall, loadAvg())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	var out []*result
	for _, r := range results {
		if r != nil {
			out = append(out, r)
		}
	}
	if len(out) < len(cells) {
		err := <-errs
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return out, fmt.Errorf("%d of %d cells ran: %w", len(out), len(cells), err)
	}
	return out, nil
}

// run runs one cell on the bed.
func (b *bed) run(ctx context.Context, c cell) *result {
	r := &result{cell: c}
	start := time.Now()
	defer func() { r.Wall = time.Since(start).Seconds(); r.finish() }()
	fail := func(err error) {
		r.Failed++
		if len(r.Errors) < 3 {
			r.Errors = append(r.Errors, err.Error())
		}
	}
	if err := b.setLoss(c.Loss); err != nil {
		for range c.Requests {
			fail(err)
		}
		return r
	}
	// Let the link drain what the previous cell left in it.
	time.Sleep(2 * b.opts.delay)
	p, _ := protoByName(c.Proto)
	once := func(f func(ctx context.Context) error) {
		rctx, cancel := context.WithTimeout(ctx, b.opts.timeout)
		defer cancel()
		t0 := time.Now()
		err := f(rctx)
		d := time.Since(t0)
		if err == nil && d > b.opts.timeout {
			err = fmt.Errorf("took %v", d)
		}
		if err != nil {
			fail(err)
			return
		}
		r.Times = append(r.Times, d)
	}
	if c.Handshake {
		for range c.Requests {
			if ctx.Err() != nil {
				return r
			}
			once(func(ctx context.Context) error { return b.handshake(ctx, p) })
		}
		return r
	}
	cl, err := b.newClient(p, c.Reuse)
	if err != nil {
		fail(err)
		return r
	}
	defer cl.close()
	if c.Reuse {
		// The connection is made by a first small request that is not
		// counted: the measured requests find it open (or, if this one
		// failed, make it).
		wctx, cancel := context.WithTimeout(ctx, b.opts.timeout)
		cl.get(wctx, min(1000, c.Size))
		cancel()
	}
	for range c.Requests {
		if ctx.Err() != nil {
			return r
		}
		once(func(ctx context.Context) error { return cl.get(ctx, c.Size) })
	}
	return r
}

func (r *result) summary() string {
	return fmt.Sprintf("p50 %s p90 %s, %d/%d ok", fmtSec(r.P50S), fmtSec(r.P90S), len(r.TimesS), len(r.TimesS)+r.Failed)
}

// loadAvg returns the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
