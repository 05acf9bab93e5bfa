//go:build linux

package interop

// The rows of TestPerf at real packet sizes (issue 28): bulk transfers on
// loopback with packets of at most 1,452 bytes for ours (Config.
// MaxPacketSize), ours without the ACK frequency extension (the A/B of
// that lever), quic-go (whose path MTU discovery stops at 1,452 bytes),
// quinn's own benchmark tool quinn-perf (run as two processes, a fresh
// server per run) and crypto/tls over TCP; ACK packets per GB from the
// receiver's counters where the stack has them; and small HTTP GETs with
// one request in flight, with the CPU time per request.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	ours "github.com/quicstack/quic"
)

var (
	perfQuinn         = flag.String("perf.quinn", "", "quinn-perf binary for the 1,452-byte rows (default: $QUINN_PERF, else shared/tools/quinn-perf in a directory above this one; the rows skip it if missing)")
	perfQuinnDuration = flag.Duration("perf.quinn.duration", 4*time.Second, "duration of a quinn-perf run")
	perfGetTime       = flag.Duration("perf.get.time", 2*time.Second, "duration of a one-in-flight small GET run")
)

// perfPacketSize is the packet size of the 1,452-byte rows: an Ethernet
// MTU less the IPv6 and UDP headers, quinn's MTU discovery limit.
const perfPacketSize = 1452

// bulkAcked is a bulk figure with the ACK packets the receiver sent per
// GB (-1: not known).
type bulkAcked struct {
	bulkResult
	acksPerGB float64
}

// bulkOursCfg is bulkOnce for our stack with cfg on both sides; it also
// returns the receiver's ACK packets per GB (ConnectionStats.AcksSent).
func bulkOursCfg(cfg ours.Config, download bool, n int64) (bulkAcked, error) {
	ctls, stls := perfTLS.client, perfTLS.server
	sudp, err := benchSocket(true, 0)
	if err != nil {
		return bulkAcked{}, err
	}
	defer sudp.Close()
	str := &ours.Transport{Conn: sudp}
	defer str.Close()
	scfg := cfg
	l, err := str.Listen(stls, &scfg)
	if err != nil {
		return bulkAcked{}, err
	}
	cudp, err := benchSocket(false, 0)
	if err != nil {
		return bulkAcked{}, err
	}
	defer cudp.Close()
	ctr := &ours.Transport{Conn: cudp}
	defer ctr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srvErr := make(chan error, 1)
	srvConn := make(chan *ours.Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			srvErr <- err
			return
		}
		srvConn <- c
		s, err := c.AcceptStream(ctx)
		if err != nil {
			srvErr <- err
			return
		}
		srvErr <- serveBulk(s, download, n)
	}()
	ccfg := cfg
	c, err := ctr.Dial(ctx, sudp.LocalAddr(), ctls, &ccfg)
	if err != nil {
		return bulkAcked{}, err
	}
	defer c.CloseWithError(0, "")
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return bulkAcked{}, err
	}
	r, err := timeBulk(func() error { return clientBulk(s, download, n) }, srvErr, n)
	if err != nil {
		return bulkAcked{}, err
	}
	receiver := <-srvConn
	if download {
		receiver = c
	}
	return bulkAcked{r, float64(receiver.Stats().AcksSent) * 1e9 / float64(n)}, nil
}

// quinnStats are the figures read from quinn-perf's --conn-stats output:
// the last ConnectionStats line (cumulative) and the last elapsed time.
var (
	quinnUDPRe     = regexp.MustCompile(`udp_(tx|rx): UdpStats \{ datagrams: \d+, bytes: (\d+)`)
	quinnAckTxRe   = regexp.MustCompile(`frame_tx: FrameStats \{ ACK: (\d+)`)
	quinnElapsedRe = regexp.MustCompile(`requests in ([0-9.]+)s`)
)

// lastMatch returns the submatches of re's last match in b.
func lastMatch(re *regexp.Regexp, b []byte, group int) (string, bool) {
	ms := re.FindAllSubmatch(b, -1)
	if len(ms) == 0 {
		return "", false
	}
	return string(ms[len(ms)-1][group]), true
}

// quinnUDPBytes returns the last cumulative udp_tx or udp_rx byte count.
func quinnUDPBytes(b []byte, dir string) int64 {
	var v int64
	for _, m := range quinnUDPRe.FindAllSubmatch(b, -1) {
		if string(m[1]) == dir {
			v, _ = strconv.ParseInt(string(m[2]), 10, 64)
		}
	}
	return v
}

// findQuinnPerf returns $QUINN_PERF or the first shared/tools/quinn-perf
// found in the directories above the working directory (the steering
// checkout's shared/ sits beside the repository or its worktrees).
func findQuinnPerf() string {
	if p := os.Getenv("QUINN_PERF"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return "quinn-perf"
	}
	for {
		p := filepath.Join(dir, "shared", "tools", "quinn-perf")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "shared/tools/quinn-perf"
		}
		dir = up
	}
}

