//go:build linux

package interop

// TestPerf prints the performance table of docs/performance.md: quicstack/quic
// ("ours"), quic-go and Go's crypto/tls over TCP side by side, in one run
// on one machine. It runs only with -perf (make perf):
//
//	cd internal/interop && go test -run TestPerf -perf -v -timeout 60m
//
// Bulk throughput: one connection, one stream, -perf.bytes per run, the
// median of -perf.runs runs, upload (client to server) and download, on
// loopback and over a veth pair of MTU 1,500 between two network
// namespaces that the test creates with ip(8) (skipped with a message
// where it cannot). CPU time per gigabyte counts both sides, which share
// the process. Handshakes: fresh full handshakes, 32 in parallel, for
// -perf.time, median of -perf.runs rounds. Idle connections: -idleconns connections dialed by a child
// process (see BenchmarkIdleConnMemory); the server's heap and goroutine
// stacks, and its resident memory, per connection. The rows at 1,452-byte
// packets (with quinn-perf), the one-in-flight small GETs and the 0-RTT
// time to first byte are in perf_1452_test.go and perf_0rtt_test.go.

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var (
	perfFlag  = flag.Bool("perf", false, "run TestPerf, the side-by-side performance table (make perf)")
	perfBytes = flag.Int64("perf.bytes", 512<<20, "bytes per bulk transfer run")
	perfRuns  = flag.Int("perf.runs", 3, "bulk transfer runs per figure (the median is reported)")
	perfTime  = flag.Duration("perf.time", 3*time.Second, "duration of the handshake measurement")
	perfIdle  = flag.Bool("perf.idle", true, "measure idle connections (takes a minute)")
	perfRows  = flag.String("perf.rows", "", "comma-separated groups of TestPerf rows to run (bulk, 1452, veth, handshakes, ttfb, idle; gets: only the one-in-flight GET rows of 1452); empty: all")
)

// perfRowGroup reports whether TestPerf runs the group of rows g (-perf.rows).
func perfRowGroup(g string) bool {
	return *perfRows == "" || slices.Contains(strings.Split(*perfRows, ","), g)
}

// bulkResult is one bulk transfer figure.
type bulkResult struct {
	gbps     float64
	cpuPerGB time.Duration
}

// bulkOnce transfers n bytes over one stream of one connection of im,
// from the client (upload) or to it (download).
func bulkOnce(im benchImpl, download bool, n int64) (bulkResult, error) {
	ctls, stls := perfTLS.client, perfTLS.server
	srv, err := im.listen(stls, 0, im.sockBuf)
	if err != nil {
		return bulkResult{}, err
	}
	defer srv.close()
	cli, err := im.client(ctls, 0, im.sockBuf)
	if err != nil {
		return bulkResult{}, err
	}
	defer cli.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srvErr := make(chan error, 1)
	go func() {
		c, err := srv.accept(ctx)
		if err != nil {
			srvErr <- err
			return
		}
		s, err := c.acceptStream(ctx)
		if err != nil {
			srvErr <- err
			return
		}
		srvErr <- serveBulk(s, download, n)
	}()
	c, err := cli.dial(ctx, srv.addr())
	if err != nil {
		return bulkResult{}, err
	}
	defer c.closeWithError(0, "")
	s, err := c.openStream(ctx)
	if err != nil {
		return bulkResult{}, err
	}
	return timeBulk(func() error { return clientBulk(s, download, n) }, srvErr, n)
}

// serveBulk is the server's side of a bulk transfer on s: it reads n bytes
// (upload), or reads the one-byte request and writes n bytes (download).
func serveBulk(s duplexStream, download bool, n int64) error {
	if !download {
		got, err := io.Copy(io.Discard, s)
		if err == nil && got != n {
			err = fmt.Errorf("server read %d bytes of %d", got, n)
		}
		return err
	}
	var req [1]byte
	if _, err := io.ReadFull(s, req[:]); err != nil {
		return err
	}
	if err := writeN(s, n); err != nil {
		return err
	}
	return s.CloseWrite()
}

