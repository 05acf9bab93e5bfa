// Command client fetches URLs from one server, in parallel: over HTTP
// (-alpn h3, the default) with the protocol the server offers, or with
// HTTP/0.9 over QUIC (-alpn hq-interop, the QUIC interop runner's file
// protocol).
//
// Usage:
//
//	go run ./example/client [flags] URL...
//
// With -proto auto (the default) it speaks HTTP like a browser, through
// http3.AutoTransport: HTTP/2 or HTTP/1.1 over TCP until the server
// advertises HTTP/3 with Alt-Svc, then HTTP/3, racing QUIC against TCP
// and falling back to TCP when UDP is blocked; the first URL is fetched
// before the others so that they can use what it taught. -proto h3 uses
// HTTP/3 only, -proto tcp HTTP/2 or HTTP/1.1 only. -altsvc FILE keeps the
// Alt-Svc cache in FILE across runs. Alt-Svc is honoured only from a
// server whose certificate was verified: with -insecure the client stays
// on TCP unless the server has no TCP.
//
// It prints one line per URL (status, protocol, bytes, time) and a line
// per QUIC connection (QUIC version, cipher suite, handshake time,
// resumption, 0-RTT), and exits with status 0 only if every fetch
// succeeded (1 otherwise, 2 on a usage error). -resume fetches the first
// URL, waits for a session ticket, and reconnects with TLS resumption for
// the rest, over HTTP/3 only; -0rtt (which implies -resume) also sends
// the second connection's requests in 0-RTT: with HTTP/3 only GET and
// HEAD requests go out in 0-RTT (http3.Transport.Allow0RTT), which is all
// this client sends; with hq-interop every request does. -keylog FILE (or
// $SSLKEYLOGFILE) writes the TLS secrets for Wireshark (and turns GSO and
// GRO off, so that a capture shows one QUIC datagram per UDP datagram);
// -qlog DIR (or $QLOGDIR) writes a qlog file per connection.
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
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/internal/hq"
	"github.com/quicstack/quic/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	os.Exit(cli.ExitCode("client", err, os.Stderr))
}

type options struct {
	alpn            string
	proto           http3.ProtocolPolicy
	altSvcFile      string
	out             string
	resume, zeroRTT bool
	noOffload       bool // GSO and GRO off, for packet captures
	timeout         time.Duration
	tlsConf         *tls.Config
	conf            *quic.Config
	tickets         *cli.TicketCache
	handshakes      *cli.Handshakes
	stdout          io.Writer
	progress        io.Writer  // where a terminal shows the download's progress
	mu              sync.Mutex // serializes output lines
	failed          int
	remote          string // host:port
}