// childCPU returns the user and system time of an exited process.
func childCPU(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

// bulkQuinnOnce runs quinn-perf for *perfQuinnDuration on loopback, a
// fresh server per run (its README: the server exits when a peer's
// process ends abruptly), one bidirectional request uploading or
// downloading more than the run can move. Throughput counts UDP payload
// bytes (a QUIC packet's headers, frame headers and AEAD tag, about 3% at
// 1,452 bytes, included); CPU is both processes' user and system time.
func bulkQuinnOnce(download bool) (bulkAcked, error) {
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return bulkAcked{}, err
	}
	addr := u.LocalAddr().String() // free a moment ago
	u.Close()
	var srvOut, cliOut bytes.Buffer // one writer each: exec writes from one goroutine
	srv := exec.Command(*perfQuinn, "server", "--listen", addr, "--conn-stats")
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		return bulkAcked{}, err
	}
	defer func() {
		if srv.ProcessState == nil {
			srv.Process.Kill()
			srv.Wait()
		}
	}()
	time.Sleep(300 * time.Millisecond) // the server binds its socket
	up, dn := "100G", "0"
	if download {
		up, dn = "0", "100G"
	}
	secs := strconv.FormatFloat(perfQuinnDuration.Seconds(), 'f', -1, 64)
	ctx, cancel := context.WithTimeout(context.Background(), *perfQuinnDuration+time.Minute)
	defer cancel()
	cli := exec.CommandContext(ctx, *perfQuinn, "client", "--duration", secs, "--upload-size", up, "--download-size", dn,
		"--local-addr", "127.0.0.1:0", "--conn-stats", addr)
	cli.Stdout, cli.Stderr = &cliOut, &cliOut
	t0 := time.Now()
	// The client ends with an error status when the duration cuts its
	// request short; only a run that did not end in time fails here.
	if err := cli.Run(); err != nil && ctx.Err() != nil {
		return bulkAcked{}, fmt.Errorf("quinn-perf client: %v: %s", err, tail(cliOut.Bytes()))
	}
	wall := time.Since(t0)
	srv.Process.Signal(syscall.SIGINT)
	srv.Wait()
	out := cliOut.Bytes()
	n := quinnUDPBytes(out, "tx")
	receiverOut := srvOut.Bytes()
	if download {
		n = quinnUDPBytes(out, "rx")
		receiverOut = out
	}
	if n < 1<<20 {
		return bulkAcked{}, fmt.Errorf("quinn-perf moved %d bytes: %s", n, tail(out))
	}
	el := wall
	if s, ok := lastMatch(quinnElapsedRe, out, 1); ok {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 {
			el = time.Duration(f * float64(time.Second))
		}
	}
	cpu := childCPU(cli.ProcessState) + childCPU(srv.ProcessState)
	acks := -1.0
	if s, ok := lastMatch(quinnAckTxRe, receiverOut, 1); ok {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			acks = v * 1e9 / float64(n)
		}
	}
	return bulkAcked{bulkResult{
		gbps:     float64(n) * 8 / el.Seconds() / 1e9,
		cpuPerGB: time.Duration(float64(cpu) * 1e9 / float64(n)),
	}, acks}, nil
}

// mediansAcked is medians for bulkAcked figures: each of fs runs
// *perfRuns times, interleaved, and the run of median throughput is kept.
func mediansAcked(fs ...func() (bulkAcked, error)) ([]bulkAcked, error) {
	rs := make([][]bulkAcked, len(fs))
	for i := 0; i < *perfRuns; i++ {
		for j, f := range fs {
			if f == nil {
				continue
			}
			r, err := f()
			if err != nil {
				return nil, fmt.Errorf("implementation %d: %v", j, err)
			}
			rs[j] = append(rs[j], r)
		}
	}
	out := make([]bulkAcked, len(fs))
	for j := range rs {
		if len(rs[j]) == 0 {
			continue
		}
		slices.SortFunc(rs[j], func(a, b bulkAcked) int {
			switch {
			case a.gbps < b.gbps:
				return -1
			case a.gbps > b.gbps:
				return 1
			}
			return 0
		})
		out[j] = rs[j][len(rs[j])/2]
	}
	return out, nil
}

// getResult is a one-in-flight small GET figure.
type getResult struct {
	rps    float64
	cpuReq time.Duration
}