// clientBulk is the client's side: it writes n bytes and the FIN
// (upload), or asks for n bytes and reads them (download).
func clientBulk(s duplexStream, download bool, n int64) error {
	if !download {
		if err := writeN(s, n); err != nil {
			return err
		}
		return s.CloseWrite()
	}
	if _, err := s.Write([]byte{1}); err != nil {
		return err
	}
	got, err := io.Copy(io.Discard, s)
	if err == nil && got != n {
		err = fmt.Errorf("client read %d bytes of %d", got, n)
	}
	return err
}

var bulkBuf = testData(64 << 10)

func writeN(w io.Writer, n int64) error {
	for sent := int64(0); sent < n; {
		b := bulkBuf[:min(int64(len(bulkBuf)), n-sent)]
		k, err := w.Write(b)
		sent += int64(k)
		if err != nil {
			return err
		}
	}
	return nil
}

// timeBulk runs the client's side and waits for the server's, and returns
// the throughput and the CPU time per gigabyte.
func timeBulk(client func() error, srvErr <-chan error, n int64) (bulkResult, error) {
	cpu0, t0 := cpuTime(), time.Now()
	if err := client(); err != nil {
		return bulkResult{}, err
	}
	if err := <-srvErr; err != nil {
		return bulkResult{}, err
	}
	el, cpu := time.Since(t0), cpuTime()-cpu0
	return bulkResult{
		gbps:     float64(n) * 8 / el.Seconds() / 1e9,
		cpuPerGB: time.Duration(float64(cpu) * 1e9 / float64(n)),
	}, nil
}

// tlsStream is a TLS connection seen as a stream.
type tlsStream struct{ *tls.Conn }

func (s tlsStream) CloseWrite() error { return s.Conn.CloseWrite() }

// tcpListen and tcpDial make TCP sockets on loopback or, with perfNet, in
// the namespaces.
func tcpListen() (net.Listener, error) {
	if ns, ok := perfNet.(*netnsPair); ok {
		var l net.Listener
		err := ns.in(true, func() (err error) {
			l, err = net.Listen("tcp", net.JoinHostPort(ns.srvIP, "0"))
			return err
		})
		return l, err
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

func tcpDial(addr net.Addr) (net.Conn, error) {
	if ns, ok := perfNet.(*netnsPair); ok {
		var c net.Conn
		err := ns.in(false, func() (err error) {
			c, err = net.Dial("tcp", addr.String())
			return err
		})
		return c, err
	}
	return net.Dial("tcp", addr.String())
}

// bulkTLSOnce is bulkOnce for crypto/tls over TCP.
func bulkTLSOnce(download bool, n int64) (bulkResult, error) {
	ctls, stls := perfTLS.client, perfTLS.server
	l, err := tcpListen()
	if err != nil {
		return bulkResult{}, err
	}
	defer l.Close()
	srvErr := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			srvErr <- err
			return
		}
		defer c.Close()
		tc := tls.Server(c, stls)
		if err := tc.Handshake(); err != nil {
			srvErr <- err
			return
		}
		srvErr <- serveBulk(tlsStream{tc}, download, n)
	}()
	raw, err := tcpDial(l.Addr())
	if err != nil {
		return bulkResult{}, err
	}
	defer raw.Close()
	tc := tls.Client(raw, ctls)
	if err := tc.Handshake(); err != nil {
		return bulkResult{}, err
	}
	return timeBulk(func() error { return clientBulk(tlsStream{tc}, download, n) }, srvErr, n)
}

// medians runs each of fs *perfRuns times, interleaved (so that a change
// of the machine's load affects them alike), and returns for each the run
// of median throughput.
func medians(fs ...func() (bulkResult, error)) ([]bulkResult, error) {
	rs := make([][]bulkResult, len(fs))
	for i := 0; i < *perfRuns; i++ {
		for j, f := range fs {
			r, err := f()
			if err != nil {
				return nil, fmt.Errorf("implementation %d: %v", j, err)
			}
			rs[j] = append(rs[j], r)
		}
	}
	out := make([]bulkResult, len(fs))
	for j := range rs {
		out[j] = median(rs[j])
	}
	return out, nil
}

// median returns the result of median throughput.
func median(rs []bulkResult) bulkResult {
	slices.SortFunc(rs, func(a, b bulkResult) int {
		switch {
		case a.gbps < b.gbps:
			return -1
		case a.gbps > b.gbps:
			return 1
		}
		return 0
	})
	return rs[len(rs)/2]
}

