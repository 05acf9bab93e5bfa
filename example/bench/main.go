// Command bench is an HTTP/3 load generator, like the quicbench tool
// Weibo used to size QUIC servers: -c connections each send -n requests
// (or keep sending for -d), or with -new every request opens a new
// connection, to measure handshakes.
//
// Usage:
//
//	go run ./example/bench -u https://127.0.0.1:4433/bytes/1000 -c 100 -n 10 -insecure
//
// It reports handshake latency and request latency (p50, p99),
// requests per second, throughput, errors and its own memory use. It works
// against any HTTP/3 server. It exits with status 0 if every request
// succeeded, 1 if any failed and 2 on a usage error.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"

	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	os.Exit(cli.ExitCode("bench", err, os.Stderr))
}

// result is what the workers measured.
type result struct {
	mu       sync.Mutex
	requests []time.Duration
	bytes    uint64
	errors   int
	firstErr error
}

func (r *result) add(d time.Duration, n int64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errors++
		if r.firstErr == nil {
			r.firstErr = err
		}
		return
	}
	r.requests = append(r.requests, d)
	r.bytes += uint64(n)
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(out)
	target := fs.String("u", "", "`URL` to request (https://...)")
	conns := fs.Int("c", 10, "concurrent connections")
	perConn := fs.Int("n", 10, "requests per connection (with -d: 0 for no limit)")
	duration := fs.Duration("d", 0, "keep sending for this long (0: send -n requests per connection)")
	newConn := fs.Bool("new", false, "open a new connection for every request (measures handshakes)")
	insecure := fs.Bool("insecure", false, "do not verify the server's certificate")
	caFile := fs.String("ca", "", "trust the PEM CA certificates in `file`")
	common := cli.AddCommon(fs) // -cc, -qlog, -keylog
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: bench -u URL [flags]\n\n"+
			"bench loads an HTTP/3 server and reports handshake and request latency\n"+
			"(p50, p99), requests/s, throughput, errors and its own memory.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	u, err := url.Parse(*target)
	if *target == "" || err != nil || u.Scheme != "https" || u.Host == "" {
		return cli.Usagef("-u: want an https:// URL")
	}
	if *conns < 1 || *conns > 100000 {
		return cli.Usagef("-c %d: want 1 to 100000", *conns)
	}
	if *perConn < 0 || (*perConn == 0 && *duration <= 0) {
		return cli.Usagef("-n %d: want a positive count, or 0 with -d", *perConn)
	}
	conf, kl, err := common.Setup()
	if err != nil {
		return err
	}
	if kl != nil {
		defer kl.Close()
	}
	tlsConf := &tls.Config{InsecureSkipVerify: *insecure, KeyLogWriter: kl}
	if *caFile != "" {
		if tlsConf.RootCAs, err = certs.LoadPool(*caFile); err != nil {
			return cli.Usagef("-ca: %v", err)
		}
	}
	hs := &cli.Handshakes{}
	conf.Tracer = hs.Hook(conf.Tracer)

	var res result
	var deadline time.Time
	if *duration > 0 {
		deadline = time.Now().Add(*duration)
	}
	more := func(i int) bool {
		if ctx.Err() != nil {
			return false
		}
		if *perConn > 0 && i >= *perConn {
			return false
		}
		return deadline.IsZero() || time.Now().Before(deadline)
	}
	heap := watchHeap()
	start := time.Now()
	var wg sync.WaitGroup
	for range *conns {
		wg.Go(func() {
			var tr *http3.Transport
			for i := 0; more(i); i++ {
				if tr == nil || *newConn {
					if tr != nil {
						tr.Close()
					}
					tr = &http3.Transport{TLSClientConfig: tlsConf, QUICConfig: conf}
				}
				t0 := time.Now()
				n, err := get(ctx, tr, u.String())
				res.add(time.Since(t0), n, err)
			}
			if tr != nil {
				tr.Close()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	heap.stop()

	var handshakes []time.Duration
	for _, h := range hs.List() {
		handshakes = append(handshakes, h.Duration)
	}
	n := len(res.requests)
	fmt.Fprintf(out, "bench: %s, %d connections, %d requests in %s (%.1f requests/s), %d errors\n",
		u, *conns, n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), res.errors)
	fmt.Fprintf(out, "handshakes: %d, latency p50 %s, p99 %s\n",
		len(handshakes), cli.Ms(cli.Percentile(handshakes, 50)), cli.Ms(cli.Percentile(handshakes, 99)))
	reqs := append([]time.Duration(nil), res.requests...)
	fmt.Fprintf(out, "requests: latency p50 %s, p99 %s; throughput %s (%s of bodies)\n",
		cli.Ms(cli.Percentile(reqs, 50)), cli.Ms(cli.Percentile(reqs, 99)), cli.Mbps(res.bytes, elapsed), cli.FormatBytes(res.bytes))
	// Peak RSS is the memory the process really held. The Go heap's
	// peak counts objects allocated, including buffers whose pages were
	// never written and so never became resident: it can exceed the RSS.
	fmt.Fprintf(out, "memory: peak RSS %s (resident); Go heap peak %s allocated (untouched buffer pages are not resident); CPU time %s\n",
		cli.FormatBytes(cli.MaxRSS()), cli.FormatBytes(heap.peak()), cli.CPUTime().Round(time.Millisecond))
	if res.errors > 0 {
		return fmt.Errorf("%d of %d requests failed; first: %v", res.errors, res.errors+n, res.firstErr)
	}
	return nil
}

// get requests u and reads the whole body.
func get(ctx context.Context, tr *http3.Transport, u string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %s", resp.Status)
	}
	return n, err
}

// heapWatch samples the bytes of live and unswept heap objects every
// 20 ms (runtime/metrics, which does not stop the world) and keeps the
// peak.
type heapWatch struct {
	done chan struct{}
	max  chan uint64
}

func watchHeap() *heapWatch {
	h := &heapWatch{done: make(chan struct{}), max: make(chan uint64, 1)}
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-h.done:
				h.max <- peak
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapWatch) stop() { close(h.done) }

func (h *heapWatch) peak() uint64 { return <-h.max }
