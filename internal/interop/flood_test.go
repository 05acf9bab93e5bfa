package interop

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ours "github.com/quicstack/quic"
)

// TestFlood measures what a flood of client Initials costs legitimate
// clients of our server (issue 19, item 2): for each flood kind (none,
// valid ClientHellos, Initials that fail at once, garbage with a
// valid-looking header; see flood_gen_test.go) a child process floods a
// server with the default configuration at FLOOD_RATE datagrams per
// second (default 10,000) from 256 source ports on loopback, while
// legitimate clients, each on a socket of its own, dial the server, send
// a request on a stream and read the answer. It prints, per kind, the
// legitimate handshakes' median and 90th percentile time (Dial to
// handshake complete), how many succeeded, the server process's peak
// heap in use and resident memory while flooded, and what the server
// counted. It fails if a legitimate client failed or the median
// handshake took 50 ms or more.
//
// It runs only with FLOOD=1 (make flood), for a minute or so:
//
//	cd internal/interop && FLOOD=1 go test -count=1 -run '^TestFlood$' -v .
//
// FLOOD_KINDS (comma-separated) picks kinds, FLOOD_RATE the rate,
// FLOOD_CLIENTS the number of legitimate handshakes per kind (default
// 100).
func TestFlood(t *testing.T) {
	if os.Getenv("FLOOD") == "" {
		t.Skip("a measurement: set FLOOD=1 (make flood)")
	}
	kinds := []string{"none", floodValid, floodFailFast, floodGarbage}
	if k := os.Getenv("FLOOD_KINDS"); k != "" {
		kinds = strings.Split(k, ",")
	}
	rate := envInt("FLOOD_RATE", 10000)
	clients := envInt("FLOOD_CLIENTS", 100)
	var rows []floodResult
	for _, kind := range kinds {
		r, err := floodOnce(t, kind, rate, clients)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		rows = append(rows, r)
		t.Logf("%s done", kind)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n| flood | sent/s | legit ok | hs p50 | hs p90 | hs max | srv heap peak | srv RSS peak | srv retries | srv hs started / failed | srv conns after |\n")
	fmt.Fprintf(&sb, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %.0f | %d/%d | %s | %s | %s | %.1f MB | %.1f MB | %d | %d / %d | %d |\n",
			r.kind, r.sentRate, r.ok, r.n, ms(r.p50), ms(r.p90), ms(r.max),
			float64(r.heapPeak)/1e6, float64(r.rssPeak)/1e6, r.stats.RetriesSent,
			r.stats.HandshakesStarted, r.stats.HandshakesFailed, r.stats.ConnectionsOpen)
	}
	fmt.Fprintf(&sb, "%d CPUs, GOMAXPROCS %d, %d legitimate handshakes per kind, flood at %d datagrams/s from %d ports\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), clients, rate, floodPorts)
	t.Log(sb.String())
	for _, r := range rows {
		if r.ok < r.n {
			t.Errorf("%s: %d of %d legitimate clients failed; first error: %v", r.kind, r.n-r.ok, r.n, r.firstErr)
		}
		if r.p50 >= 50*time.Millisecond {
			t.Errorf("%s: legitimate handshake median %v, want under 50 ms", r.kind, r.p50)
		}
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

type floodResult struct {
	kind              string
	sentRate          float64
	n, ok             int
	firstErr          error
	p50, p90, max     time.Duration
	heapPeak, rssPeak uint64
	stats             ours.TransportStats
}

// floodOnce runs one flood kind ("none": no flood) against a fresh
// server.
func floodOnce(t *testing.T, kind string, rate, clients int) (r floodResult, err error) {
	r.kind, r.n = kind, clients
	ctls, stls := testTLS(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return r, err
	}
	defer udp.Close()
	tr := &ours.Transport{Conn: udp}
	defer tr.Close()
	l, err := tr.Listen(stls, nil) // the default configuration
	if err != nil {
		return r, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go echoServer(ctx, l)

	// The flood, started and warmed up: the valid kind's handshakes stay
	// in progress for HandshakeIdleTimeout (5 s by default), so the
	// server's state reaches its steady size after that.
	var flood *exec.Cmd
	var floodIn io.WriteCloser
	var floodOut *bufio.Scanner
	if kind != "none" {
		flood = exec.Command(os.Args[0], "-test.run=^$")
		flood.Env = append(os.Environ(), floodHelperEnv+"="+kind,
			floodHelperAddrEnv+"="+udp.LocalAddr().String(), floodHelperRateEnv+"="+strconv.Itoa(rate))
		flood.Stderr = os.Stderr
		if floodIn, err = flood.StdinPipe(); err != nil {
			return r, err
		}
		out, err := flood.StdoutPipe()
		if err != nil {
			return r, err
		}
		floodOut = bufio.NewScanner(out)
		if err := flood.Start(); err != nil {
			return r, err
		}
		defer func() { flood.Process.Kill(); flood.Wait() }()
		if !floodOut.Scan() || floodOut.Text() != "ready" {
			return r, fmt.Errorf("the flooder did not start: %q", floodOut.Text())
		}
		time.Sleep(6 * time.Second)
	}

	// The server's memory, sampled while the legitimate clients run.
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			r.heapPeak = max(r.heapPeak, ms.HeapInuse)
			r.rssPeak = max(r.rssPeak, rssNow())
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	}()

	// Legitimate clients: four at a time, each dial from a new socket,
	// with a pause between dials.
	var mu sync.Mutex
	var times []time.Duration
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for next.Add(1) <= int64(clients) {
				d, err := legitClient(ctls, udp.LocalAddr().String())
				mu.Lock()
				if err == nil {
					times = append(times, d)
				} else if r.firstErr == nil {
					r.firstErr = err
				}
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	r.stats = tr.Stats()
	if flood != nil {
		floodIn.Close()
		if floodOut.Scan() {
			var n int
			var d time.Duration
			var ds string
			if _, err := fmt.Sscanf(floodOut.Text(), "sent %d in %s", &n, &ds); err == nil {
				d, _ = time.ParseDuration(ds)
			}
			if d > 0 {
				r.sentRate = float64(n) / d.Seconds()
			}
		}
	}
	r.ok = len(times)
	slices.Sort(times)
	if len(times) > 0 {
		r.p50 = times[len(times)/2]
		r.p90 = times[len(times)*9/10]
		r.max = times[len(times)-1]
	}
	return r, nil
}

// legitClient dials the server from a socket of its own, with the
// default configuration, sends a request and reads the answer, and
// returns how long the handshake took.
func legitClient(ctls *tls.Config, addr string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	c, err := ours.DialAddr(ctx, addr, ctls, nil)
	if err != nil {
		return 0, fmt.Errorf("dial: %w", err)
	}
	hs := time.Since(start)
	defer c.CloseWithError(0, "")
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return 0, err
	}
	s.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := s.Write([]byte("ping")); err != nil {
		return 0, err
	}
	s.CloseWrite()
	b, err := io.ReadAll(s)
	if err != nil || string(b) != "ping" {
		return 0, fmt.Errorf("echo: %q, %v", b, err)
	}
	return hs, nil
}

// echoServer accepts connections and echoes each stream.
func echoServer(ctx context.Context, l *ours.Listener) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		go func() {
			for {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				go func() {
					io.Copy(s, s)
					s.CloseWrite()
				}()
			}
		}()
	}
}

// rssNow returns the process's resident memory (Linux; 0 elsewhere).
func rssNow() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, rss uint64
	if _, err := fmt.Sscan(string(b), &size, &rss); err != nil {
		return 0
	}
	return rss * uint64(os.Getpagesize())
}