// errFetch reports that some fetches failed; each was reported already.
var errFetch = errors.New("some fetches failed")

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stdout)
	insecure := fs.Bool("insecure", false, "do not verify the server's certificate")
	caFile := fs.String("ca", "", "trust the PEM CA certificates in `file` (default: the system's)")
	alpn := fs.String("alpn", http3.NextProtoH3, "application protocol: h3 or hq-interop")
	out := fs.String("out", "", "save each body in `dir` under the URL's file name (default: discard)")
	common := cli.AddCommon(fs) // -cc, -qlog, -keylog
	ccName, qlogDir, keylogFile := &common.CC, &common.Qlog, &common.Keylog
	resume := fs.Bool("resume", false, "fetch the first URL, then reconnect with TLS resumption for the rest")
	zeroRTT := fs.Bool("0rtt", false, "send the second connection's requests in 0-RTT (implies -resume)")
	keyUpdate := fs.Bool("keyupdate", false, "initiate 1-RTT key updates (every 100 packets sent, when allowed)")
	v2 := fs.Bool("v2", false, "use QUIC version 2 (RFC 9369)")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	proto := fs.String("proto", "auto", "HTTP protocols (with -alpn h3): auto (HTTP/3 where offered, else TCP), h3 (HTTP/3 only) or tcp (HTTP/2 and HTTP/1.1 only)")
	altSvcFile := fs.String("altsvc", "", "load the Alt-Svc cache from `file` and save it there at exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: client [flags] URL...\n\n"+
			"client fetches the URLs (all https:// on one server) in parallel, over HTTP/3\n"+
			"where the server offers it and UDP gets through (-proto), prints one line per\n"+
			"URL with the protocol of its response, and exits non-zero if any fetch failed.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("no URL given")
	}
	if *alpn != http3.NextProtoH3 && *alpn != hq.ALPN {
		return cli.Usagef("-alpn %q: want h3 or hq-interop", *alpn)
	}
	policy := map[string]http3.ProtocolPolicy{"auto": http3.AutoProtocol, "h3": http3.RequireHTTP3, "tcp": http3.ForbidHTTP3}
	pp, ok := policy[*proto]
	if !ok {
		return cli.Usagef("-proto %q: want auto, h3 or tcp", *proto)
	}
	if *zeroRTT && !*resume {
		*resume = true // 0-RTT needs a session to resume
	}
	if *resume {
		if pp == http3.ForbidHTTP3 {
			return cli.Usagef("-resume and -0rtt resume QUIC sessions: not with -proto tcp")
		}
		// Each group of URLs takes a new QUIC connection, which
		// resumes the first's session.
		pp = http3.RequireHTTP3
	}
	if *resume && fs.NArg() < 2 {
		return cli.Usagef("-resume needs at least two URLs (the first is fetched before reconnecting)")
	}
	urls := make([]*url.URL, fs.NArg())
	for i, a := range fs.Args() {
		u, err := url.Parse(a)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return cli.Usagef("%q is not an https:// URL", a)
		}
		if i > 0 && u.Host != urls[0].Host {
			return cli.Usagef("all URLs must be on one server: %s and %s", urls[0].Host, u.Host)
		}
		urls[i] = u
	}
	cc, err := cli.Congestion(*ccName)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
	}

	o := &options{alpn: *alpn, proto: pp, altSvcFile: *altSvcFile, out: *out, resume: *resume, zeroRTT: *zeroRTT, timeout: *timeout, stdout: stdout, progress: os.Stderr,
		tickets: cli.NewTicketCache(), handshakes: &cli.Handshakes{}}
	o.remote = urls[0].Host
	if urls[0].Port() == "" {
		o.remote = net.JoinHostPort(urls[0].Hostname(), "443")
	}
	o.tlsConf = &tls.Config{
		ServerName:         urls[0].Hostname(),
		InsecureSkipVerify: *insecure,
		NextProtos:         []string{*alpn},
		ClientSessionCache: o.tickets,
	}
	if *caFile != "" {
		if o.tlsConf.RootCAs, err = certs.LoadPool(*caFile); err != nil {
			return cli.Usagef("-ca: %v", err)
		}
	}
	kl, err := cli.KeyLog(*keylogFile)
	if err != nil {
		return fmt.Errorf("opening the key log: %w", err)
	}
	if kl != nil {
		defer kl.Close()
		o.tlsConf.KeyLogWriter = kl
		o.noOffload = true
	}
	o.conf = cli.Config(cc, *qlogDir)
	o.conf.Tracer = o.handshakes.Hook(o.conf.Tracer)
	if *keyUpdate {
		// A downloading client sends few packets (about one ACK per
		// batch of datagrams the socket hands over at once), so the
		// interval is short enough for a small download to update.
		o.conf.KeyUpdateInterval = 10
	}
	if *v2 {
		o.conf.Versions = []wire.Version{wire.Version2}
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	groups := [][]*url.URL{urls}
	if *resume {
		groups = [][]*url.URL{urls[:1], urls[1:]}
	}
	for i, g := range groups {
		if i > 0 && !o.tickets.WaitTicket(ctx, 0) {
			return errors.New("no session ticket from the server: cannot resume")
		}
		early := i > 0 && o.zeroRTT
		var err error
		if o.alpn == hq.ALPN {
			err = o.fetchHQ(ctx, g, early)
		} else {
			err = o.fetchHTTP(ctx, g, early)
		}
		if err != nil {
			return err
		}
		// A connection's handshake completes before its first response
		// arrives, so it is recorded by now if it happened.
		if hs := o.handshakes.List(); len(hs) > i {
			fmt.Fprintf(stdout, "connection %d: %s\n", i+1, hs[i])
		}
	}
	if o.failed > 0 {
		return fmt.Errorf("%d of %d fetches failed", o.failed, len(urls))
	}
	return nil
}

