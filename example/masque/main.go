// Command masque is a UDP proxy (CONNECT-UDP, RFC 9298) and a client for
// it (package masque).
//
// Usage:
//
//	go run ./example/masque -listen :4433 [-allow-loopback] [-token T]   # proxy
//	go run ./example/masque -proxy https://HOST:4433 -target HOST:PORT \
//	    [-send TEXT] [-insecure] [-token T]                              # client
//	go run ./example/masque -proxy https://HOST:4433 -get https://HOST:PORT/ [-insecure]
//
// The proxy serves the default URI Template
// (/.well-known/masque/udp/{target_host}/{target_port}/) with the
// default policy, which refuses loopback, private, link-local and
// multicast targets and the proxy's own addresses; -allow-loopback also
// allows 127.0.0.0/8 and ::1, for trying it on one machine. With -token,
// requests must carry "Proxy-Authorization: Bearer T". Without -cert and
// -key it makes a self-signed certificate.
//
// The client sends -send (default "hello") to -target through the proxy
// and prints the answer; with -get it fetches an https URL over HTTP/3
// through the proxy (QUIC inside MASQUE) and prints the response.
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
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/masque"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		// -h: the usage was printed.
	case errors.As(err, new(*cli.UsageError)):
		fmt.Fprintln(os.Stderr, "masque:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "masque:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("masque", flag.ContinueOnError)
	listen := fs.String("listen", "", "proxy: UDP address to serve on")
	allowLoopback := fs.Bool("allow-loopback", false, "proxy: allow loopback targets too")
	certFile := fs.String("cert", "", "proxy: certificate file (PEM)")
	keyFile := fs.String("key", "", "proxy: key file (PEM)")
	token := fs.String("token", "", "a bearer token the proxy requires and the client sends")
	proxyURL := fs.String("proxy", "", "client: the proxy's https URL (scheme and authority)")
	target := fs.String("target", "", "client: host:port to send UDP to")
	send := fs.String("send", "hello", "client: the payload to send")
	get := fs.String("get", "", "client: an https URL to fetch over HTTP/3 through the proxy")
	insecure := fs.Bool("insecure", false, "client: do not verify certificates")
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
	}
	switch {
	case *listen != "":
		return runProxy(ctx, *listen, *certFile, *keyFile, *allowLoopback, *token, conf, kl, out)
	case *proxyURL != "" && (*target != "" || *get != ""):
		c := &masque.Client{
			Template:        *proxyURL + masque.DefaultTemplate,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: *insecure, KeyLogWriter: kl},
			QUICConfig:      conf,
		}
		if *token != "" {
			c.Header = http.Header{"Proxy-Authorization": {"Bearer " + *token}}
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if *get != "" {
			return fetch(ctx, c, *get, *insecure, conf, kl, out)
		}
		return sendUDP(ctx, c, *target, *send, out)
	}
	fs.Usage()
	return errors.New("give -listen, or -proxy with -target or -get")
}

// runProxy serves the proxy until ctx ends.
func runProxy(ctx context.Context, addr, certFile, keyFile string, allowLoopback bool, token string, conf *quic.Config, keyLog io.Writer, out io.Writer) error {
	var cert tls.Certificate
	var err error
	if certFile != "" {
		cert, err = certs.Load(certFile, keyFile)
	} else {
		cert, _, err = certs.SelfSigned(certs.DefaultHosts...)
	}
	if err != nil {
		return err
	}
	p := &masque.Proxy{}
	if allowLoopback {
		p.Policy = func(r *http.Request, t netip.AddrPort) error {
			if t.Addr().Unmap().IsLoopback() {
				return nil
			}
			return masque.DefaultPolicy(r, t)
		}
	}
	if token != "" {
		p.Authenticate = func(r *http.Request) error {
			if r.Header.Get("Proxy-Authorization") != "Bearer "+token {
				return errors.New("bad token")
			}
			return nil
		}
	}
	srv := &http3.Server{Handler: p, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, KeyLogWriter: keyLog}, QUICConfig: conf}
	masque.ConfigureServer(srv)
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "masque: proxy listening on %s, template https://%s%s\n", pc.LocalAddr(), pc.LocalAddr(), masque.DefaultTemplate)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	err = srv.Serve(pc)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// sendUDP sends payload to target through the proxy, again every 500 ms
// until an answer comes.
func sendUDP(ctx context.Context, c *masque.Client, target, payload string, out io.Writer) error {
	tunnel, err := c.DialUDP(ctx, target)
	if err != nil {
		return err
	}
	defer tunnel.Close()
	buf := make([]byte, 65536)
	for ctx.Err() == nil {
		if _, err := tunnel.WriteTo([]byte(payload), nil); err != nil {
			return err
		}
		tunnel.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, from, err := tunnel.ReadFrom(buf)
		if err == nil {
			fmt.Fprintf(out, "answer from %s: %q\n", from, buf[:n])
			return nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
	}
	return ctx.Err()
}

// fetch GETs rawURL over HTTP/3, its QUIC connection in a tunnel.
func fetch(ctx context.Context, c *masque.Client, rawURL string, insecure bool, conf *quic.Config, keyLog io.Writer, out io.Writer) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	tunnel, err := c.DialUDP(ctx, host)
	if err != nil {
		return err
	}
	qt := &quic.Transport{Conn: tunnel}
	defer qt.Close()
	// The tunneled connection starts at QUIC's least packet size, which
	// fits in one DATAGRAM frame of the tunnel.
	inner := *conf
	inner.InitialPacketSize = 1200
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure, KeyLogWriter: keyLog},
		QUICConfig:      &inner,
		Dial: func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			return qt.Dial(ctx, tunnel.RemoteAddr(), tc, qc)
		},
	}
	defer tr.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	fmt.Fprintf(out, "%s %s through the proxy\n", resp.Proto, resp.Status)
	_, err = io.Copy(out, io.LimitReader(resp.Body, 1<<20))
	return err
}
