// Command perf is a server and client of the QUIC performance protocol
// (ALPN "perf", draft-banks-quic-performance): on each stream the client
// sends the 8-byte big-endian number of bytes it wants back, then its
// upload, then FIN, and the server sends the requested bytes.
//
// Usage:
//
//	go run ./example/perf -listen 127.0.0.1:4444              # server
//	go run ./example/perf -connect 127.0.0.1:4444 -insecure \
//	    -download 1GB -upload 0 -streams 4 -duration 10s      # client
//
// The client prints the throughput each second and a summary with the
// process's CPU time; it exits with status 0 only if every request got
// exactly the bytes it asked for. The server runs until interrupted.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/internal/perf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, nil)
	os.Exit(cli.ExitCode("perf", err, os.Stderr))
}

func run(ctx context.Context, args []string, out io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	fs.SetOutput(out)
	listen := fs.String("listen", "", "run the server on UDP `address`")
	connect := fs.String("connect", "", "run the client against the server at `address` (host:port)")
	uploadFlag := fs.String("upload", "0", "bytes each request uploads (KB, MB, GB suffixes allowed)")
	downloadFlag := fs.String("download", "100MB", "bytes each request downloads")
	streams := fs.Int("streams", 1, "requests in parallel, each on its own stream")
	duration := fs.Duration("duration", 0, "repeat requests on each stream until this much time passed (0: one request per stream)")
	common := cli.AddCommon(fs) // -cc, -qlog, -keylog
	ccName, qlogDir, keylogFile := &common.CC, &common.Qlog, &common.Keylog
	insecure := fs.Bool("insecure", false, "client: do not verify the server's certificate")
	caFile := fs.String("ca", "", "client: trust the PEM CA certificates in `file`")
	certFile := fs.String("cert", "", "server: PEM certificate `file` (default: self-signed)")
	keyFile := fs.String("key", "", "server: PEM key `file` for -cert")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: perf -listen ADDR [flags]      (server)\n"+
			"       perf -connect ADDR [flags]     (client)\n\n"+
			"perf runs the QUIC performance protocol (ALPN \"perf\").\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	if (*listen == "") == (*connect == "") {
		return cli.Usagef("give exactly one of -listen (server) and -connect (client)")
	}
	cc, err := cli.Congestion(*ccName)
	if err != nil {
		return err
	}
	upload, err := cli.ParseSize(*uploadFlag)
	if err != nil {
		return cli.Usagef("-upload: %v", err)
	}
	download, err := cli.ParseSize(*downloadFlag)
	if err != nil {
		return cli.Usagef("-download: %v", err)
	}
	if *streams < 1 || *streams > 1000 {
		return cli.Usagef("-streams %d: want 1 to 1000", *streams)
	}
	kl, err := cli.KeyLog(*keylogFile)
	if err != nil {
		return fmt.Errorf("opening the key log: %w", err)
	}
	if kl != nil {
		defer kl.Close()
	}
	conf := cli.Config(cc, *qlogDir)
	conf.MaxIncomingStreams = 1000
	if *listen != "" {
		return serve(ctx, out, *listen, *certFile, *keyFile, kl, conf, ready)
	}
	tlsConf := &tls.Config{NextProtos: []string{perf.ALPN}, InsecureSkipVerify: *insecure, KeyLogWriter: kl}
	if host, _, err := net.SplitHostPort(*connect); err == nil {
		tlsConf.ServerName = host
	}
	if *caFile != "" {
		if tlsConf.RootCAs, err = certs.LoadPool(*caFile); err != nil {
			return cli.Usagef("-ca: %v", err)
		}
	}
	return client(ctx, out, *connect, tlsConf, conf, upload, download, *streams, *duration)
}