// smallGetsOneInFlight issues GETs of smallGetBody one after another on
// one connection for d and returns the rate and the CPU time (client and
// server, one process) per request.
func smallGetsOneInFlight(t testing.TB, setup h3BenchSetup, proto string, d time.Duration) (getResult, error) {
	c, url, stop := setup(t, smallGetHandler())
	defer stop()
	get := func() error {
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || n != int64(len(smallGetBody)) || resp.Proto != proto {
			return fmt.Errorf("status %d, %d bytes, %s", resp.StatusCode, n, resp.Proto)
		}
		return nil
	}
	for range 20 { // the connection, QPACK and HPACK tables, buffers
		if err := get(); err != nil {
			return getResult{}, err
		}
	}
	var n int64
	cpu0, t0 := cpuTime(), time.Now()
	for time.Since(t0) < d {
		if err := get(); err != nil {
			return getResult{}, err
		}
		n++
	}
	el, cpu := time.Since(t0), cpuTime()-cpu0
	return getResult{float64(n) / el.Seconds(), cpu / time.Duration(n)}, nil
}

// perf1452Rows adds the rows at 1,452-byte packets and the one-in-flight
// GET rows.
func perf1452Rows(t *testing.T, add func(perfRow)) {
	n := *perfBytes
	capped := ours.Config{MaxPacketSize: perfPacketSize}
	noAF := ours.Config{MaxPacketSize: perfPacketSize, DisableAckFrequency: true}
	var quinn func(bool) func() (bulkAcked, error)
	if *perfQuinn == "" {
		*perfQuinn = findQuinnPerf()
	}
	if _, err := os.Stat(*perfQuinn); err == nil {
		quinn = func(download bool) func() (bulkAcked, error) {
			return func() (bulkAcked, error) { return bulkQuinnOnce(download) }
		}
	} else {
		t.Logf("quinn-perf: skipped, %v", err)
	}
	fmtF := func(f float64) string {
		if f == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f", f)
	}
	fmtAcks := func(r bulkAcked) string {
		if r.acksPerGB < 0 || r.gbps == 0 {
			return "—"
		}
		return fmt.Sprintf("%.0f", r.acksPerGB)
	}
	for _, download := range []bool{false, true} {
		dir := "upload"
		if download {
			dir = "download"
		}
		fs := []func() (bulkAcked, error){
			func() (bulkAcked, error) { return bulkOursCfg(capped, download, n) },
			func() (bulkAcked, error) { return bulkOursCfg(noAF, download, n) },
			func() (bulkAcked, error) {
				r, err := bulkOnce(quicGoImpl, download, n)
				return bulkAcked{r, -1}, err
			},
			nil,
			func() (bulkAcked, error) {
				r, err := bulkTLSOnce(download, n)
				return bulkAcked{r, -1}, err
			},
		}
		if quinn != nil {
			fs[3] = quinn(download)
		}
		rs, err := mediansAcked(fs...)
		if err != nil {
			t.Fatalf("bulk 1452 %s (0: ours, 1: ours without ACK_FREQUENCY, 2: quic-go, 3: quinn-perf, 4: TLS): %v", dir, err)
		}
		o, a, q, k, tl := rs[0], rs[1], rs[2], rs[3], rs[4]
		where := fmt.Sprintf("loopback, %d-byte packets", perfPacketSize)
		add(perfRow{name: fmt.Sprintf("Bulk %s, %s (Gbit/s)", dir, where),
			ours: fmtF(o.gbps), quicGo: fmtF(q.gbps), quinn: fmtF(k.gbps), tlsv: fmtF(tl.gbps),
			vsQuicGo: ratio(o.gbps, q.gbps), vsQuinn: ratio(o.gbps, k.gbps), vsTLS: ratio(o.gbps, tl.gbps)})
		add(perfRow{name: fmt.Sprintf("CPU per GB, %s %s, both sides (s)", dir, where),
			ours: fmtF(o.cpuPerGB.Seconds()), quicGo: fmtF(q.cpuPerGB.Seconds()), quinn: fmtF(k.cpuPerGB.Seconds()), tlsv: fmtF(tl.cpuPerGB.Seconds()),
			vsQuicGo: ratio(o.cpuPerGB.Seconds(), q.cpuPerGB.Seconds()), vsQuinn: ratio(o.cpuPerGB.Seconds(), k.cpuPerGB.Seconds()), vsTLS: ratio(o.cpuPerGB.Seconds(), tl.cpuPerGB.Seconds())})
		add(perfRow{name: fmt.Sprintf("ACK packets per GB from the receiver, %s %s", dir, where),
			ours: fmtAcks(o), quicGo: "—", quinn: fmtAcks(k), tlsv: "—", vsQuicGo: "—", vsQuinn: ratio(o.acksPerGB, k.acksPerGB), vsTLS: "—"})
		// The A/B of the ACK frequency lever, same runs: "ours" is
		// with it, the quic-go column holds ours without it.
		add(perfRow{name: fmt.Sprintf("A/B %s %s: ours with ACK_FREQUENCY (ours) vs without (2nd column): Gbit/s", dir, where),
			ours: fmtF(o.gbps), quicGo: fmtF(a.gbps), quinn: "—", tlsv: "—", vsQuicGo: ratio(o.gbps, a.gbps), vsQuinn: "—", vsTLS: "—"})
		add(perfRow{name: fmt.Sprintf("A/B %s %s: CPU per GB (s)", dir, where),
			ours: fmtF(o.cpuPerGB.Seconds()), quicGo: fmtF(a.cpuPerGB.Seconds()), quinn: "—", tlsv: "—", vsQuicGo: ratio(o.cpuPerGB.Seconds(), a.cpuPerGB.Seconds()), vsQuinn: "—", vsTLS: "—"})
		add(perfRow{name: fmt.Sprintf("A/B %s %s: receiver's ACK packets per GB", dir, where),
			ours: fmtAcks(o), quicGo: fmtAcks(a), quinn: "—", tlsv: "—", vsQuicGo: ratio(o.acksPerGB, a.acksPerGB), vsQuinn: "—", vsTLS: "—"})
	}

	perfGetRows(t, add)
}