// fetchHTTP fetches urls in parallel through one http3.AutoTransport
// with the -proto policy, sending the HTTP/3 requests in 0-RTT if early
// is set. With -proto auto the first URL goes first, alone: its response
// may advertise HTTP/3 for the others.
func (o *options) fetchHTTP(ctx context.Context, urls []*url.URL, early bool) error {
	h3 := &http3.Transport{Allow0RTT: early}
	tr := &http3.AutoTransport{TLSClientConfig: o.tlsConf, QUICConfig: o.conf, H3: h3, Policy: o.proto, AltSvcFile: o.altSvcFile}
	defer tr.Close()
	if o.noOffload {
		qtr, err := o.transport()
		if err != nil {
			return err
		}
		defer qtr.Conn.Close()
		defer qtr.Close()
		h3.Dial = func(ctx context.Context, addr string, tc *tls.Config, conf *quic.Config) (*quic.Conn, error) {
			ua, err := net.ResolveUDPAddr("udp", addr)
			if err != nil {
				return nil, err
			}
			if early {
				return qtr.DialEarly(ctx, ua, tc, conf)
			}
			return qtr.Dial(ctx, ua, tc, conf)
		}
	}
	client := &http.Client{Transport: tr}
	get := func(u *url.URL) (int, string, io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return 0, "", nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", nil, err
		}
		return resp.StatusCode, resp.Proto, sizedBody{resp.Body, resp.ContentLength}, nil
	}
	if o.proto == http3.AutoProtocol && len(urls) > 1 {
		o.parallel(urls[:1], get)
		urls = urls[1:]
	}
	o.parallel(urls, get)
	return nil
}

// sizedBody is a response body of known length (-1: unknown), for the
// progress line.
type sizedBody struct {
	io.ReadCloser
	size int64
}

// fetchHQ fetches urls in parallel with HTTP/0.9 over one QUIC
// connection, dialed with 0-RTT if early is set.
func (o *options) fetchHQ(ctx context.Context, urls []*url.URL, early bool) error {
	raddr, err := net.ResolveUDPAddr("udp", o.remote)
	if err != nil {
		return err
	}
	tr, err := o.transport()
	if err != nil {
		return err
	}
	defer tr.Conn.Close()
	defer tr.Close()
	dial := tr.Dial
	if early {
		dial = tr.DialEarly
	}
	c, err := dial(ctx, raddr, o.tlsConf, o.conf)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", o.remote, err)
	}
	defer c.CloseWithError(0, "")
	o.parallel(urls, func(u *url.URL) (int, string, io.ReadCloser, error) {
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		s, err := hq.Get(ctx, c, p)
		if err != nil {
			return 0, "", nil, err
		}
		return http.StatusOK, "HTTP/0.9", hqBody{s}, nil
	})
	if early {
		select {
		case <-c.HandshakeComplete():
		case <-ctx.Done():
		}
	}
	return nil
}

// transport opens a UDP socket and a QUIC Transport on it.
func (o *options) transport() (*quic.Transport, error) {
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	return &quic.Transport{Conn: udp, DisableGSO: o.noOffload, DisableGRO: o.noOffload}, nil
}

// hqBody reads an HTTP/0.9 response, turning a stream reset with an HTTP
// status into an error naming it.
type hqBody struct{ s *quic.Stream }

func (b hqBody) Read(p []byte) (int, error) {
	n, err := b.s.Read(p)
	if st := hq.StatusOf(err); st != 0 {
		err = fmt.Errorf("server answered %d %s", st, http.StatusText(st))
	}
	return n, err
}

func (b hqBody) Close() error { b.s.CancelRead(0); return nil }

// parallel runs get for each URL at once and reports each result with
// the status, the protocol of the response, its size and the time.
func (o *options) parallel(urls []*url.URL, get func(*url.URL) (status int, proto string, body io.ReadCloser, err error)) {
	// Progress on a terminal (stderr) for downloads longer than a
	// second: the bodies' bytes of the sum of their lengths, when known.
	progress := cli.NewProgress(o.progress, 0)
	defer progress.Done()
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() {
			start := time.Now()
			status, proto, body, err := get(u)
			var n int64
			if err == nil {
				size := int64(-1)
				if sb, ok := body.(sizedBody); ok {
					size = sb.size
				}
				progress.AddTotal(size)
				n, err = o.save(u, progress.Reader(body))
				body.Close()
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("status %d %s", status, http.StatusText(status))
				}
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			if err != nil {
				o.failed++
				fmt.Fprintf(o.stdout, "FAIL %s: %v\n", u, err)
				return
			}
			fmt.Fprintf(o.stdout, "%d %s %10d bytes %10s  %s\n", status, proto, n, cli.Ms(time.Since(start)), u)
		})
	}
	wg.Wait()
}

// save writes a body to the output directory, or discards it.
func (o *options) save(u *url.URL, body io.Reader) (int64, error) {
	if o.out == "" {
		return io.Copy(io.Discard, body)
	}
	name := path.Base(u.Path)
	if name == "/" || name == "." || name == "" {
		name = "index.html"
	}
	f, err := os.Create(filepath.Join(o.out, name))
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}