// hsResult is a handshake figure: the rate, and the CPU time (both sides)
// per handshake.
type hsResult struct {
	rate float64
	cpu  time.Duration
}

// handshakeRate measures fresh handshakes per second, 32 in parallel, for
// *perfTime. dial makes one connection and closes it.
func handshakeRate(dial func(ctx context.Context) error) (hsResult, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done, failed atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(*perfTime)
	var wg sync.WaitGroup
	start, cpu0 := time.Now(), cpuTime()
	for w := 0; w < handshakeParallelism; w++ {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
				err := dial(dctx)
				dcancel()
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	el, cpu := time.Since(start), cpuTime()-cpu0
	n := done.Load()
	if f := failed.Load(); f > n/100 || n == 0 {
		return hsResult{}, fmt.Errorf("%d of %d handshakes failed, first: %v", f, f+n, firstErr.Load())
	}
	return hsResult{float64(n) / el.Seconds(), cpu / time.Duration(n)}, nil
}

func handshakesQUIC(im benchImpl) (hsResult, error) {
	ctls, stls := perfTLS.client, perfTLS.server
	srv, err := im.listen(stls, 0, im.sockBuf)
	if err != nil {
		return hsResult{}, err
	}
	defer srv.close()
	cli, err := im.client(ctls, 0, im.sockBuf)
	if err != nil {
		return hsResult{}, err
	}
	defer cli.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := srv.accept(ctx); err != nil {
				return
			}
		}
	}()
	return handshakeRate(func(ctx context.Context) error {
		c, err := cli.dial(ctx, srv.addr())
		if err != nil {
			return err
		}
		c.closeWithError(0, "")
		return nil
	})
}

func handshakesTLS() (hsResult, error) {
	ctls, stls := perfTLS.client, perfTLS.server
	l, err := tcpListen()
	if err != nil {
		return hsResult{}, err
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				tc := tls.Server(c, stls)
				tc.Handshake()
				tc.Close()
			}()
		}
	}()
	d := &tls.Dialer{Config: ctls}
	return handshakeRate(func(ctx context.Context) error {
		c, err := d.DialContext(ctx, "tcp", l.Addr().String())
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// netnsPair is two network namespaces joined by a veth pair of MTU 1,500,
// made with ip(8) and removed by close.
type netnsPair struct {
	srvNS, cliNS string
	srvIP, cliIP string
	srvFD, cliFD int
	created      []string
}

func newNetnsPair() (*netnsPair, error) {
	id := os.Getpid() % 100000
	p := &netnsPair{
		srvNS: fmt.Sprintf("qperf%d-s", id), cliNS: fmt.Sprintf("qperf%d-c", id),
		srvIP: "10.213.0.1", cliIP: "10.213.0.2", srvFD: -1, cliFD: -1,
	}
	vs, vc := fmt.Sprintf("qps%d", id), fmt.Sprintf("qpc%d", id)
	steps := [][]string{
		{"netns", "add", p.srvNS}, {"netns", "add", p.cliNS},
		{"link", "add", vs, "type", "veth", "peer", "name", vc},
		{"link", "set", vs, "netns", p.srvNS}, {"link", "set", vc, "netns", p.cliNS},
		{"-n", p.srvNS, "addr", "add", p.srvIP + "/24", "dev", vs},
		{"-n", p.cliNS, "addr", "add", p.cliIP + "/24", "dev", vc},
		{"-n", p.srvNS, "link", "set", vs, "mtu", "1500", "up"},
		{"-n", p.cliNS, "link", "set", vc, "mtu", "1500", "up"},
		{"-n", p.srvNS, "link", "set", "lo", "up"}, {"-n", p.cliNS, "link", "set", "lo", "up"},
	}
	for _, args := range steps {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			p.close()
			return nil, fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		if args[0] == "netns" {
			p.created = append(p.created, args[2])
		}
	}
	var err error
	if p.srvFD, err = unix.Open("/var/run/netns/"+p.srvNS, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		p.close()
		return nil, err
	}
	if p.cliFD, err = unix.Open("/var/run/netns/"+p.cliNS, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *netnsPair) close() {
	for _, fd := range []int{p.srvFD, p.cliFD} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	for _, ns := range p.created {
		exec.Command("ip", "netns", "del", ns).Run() // removes the veth pair too
	}
}

// in runs f on an OS thread moved into the server's or the client's
// namespace; sockets f makes stay in it.
func (p *netnsPair) in(server bool, f func() error) error {
	fd := p.cliFD
	if server {
		fd = p.srvFD
	}
	errc := make(chan error, 1)
	go func() {
		// The thread is not unlocked: it exits with the goroutine rather
		// than serving others from the wrong namespace.
		runtime.LockOSThread()
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- f()
	}()
	return <-errc
}

func (p *netnsPair) listenUDP(server bool) (*net.UDPConn, error) {
	ip := p.cliIP
	if server {
		ip = p.srvIP
	}
	var u *net.UDPConn
	err := p.in(server, func() (err error) {
		u, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip)})
		return err
	})
	return u, err
}