func serve(ctx context.Context, out io.Writer, addr, certFile, keyFile string, kl io.Writer, conf *quic.Config, ready func(string)) error {
	var cert tls.Certificate
	var err error
	if certFile != "" || keyFile != "" {
		if cert, err = certs.Load(certFile, keyFile); err != nil {
			return fmt.Errorf("loading the certificate: %w", err)
		}
	} else if cert, _, err = certs.SelfSigned(certs.DefaultHosts...); err != nil {
		return err
	}
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	defer udp.Close()
	tr := &quic.Transport{Conn: udp}
	defer tr.Close()
	l, err := tr.Listen(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{perf.ALPN}, KeyLogWriter: kl}, conf)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "perf: server listening on %s\n", udp.LocalAddr())
	if ready != nil {
		ready(udp.LocalAddr().String())
	}
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				var n perf.Counters
				start := time.Now()
				perf.ServeConn(ctx, c, &n)
				fmt.Fprintf(out, "perf: %s: sent %s, received %s in %s\n", c.RemoteAddr(),
					cli.FormatBytes(n.Sent.Load()), cli.FormatBytes(n.Received.Load()), time.Since(start).Round(time.Millisecond))
			}()
		}
	}()
	<-ctx.Done()
	return nil
}

func client(ctx context.Context, out io.Writer, addr string, tlsConf *tls.Config, conf *quic.Config, upload, download uint64, streams int, duration time.Duration) error {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return cli.Usagef("-connect: %v", err)
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return err
	}
	defer udp.Close()
	tr := &quic.Transport{Conn: udp}
	defer tr.Close()
	hs := &cli.Handshakes{}
	conf.Tracer = hs.Hook(conf.Tracer)
	cpu0 := cli.CPUTime()
	c, err := tr.Dial(ctx, raddr, tlsConf, conf)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", addr, err)
	}
	defer c.CloseWithError(0, "")
	if l := hs.List(); len(l) > 0 {
		fmt.Fprintf(out, "perf: connected: %s\n", l[0])
	}

	var counters perf.Counters
	start := time.Now()
	deadline := start.Add(duration)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		requests int
	)
	for range streams {
		wg.Go(func() {
			for {
				err := perf.RunStream(ctx, c, upload, download, &counters)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					requests++
				}
				mu.Unlock()
				if err != nil || duration <= 0 || time.Now().After(deadline) {
					return
				}
			}
		})
	}
	// The lines printed each second show the progress: the rates, and
	// the bytes so far of the total with the time left (without
	// -duration; with it, the time left is the duration's).
	total := int64(-1)
	if duration <= 0 {
		total = int64(streams) * int64(upload+download)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var lastUp, lastDown uint64
	last := start
loop:
	for {
		select {
		case <-done:
			break loop
		case now := <-tick.C:
			up, down := counters.Sent.Load(), counters.Received.Load()
			progress := cli.ProgressLine(int64(up+down), total, now.Sub(start))
			if total < 0 {
				progress += fmt.Sprintf(", %d s left", int(max(deadline.Sub(now), 0).Seconds()+0.5))
			}
			fmt.Fprintf(out, "%6.1f s  up %14s  down %14s  %s\n", now.Sub(start).Seconds(),
				cli.Mbps(up-lastUp, now.Sub(last)), cli.Mbps(down-lastDown, now.Sub(last)), progress)
			lastUp, lastDown, last = up, down, now
		}
	}
	elapsed := time.Since(start)
	up, down := counters.Sent.Load(), counters.Received.Load()
	st := c.Stats()
	fmt.Fprintf(out, "perf: %d requests on %d streams in %s: uploaded %s (%s), downloaded %s (%s)\n",
		requests, streams, elapsed.Round(time.Millisecond), cli.FormatBytes(up), cli.Mbps(up, elapsed),
		cli.FormatBytes(down), cli.Mbps(down, elapsed))
	fmt.Fprintf(out, "perf: CPU time %s (%.0f%% of one core); RTT %s, %d packets lost of %d sent\n",
		(cli.CPUTime() - cpu0).Round(time.Millisecond), float64(cli.CPUTime()-cpu0)/float64(elapsed)*100,
		cli.Ms(st.SmoothedRTT), st.PacketsLost, st.PacketsSent)
	if firstErr != nil {
		return firstErr
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return nil
}