// perfGetRows adds the one-in-flight GET rows: ours (HTTP/3), quic-go
// (HTTP/3), net/http (HTTP/2 over TLS, in the TLS column); interleaved
// rounds, medians.
func perfGetRows(t *testing.T, add func(perfRow)) {
	// Each round starts with the next implementation: the first run of a
	// round measured slower (ours run three times in a row: 79, 68 and
	// 65 µs per request), which always counted against ours.
	names := [3]string{"ours", "quic-go", "HTTP/2"}
	fs := [3]func() (getResult, error){
		func() (getResult, error) { return smallGetsOneInFlight(t, setupOurH3, "HTTP/3.0", *perfGetTime) },
		func() (getResult, error) { return smallGetsOneInFlight(t, setupQuicGoH3, "HTTP/3.0", *perfGetTime) },
		func() (getResult, error) { return smallGetsOneInFlight(t, setupHTTP2, "HTTP/2.0", *perfGetTime) },
	}
	var gs [3][]getResult
	for i := 0; i < *perfRuns; i++ {
		for k := range fs {
			j := (i + k) % len(fs)
			r, err := fs[j]()
			if err != nil {
				t.Fatalf("small GETs, %s: %v", names[j], err)
			}
			t.Logf("small GETs round %d, %s: %.0f requests/s, %.1f µs CPU per request", i, names[j], r.rps, float64(r.cpuReq)/1e3)
			gs[j] = append(gs[j], r)
		}
	}
	var med [3]getResult
	for j := range gs {
		slices.SortFunc(gs[j], func(a, b getResult) int {
			switch {
			case a.rps < b.rps:
				return -1
			case a.rps > b.rps:
				return 1
			}
			return 0
		})
		med[j] = gs[j][len(gs[j])/2]
	}
	o, q, h := med[0], med[1], med[2]
	add(perfRow{name: "Small GETs, one in flight (requests/s; TLS column: HTTP/2 over TLS)",
		ours: fmt.Sprintf("%.0f", o.rps), quicGo: fmt.Sprintf("%.0f", q.rps), quinn: "—", tlsv: fmt.Sprintf("%.0f", h.rps),
		vsQuicGo: ratio(o.rps, q.rps), vsQuinn: "—", vsTLS: ratio(o.rps, h.rps)})
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	add(perfRow{name: "CPU per small GET, one in flight, both sides (µs)",
		ours: fmt.Sprintf("%.0f", us(o.cpuReq)), quicGo: fmt.Sprintf("%.0f", us(q.cpuReq)), quinn: "—", tlsv: fmt.Sprintf("%.0f", us(h.cpuReq)),
		vsQuicGo: ratio(us(o.cpuReq), us(q.cpuReq)), vsQuinn: "—", vsTLS: ratio(us(o.cpuReq), us(h.cpuReq))})
}

// tail returns the end of a child process's output, for error messages.
func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// BenchmarkBulk1452 is one upload or download of 64 MiB per iteration with
// our stack on both sides at 1,452-byte packets, for profiles of the
// per-packet cost (go test -bench Bulk1452 -cpuprofile).
func BenchmarkBulk1452(b *testing.B) {
	perfTLS.client, perfTLS.server = testTLS(b)
	for _, download := range []bool{false, true} {
		name := "upload"
		if download {
			name = "download"
		}
		for _, af := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/ackfreq=%v", name, af), func(b *testing.B) {
				const n = 64 << 20
				b.SetBytes(n)
				var acks float64
				for range b.N {
					r, err := bulkOursCfg(ours.Config{MaxPacketSize: perfPacketSize, DisableAckFrequency: !af}, download, n)
					if err != nil {
						b.Fatal(err)
					}
					acks += r.acksPerGB
				}
				b.ReportMetric(acks/float64(b.N), "acks/GB")
			})
		}
	}
}