// perfRow is one line of the table.
type perfRow struct {
	name                      string
	ours, quicGo, quinn, tlsv string
	vsQuicGo, vsQuinn, vsTLS  string
}

// row6 is a row without quinn-perf's figures.
func row6(name, ours, quicGo, tlsv, vsQuicGo, vsTLS string) perfRow {
	return perfRow{name: name, ours: ours, quicGo: quicGo, tlsv: tlsv, vsQuicGo: vsQuicGo, vsTLS: vsTLS}
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func TestPerf(t *testing.T) {
	if !*perfFlag {
		t.Skip("the performance table runs with -perf (make perf)")
	}
	perfTLS.client, perfTLS.server = testTLS(t)
	var rows []perfRow
	add := func(r perfRow) {
		rows = append(rows, r)
		t.Logf("%s: ours %s, quic-go %s, TLS/TCP %s", r.name, r.ours, r.quicGo, r.tlsv)
	}
	n := *perfBytes
	bulkRows := func(where string) {
		for _, download := range []bool{false, true} {
			dir := "upload"
			if download {
				dir = "download"
			}
			rs, err := medians(
				func() (bulkResult, error) { return bulkOnce(ourImpl, download, n) },
				func() (bulkResult, error) { return bulkOnce(quicGoImpl, download, n) },
				func() (bulkResult, error) { return bulkTLSOnce(download, n) })
			if err != nil {
				t.Fatalf("bulk %s %s (0: ours, 1: quic-go, 2: TLS): %v", where, dir, err)
			}
			o, q, k := rs[0], rs[1], rs[2]
			add(row6(fmt.Sprintf("Bulk %s, %s (Gbit/s)", dir, where),
				fmt.Sprintf("%.2f", o.gbps), fmt.Sprintf("%.2f", q.gbps), fmt.Sprintf("%.2f", k.gbps),
				ratio(o.gbps, q.gbps), ratio(o.gbps, k.gbps)))
			add(row6(fmt.Sprintf("CPU per GB, %s %s, both sides (s)", dir, where),
				fmt.Sprintf("%.2f", o.cpuPerGB.Seconds()), fmt.Sprintf("%.2f", q.cpuPerGB.Seconds()), fmt.Sprintf("%.2f", k.cpuPerGB.Seconds()),
				ratio(o.cpuPerGB.Seconds(), q.cpuPerGB.Seconds()), ratio(o.cpuPerGB.Seconds(), k.cpuPerGB.Seconds())))
		}
	}
	if perfRowGroup("bulk") {
		bulkRows("loopback")
	}
	if perfRowGroup("1452") {
		perf1452Rows(t, add)
	} else if perfRowGroup("gets") {
		perfGetRows(t, add)
	}

	if !perfRowGroup("veth") {
	} else if os.Geteuid() != 0 {
		t.Log("veth: skipped, creating network namespaces needs root")
	} else if ns, err := newNetnsPair(); err != nil {
		t.Logf("veth: skipped, cannot create network namespaces: %v", err)
	} else {
		perfNet = ns
		bulkRows("veth MTU 1500")
		perfNet = nil
		ns.close()
	}

	if perfRowGroup("handshakes") {
		handshakeRows(t, add)
	}
	if perfRowGroup("ttfb") {
		if err := perfTTFBRows(add); err != nil {
			t.Fatalf("0-RTT time to first byte: %v", err)
		}
	}
	if *perfIdle && perfRowGroup("idle") {
		idleRows(t, add)
	}
	printPerfTable(rows, n)
}

// handshakeRows adds the handshake rows: interleaved rounds, the median of
// each, as for bulk transfers.
func handshakeRows(t *testing.T, add func(perfRow)) {
	var hs, hcpu [3][]float64
	for i := 0; i < *perfRuns; i++ {
		for j, f := range []func() (hsResult, error){
			func() (hsResult, error) { return handshakesQUIC(ourImpl) },
			func() (hsResult, error) { return handshakesQUIC(quicGoImpl) },
			handshakesTLS,
		} {
			r, err := f()
			if err != nil {
				t.Fatalf("handshakes (0: ours, 1: quic-go, 2: TLS) %d: %v", j, err)
			}
			hs[j] = append(hs[j], r.rate)
			hcpu[j] = append(hcpu[j], r.cpu.Seconds()*1e6)
		}
	}
	for j := range hs {
		slices.Sort(hs[j])
		slices.Sort(hcpu[j])
	}
	ho, hq, ht := hs[0][len(hs[0])/2], hs[1][len(hs[1])/2], hs[2][len(hs[2])/2]
	co, cq, ct := hcpu[0][len(hcpu[0])/2], hcpu[1][len(hcpu[1])/2], hcpu[2][len(hcpu[2])/2]
	add(row6("Handshakes/s, 32 in parallel", fmt.Sprintf("%.0f", ho), fmt.Sprintf("%.0f", hq), fmt.Sprintf("%.0f", ht),
		ratio(ho, hq), ratio(ho, ht)))
	add(row6("CPU per handshake, both sides (µs)", fmt.Sprintf("%.0f", co), fmt.Sprintf("%.0f", cq), fmt.Sprintf("%.0f", ct),
		ratio(co, cq), ratio(co, ct)))
}

// idleRows adds the idle-connection rows (memory, and the time to
// establish -idleconns connections).
func idleRows(t *testing.T, add func(perfRow)) {
	{
		stls := perfTLS.server
		ro, err := idleMemoryOnce(ourImpl, stls, *idleConns)
		if err != nil {
			t.Fatalf("ours idle: %v", err)
		}
		rq, err := idleMemoryOnce(quicGoImpl, stls, *idleConns)
		if err != nil {
			t.Fatalf("quic-go idle: %v", err)
		}
		kb := func(r idleResult) float64 { return (r.srvHeap + r.srvStack) / 1000 }
		add(row6(fmt.Sprintf("Server heap+stacks per idle connection, %d conns (KB)", *idleConns),
			fmt.Sprintf("%.1f", kb(ro)), fmt.Sprintf("%.1f", kb(rq)), "—", ratio(kb(ro), kb(rq)), "—"))
		add(row6(fmt.Sprintf("Server RSS per idle connection, %d conns (KB)", *idleConns),
			fmt.Sprintf("%.1f", ro.srvRSS/1000), fmt.Sprintf("%.1f", rq.srvRSS/1000), "—", ratio(ro.srvRSS, rq.srvRSS), "—"))
		add(row6(fmt.Sprintf("Time to establish (accept) %d connections (s)", *idleConns),
			fmt.Sprintf("%.1f", ro.establish.Seconds()), fmt.Sprintf("%.1f", rq.establish.Seconds()), "—",
			ratio(ro.establish.Seconds(), rq.establish.Seconds()), "—"))
	}
}

// printPerfTable prints TestPerf's table in Markdown.
func printPerfTable(rows []perfRow, n int64) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| %s | ours | quic-go | quinn-perf | TLS/TCP | ours ÷ quic-go | ours ÷ quinn | ours ÷ TLS/TCP |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", "Measure")
	for _, r := range rows {
		q, vq := r.quinn, r.vsQuinn
		if q == "" {
			q, vq = "—", "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name, r.ours, r.quicGo, q, r.tlsv, r.vsQuicGo, vq, r.vsTLS)
	}
	fmt.Fprintf(&b, "\n%d CPUs, %s/%s, %s; bulk: median of %d runs of %d MB\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), *perfRuns, n>>20)
	fmt.Print(b.String())
}

// perfTLS are the TLS configurations of TestPerf's connections.
var perfTLS struct{ client, server *tls.Config }
