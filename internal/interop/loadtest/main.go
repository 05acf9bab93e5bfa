// Command loadtest runs the field's reference load test (quic-go v0.38 on
// 4 cores, as the seeds measured it: 10,000 concurrent short connections
// each fetching 1 MB; connection setup 32.7 ms mean / 68.4 ms p99, 1 MB
// transfer 114 ms / 196 ms p99, 412 MB resident) with our HTTP/3 and with
// quic-go's, one after the other, each in a process of its own so that
// each resident size is its own: a server and -c clients in one process,
// on loopback, every client opening its own connection at once (from -sockets
// UDP sockets shared round-robin), fetching -size bytes and closing.
//
// Setup is the time of the dial (the QUIC handshake), transfer the time
// from the dial's end to the last byte of the response. The resident size
// is the process's peak (server and clients together).
//
// Usage:
//
//	go run ./loadtest [-c 10000] [-size 1m] [-impls ours,quic-go] [-sockets 16]
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	qgo "github.com/quic-go/quic-go"
	qgh3 "github.com/quic-go/quic-go/http3"
	ours "github.com/quicstack/quic"
	oursh3 "github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
)

// stats is what one implementation's run measured.
type stats struct {
	Impl               string
	Conns, Failed      int
	FirstErr           string
	SetupMean, Setup99 time.Duration
	XferMean, Xfer99   time.Duration
	Wall, CPU          time.Duration
	MaxRSS             uint64
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	conns := fs.Int("c", 10000, "concurrent connections, each fetching -size once")
	sizeS := fs.String("size", "1m", "response size (k = 1,000 bytes, m = 1,000,000)")
	impls := fs.String("impls", "ours,quic-go", "implementations: ours, quic-go")
	sockets := fs.Int("sockets", 16, "client UDP sockets, shared round-robin")
	timeout := fs.Duration("timeout", 10*time.Minute, "time limit of the whole run")
	child := fs.String("child", "", "(internal) run one implementation and print its stats as JSON")
	verbose := fs.Bool("v", false, "report progress every 10 s and, for ours, the Transports' counters at the end, on standard error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	size, err := parseSize(*sizeS)
	if err != nil {
		return err
	}
	if *conns < 1 || *sockets < 1 {
		return errors.New("-c and -sockets must be positive")
	}
	if *child != "" {
		var vw io.Writer
		if *verbose {
			vw = os.Stderr
		}
		s, err := runImpl(*child, *conns, size, *sockets, *timeout, vw)
		if err != nil {
			return err
		}
		return json.NewEncoder(out).Encode(s)
	}
	var all []stats
	for _, impl := range strings.Split(*impls, ",") {
		impl = strings.TrimSpace(impl)
		cmd := exec.Command(os.Args[0], "-child", impl, "-c", strconv.Itoa(*conns), "-size", *sizeS,
			"-sockets", strconv.Itoa(*sockets), "-timeout", timeout.String(), "-v="+strconv.FormatBool(*verbose))
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s: %w", impl, err)
		}
		var s stats
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%s: %w", impl, err)
		}
		all = append(all, s)
	}
	fmt.Fprintf(out, "%d concurrent connections, each fetching %d bytes, loopback, %d CPUs (load average %s):\n\n", *conns, size, runtime.NumCPU(), loadAvg())
	fmt.Fprintf(out, "| | setup mean | setup p99 | transfer mean | transfer p99 | failed | wall | CPU | peak RSS |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(out, "| quic-go v0.38, 4 cores, 10,000 × 1 MB (the seeds' reference) | 32.7 ms | 68.4 ms | 114 ms | 196 ms | | | | 412 MB |\n")
	for _, s := range all {
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %d | %s | %s | %.0f MB |\n", s.Impl, ms(s.SetupMean), ms(s.Setup99), ms(s.XferMean), ms(s.Xfer99),
			s.Failed, s.Wall.Round(10*time.Millisecond), s.CPU.Round(10*time.Millisecond), float64(s.MaxRSS)/1e6)
	}
	for _, s := range all {
		if s.Failed > 0 {
			return fmt.Errorf("%s: %d of %d connections failed; first: %s", s.Impl, s.Failed, s.Conns, s.FirstErr)
		}
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

// runImpl runs the load test of one implementation in this process.
func runImpl(impl string, n, size, sockets int, timeout time.Duration, verbose io.Writer) (stats, error) {
	cert, pool, err := certs.SelfSigned("127.0.0.1")
	if err != nil {
		return stats{}, err
	}
	body := bytes.Repeat([]byte("loadtest"), size/8+1)[:size]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write(body)
	})
	stls := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h3"}}
	ctls := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	srvConn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return stats{}, err
	}
	defer srvConn.Close()
	url := "https://" + srvConn.LocalAddr().String() + "/"
	udp := srvConn.LocalAddr().(*net.UDPAddr)
	clientSockets := make([]net.PacketConn, sockets)
	for i := range clientSockets {
		if clientSockets[i], err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			return stats{}, err
		}
		defer clientSockets[i].Close()
	}
	// get fetches url over a new connection, returning the dial's time.
	var get func(ctx context.Context, i int) (setup time.Duration, err error)
	switch impl {
	case "ours":
		srv := &oursh3.Server{Handler: h}
		str := &ours.Transport{Conn: srvConn}
		ln, err := str.Listen(stls, &ours.Config{MaxIdleTimeout: timeout})
		if err != nil {
			return stats{}, err
		}
		go srv.ServeListener(ln)
		defer srv.Close()
		defer str.Close()
		trs := make([]*ours.Transport, sockets)
		for i := range trs {
			trs[i] = &ours.Transport{Conn: clientSockets[i]}
			defer trs[i].Close()
		}
		if verbose != nil {
			defer func() {
				fmt.Fprintf(verbose, "server transport: %+v\n", str.Stats())
				var sum ours.TransportStats
				sum.PacketsDropped = map[ours.PacketDropReason]uint64{}
				for _, tr := range trs {
					st := tr.Stats()
					sum.HandshakesStarted += st.HandshakesStarted
					sum.HandshakesCompleted += st.HandshakesCompleted
					sum.HandshakesFailed += st.HandshakesFailed
					sum.ReceiveBufferDrops += st.ReceiveBufferDrops
					sum.ConnectionsOpen += st.ConnectionsOpen
					for r, n := range st.PacketsDropped {
						sum.PacketsDropped[r] += n
					}
				}
				fmt.Fprintf(verbose, "client transports: %+v\n", sum)
			}()
		}
		get = func(ctx context.Context, i int) (time.Duration, error) {
			var setup time.Duration
			rt := &oursh3.Transport{TLSClientConfig: ctls, QUICConfig: &ours.Config{HandshakeIdleTimeout: timeout, MaxIdleTimeout: timeout},
				Dial: func(ctx context.Context, _ string, tc *tls.Config, conf *ours.Config) (*ours.Conn, error) {
					t0 := time.Now()
					c, err := trs[i%sockets].Dial(ctx, udp, tc, conf)
					setup = time.Since(t0)
					return c, err
				}}
			defer rt.Close()
			return setup, fetch(ctx, rt, url, size)
		}
	case "quic-go":
		srv := &qgh3.Server{Handler: h, TLSConfig: stls, QUICConfig: &qgo.Config{MaxIdleTimeout: timeout}}
		go srv.Serve(srvConn)
		defer srv.Close()
		trs := make([]*qgo.Transport, sockets)
		for i := range trs {
			trs[i] = &qgo.Transport{Conn: clientSockets[i]}
			defer trs[i].Close()
		}
		get = func(ctx context.Context, i int) (time.Duration, error) {
			var setup time.Duration
			rt := &qgh3.Transport{TLSClientConfig: ctls, QUICConfig: &qgo.Config{HandshakeIdleTimeout: timeout, MaxIdleTimeout: timeout},
				Dial: func(ctx context.Context, _ string, tc *tls.Config, conf *qgo.Config) (*qgo.Conn, error) {
					t0 := time.Now()
					c, err := trs[i%sockets].Dial(ctx, udp, tc, conf)
					setup = time.Since(t0)
					return c, err
				}}
			defer rt.Close()
			return setup, fetch(ctx, rt, url, size)
		}
	default:
		return stats{}, fmt.Errorf("unknown implementation %q", impl)
	}

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	setups := make([]time.Duration, n)
	xfers := make([]time.Duration, n)
	var failed atomic.Int64
	var firstErr atomic.Value
	cpu0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	var done atomic.Int64
	if verbose != nil {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			tick := time.NewTicker(10 * time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					fmt.Fprintf(verbose, "%s %s: %d of %d done, %d failed\n", time.Since(start).Round(time.Second), impl, done.Load(), n, failed.Load())
				}
			}
		}()
	}
	for i := range n {
		wg.Go(func() {
			defer done.Add(1)
			t0 := time.Now()
			setup, err := get(ctx, i)
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				setups[i], xfers[i] = -1, -1
				return
			}
			setups[i], xfers[i] = setup, time.Since(t0)-setup
		})
	}
	wg.Wait()
	s := stats{Impl: impl, Conns: n, Failed: int(failed.Load()), Wall: time.Since(start), CPU: cpuTime() - cpu0, MaxRSS: maxRSS()}
	if e, ok := firstErr.Load().(string); ok {
		s.FirstErr = e
	}
	s.SetupMean, s.Setup99 = meanP99(setups)
	s.XferMean, s.Xfer99 = meanP99(xfers)
	return s, nil
}

func fetch(ctx context.Context, rt http.RoundTripper, url string, size int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && n != int64(size) {
		err = fmt.Errorf("%d bytes of %d", n, size)
	}
	return err
}

// meanP99 returns the mean and the 99th percentile (nearest rank) of the
// non-negative durations.
func meanP99(ds []time.Duration) (mean, p99 time.Duration) {
	var ok []time.Duration
	var sum time.Duration
	for _, d := range ds {
		if d >= 0 {
			ok = append(ok, d)
			sum += d
		}
	}
	if len(ok) == 0 {
		return 0, 0
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i] < ok[j] })
	rank := int(0.99*float64(len(ok))+0.999999) - 1
	return sum / time.Duration(len(ok)), ok[min(max(rank, 0), len(ok)-1)]
}

func parseSize(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mul := 1
	switch {
	case strings.HasSuffix(s, "k"):
		mul, s = 1000, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "m"):
		mul, s = 1000_000, strings.TrimSuffix(s, "m")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n*mul > 100_000_000 {
		return 0, fmt.Errorf("-size %q: want bytes with k or m, up to 100m", s)
	}
	return n * mul, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func maxRSS() uint64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return uint64(ru.Maxrss) * 1024
}

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
