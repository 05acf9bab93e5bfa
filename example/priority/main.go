// Command priority measures HTTP/3 priorities (RFC 9218) end to end: an
// HTTP/3 server and client on loopback, through the netem relay
// (internal/netem) as a rate-limited link, time an urgent response
// (priority u=0) alone, then while many incremental background responses
// (u=5, i) are in flight on the same connection, and then with every
// request at the default priority (no Priority field), as a client without
// priorities sends them.
//
// Usage:
//
//	go run ./example/priority [-bandwidth 10] [-delay 15ms] [-queue 25] [-background 20] [-bg-size 1000000] [-size 500000]
//
// It prints the three times and their ratios to the time alone, and exits
// with status 1 if a request failed.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/internal/netem"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		// -h: the usage was printed.
	case errors.As(err, new(*cli.UsageError)):
		fmt.Fprintln(os.Stderr, "priority:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "priority:", err)
		os.Exit(1)
	}
}

type params struct {
	bandwidth  float64 // Mbit/s
	delay      time.Duration
	queue      int
	background int
	bgSize     int
	size       int
	warm       time.Duration
	conf       *quic.Config // -cc and -qlog, for both ends
	keyLog     io.Writer    // -keylog, nil if none
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("priority", flag.ContinueOnError)
	var p params
	fs.Float64Var(&p.bandwidth, "bandwidth", 10, "link rate in Mbit/s, each direction")
	fs.DurationVar(&p.delay, "delay", 15*time.Millisecond, "one-way delay")
	fs.IntVar(&p.queue, "queue", 25, "link queue in datagrams")
	fs.IntVar(&p.background, "background", 20, "background responses in flight")
	fs.IntVar(&p.bgSize, "bg-size", 1_000_000, "size of each background response")
	fs.IntVar(&p.size, "size", 500_000, "size of the urgent response")
	fs.DurationVar(&p.warm, "warm", 500*time.Millisecond, "how long the background responses run before the urgent request")
	common := cli.AddCommon(fs) // -cc, -qlog, -keylog
	if err := fs.Parse(args); err != nil {
		return err
	}
	conf, kl, err := common.Setup()
	if err != nil {
		return err
	}
	if kl != nil {
		defer kl.Close()
		p.keyLog = kl
	}
	p.conf = conf
	alone, err := measure(p, 0, "", "u=0")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "urgent %d B alone:                          %v\n", p.size, alone.Round(time.Millisecond))
	with, err := measure(p, p.background, "u=5, i", "u=0")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "among %d background (u=5, i) of %d B:     %v (%.2fx)\n", p.background, p.bgSize, with.Round(time.Millisecond), float64(with)/float64(alone))
	without, err := measure(p, p.background, "", "")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "same, all at the default priority:          %v (%.2fx)\n", without.Round(time.Millisecond), float64(without)/float64(alone))
	return nil
}

// measure starts a server and a relay, sends n background requests with
// Priority field bgPrio (none if empty), waits p.warm, and returns how long
// the urgent request (Priority urgentPrio) takes to its last byte.
func measure(p params, n int, bgPrio, urgentPrio string) (time.Duration, error) {
	cert, pool, err := certs.SelfSigned("localhost")
	if err != nil {
		return 0, err
	}
	payload := make([]byte, max(p.size, p.bgSize))
	srv := &http3.Server{
		TLSConfig:  &tls.Config{Certificates: []tls.Certificate{cert}, KeyLogWriter: p.keyLog},
		QUICConfig: p.conf,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			size, _ := strconv.Atoi(r.URL.Query().Get("size"))
			w.Header().Set("Content-Length", strconv.Itoa(size))
			w.Write(payload[:min(size, len(payload))])
		}),
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	go srv.Serve(pc)
	defer srv.Close()
	link := netem.SimpleP2P(int64(p.bandwidth*1e6), p.delay, p.queue)
	relay, err := netem.New(netem.Config{Server: pc.LocalAddr().(*net.UDPAddr), Link: link, RecordBytes: -1})
	if err != nil {
		return 0, err
	}
	defer relay.Close()
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost", KeyLogWriter: p.keyLog}, QUICConfig: p.conf}
	defer tr.Close()
	client := &http.Client{Transport: tr}
	base := "https://" + relay.Addr().String() + "/?size="
	get := func(size int, prio string) (time.Duration, error) {
		req, _ := http.NewRequest("GET", base+strconv.Itoa(size), nil)
		if prio != "" {
			req.Header.Set("Priority", prio)
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		k, err := io.Copy(io.Discard, resp.Body)
		if err == nil && k != int64(size) {
			err = fmt.Errorf("%d of %d bytes", k, size)
		}
		return time.Since(start), err
	}
	// One request first, so that every measurement runs on a connection
	// that completed its handshake.
	if _, err := get(1, ""); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := get(p.bgSize, bgPrio); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
	}
	if n > 0 {
		time.Sleep(p.warm)
	}
	d, err := get(p.size, urgentPrio)
	cancel()
	tr.Close() // ends the background requests
	wg.Wait()
	return d, err
}
