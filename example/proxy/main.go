// Command proxy is a reverse proxy that serves HTTP/3 (and HTTP/1.1 and
// HTTP/2 over TCP on the same port number, advertising HTTP/3 with
// Alt-Svc) in front of an HTTP/1.1 or HTTP/2 backend, the way operators
// put Caddy in front of nginx.
//
// Usage:
//
//	go run ./example/proxy -backend http://127.0.0.1:8080 [flags]
//
// It forwards with net/http/httputil.ReverseProxy and:
//
//   - accepts 0-RTT requests (-0rtt, on by default) for safe methods
//     only: package http3 answers others in 0-RTT with 425 (Too Early);
//     a request forwarded before the client's handshake completed carries
//     "Early-Data: 1" to the backend (RFC 8470, Section 5.1), and a 425
//     from the backend makes the proxy wait for the handshake and send
//     the request again (Section 5.2), or return the 425 if the handshake
//     does not complete within 10 seconds;
//   - closes the ways to smuggle requests between HTTP/3 and HTTP/1.1:
//     HTTP/3 requests with connection-specific fields or
//     Transfer-Encoding are malformed (RFC 9114, Section 4.2) and reset by
//     package http3; a body longer or shorter than its Content-Length
//     fails the request (bodies up to -max-buffer are read whole and
//     checked before the backend sees them, -max-buffered bytes at most
//     at once; others are streamed, their last bytes held back until the
//     body ends, and the backend's request is aborted on a mismatch);
//     hop-by-hop fields
//     are removed; Forwarded and X-Forwarded-For/-Host/-Proto are set by
//     the proxy, never passed on from the client;
//   - writes an access log (-access-log, the Combined Log Format plus the
//     time taken, whether the request came in 0-RTT and whether it was
//     retried after a 425);
//   - reloads -cert and -key on SIGHUP without dropping connections;
//   - serves its statistics as JSON at http://ADDR/stats (-stats ADDR):
//     requests by protocol and status class, 0-RTT requests, 425
//     retries, backend errors, bodies refused, and the QUIC Transport's
//     counters.
//
// Errors worth an operator's attention (handler panics, connections
// closed for protocol errors, backend failures) go to stderr through a
// log/slog text logger. It runs until interrupted (SIGINT or SIGTERM),
// then shuts down gracefully and exits with status 0; it exits with 1 if
// it cannot start and 2 on a usage error.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, hup, nil)
	os.Exit(cli.ExitCode("proxy", err, os.Stderr))
}

// started is what run tells its caller once it serves.
type started struct {
	addr   string // the UDP (and TCP) address
	reload func() error
	stats  *stats
}

// run serves until ctx is done. Each value on hup reloads the
// certificate; ready, if not nil, is called once the proxy serves.
func run(ctx context.Context, args []string, out, errOut io.Writer, hup <-chan os.Signal, ready func(started)) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.SetOutput(out)
	listen := fs.String("listen", "127.0.0.1:8443", "UDP `address` for HTTP/3, and TCP for HTTP/1.1 and HTTP/2 (see -tcp)")
	backendFlag := fs.String("backend", "", "the backend's `URL`: http:// (HTTP/1.1, or HTTP/2 with -backend-h2c) or https:// (HTTP/2 or HTTP/1.1 by ALPN)")
	h2c := fs.Bool("backend-h2c", false, "speak HTTP/2 without TLS (h2c) to an http:// backend")
	backendCA := fs.String("backend-ca", "", "trust the PEM CA certificates in `file` for an https:// backend (default: the system's)")
	backendInsecure := fs.Bool("backend-insecure", false, "do not verify an https:// backend's certificate")
	certFile := fs.String("cert", "", "PEM certificate chain `file`, reloaded on SIGHUP (default: a fresh self-signed certificate)")
	keyFile := fs.String("key", "", "PEM private key `file` for -cert")
	tcp := fs.Bool("tcp", true, "also serve HTTP/1.1 and HTTP/2 over TCP on the same port, with Alt-Svc")
	zeroRTT := fs.Bool("0rtt", true, "accept 0-RTT requests of safe methods")
	accessFile := fs.String("access-log", "-", "write the access log to `file` (\"-\": standard output; \"\": none)")
	statsAddr := fs.String("stats", "", "serve the statistics as JSON at http://`addr`/stats")
	maxBuffer := fs.Int64("max-buffer", 1<<20, "request bodies up to this many `bytes` are read whole and checked against Content-Length before forwarding")
	maxBuffered := fs.Int64("max-buffered", 64<<20, "at most this many `bytes` of request bodies are held at once (-max-buffer); past it, bodies are streamed")
	common := cli.AddCommon(fs) // -cc, -qlog, -keylog
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: proxy -backend URL [flags]\n\n"+
			"proxy serves HTTP/3 (and HTTP/1.1 and HTTP/2 over TCP with Alt-Svc) in front\n"+
			"of an HTTP/1.1 or HTTP/2 backend. It runs until interrupted; SIGHUP reloads\n"+
			"-cert and -key.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	backend, err := url.Parse(*backendFlag)
	if err != nil || (backend.Scheme != "http" && backend.Scheme != "https") || backend.Host == "" {
		return &cli.UsageError{Err: errNoBackend}
	}
	if (*certFile == "") != (*keyFile == "") {
		return cli.Usagef("-cert and -key go together")
	}
	conf, kl, err := common.Setup()
	if err != nil {
		return err
	}
	if kl != nil {
		defer kl.Close()
	}
	logger := slog.New(slog.NewTextHandler(errOut, nil))

	cert := &certificate{certFile: *certFile, keyFile: *keyFile}
	if *certFile != "" {
		if err := cert.reload(); err != nil {
			return fmt.Errorf("loading the certificate: %w", err)
		}
	} else {
		c, _, err := certs.SelfSigned(certs.DefaultHosts...)
		if err != nil {
			return fmt.Errorf("generating a certificate: %w", err)
		}
		cert.cur.Store(&c)
		fmt.Fprintf(out, "proxy: self-signed ECDSA certificate for %s\n", strings.Join(certs.DefaultHosts, ", "))
		fmt.Fprintf(out, "proxy: SPKI SHA-256 (base64): %s\n", certs.SPKIHash(c.Leaf))
	}

	bt, err := backendTransport(backend, *h2c, *backendCA, *backendInsecure)
	if err != nil {
		return err
	}
	defer bt.CloseIdleConnections()
	var access *accessLog
	switch *accessFile {
	case "":
	case "-":
		access = &accessLog{log.New(out, "", 0)}
	default:
		f, err := os.OpenFile(*accessFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("-access-log: %w", err)
		}
		defer f.Close()
		access = &accessLog{log.New(f, "", 0)}
	}
	st := newStats()
	handler := newProxy(backend, bt, *maxBuffer, *maxBuffered, access, st, logger)

	// HTTP/3: a Transport of its own, listening early so that 0-RTT
	// requests are served at once.
	udp, err := net.ListenPacket("udp", *listen)
	if err != nil {
		return err
	}
	defer udp.Close()
	qtr := &quic.Transport{Conn: udp}
	defer qtr.Close()
	st.quic = qtr
	conf.Allow0RTT = *zeroRTT
	if handshakeTimeout > 0 {
		conf.HandshakeIdleTimeout = handshakeTimeout
	}
	tlsConf := http3.ConfigureTLSConfig(&tls.Config{GetCertificate: cert.get, KeyLogWriter: kl})
	l, err := qtr.ListenEarly(tlsConf, conf)
	if err != nil {
		return err
	}
	h3 := &http3.Server{
		Handler: handler,
		Logger:  logger,
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			return context.WithValue(ctx, quicConnKey{}, c)
		},
	}
	go h3.ServeListener(l)
	addr := udp.LocalAddr().String()
	protos := "UDP: h3"

	var tcpSrv *http.Server
	if *tcp {
		tl, err := net.Listen("tcp", addr)
		if err != nil {
			h3.Close()
			return fmt.Errorf("TCP: %w", err)
		}
		tcpSrv = &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h3.SetQUICHeaders(w.Header()) // Alt-Svc: h3=":port"; ma=86400
				handler.ServeHTTP(w, r)
			}),
			TLSConfig:         &tls.Config{GetCertificate: cert.get, KeyLogWriter: kl, NextProtos: []string{"h2", "http/1.1"}},
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		}
		go tcpSrv.ServeTLS(tl, "", "")
		protos += "; TCP: h2, http/1.1"
	}
	if *statsAddr != "" {
		sl, err := net.Listen("tcp", *statsAddr)
		if err != nil {
			return fmt.Errorf("-stats: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/stats", st)
		ss := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go ss.Serve(sl)
		defer ss.Close()
		fmt.Fprintf(out, "proxy: statistics at http://%s/stats\n", sl.Addr())
	}
	fmt.Fprintf(out, "proxy: listening on %s (%s), forwarding to %s; 0-RTT %v\n", addr, protos, backend, *zeroRTT)
	if ready != nil {
		ready(started{addr: addr, reload: cert.reload, stats: st})
	}

	for {
		select {
		case <-hup:
			if err := cert.reload(); err != nil {
				logger.Error("proxy: reloading the certificate failed; the old one stays", "error", err)
			} else {
				logger.Info("proxy: certificate reloaded", "cert", *certFile)
			}
			continue
		case <-ctx.Done():
		}
		break
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if tcpSrv != nil {
		tcpSrv.Shutdown(sctx)
	}
	if err := h3.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	fmt.Fprintf(out, "proxy: shut down\n")
	return nil
}

// backendTransport is the http.Transport for the backend: HTTP/1.1 to an
// http:// URL (HTTP/2 with h2c), HTTP/2 or HTTP/1.1 by ALPN to https://.
func backendTransport(backend *url.URL, h2c bool, caFile string, insecure bool) (*http.Transport, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.MaxIdleConnsPerHost = 100
	t.TLSClientConfig = &tls.Config{InsecureSkipVerify: insecure}
	if caFile != "" {
		pool, err := certs.LoadPool(caFile)
		if err != nil {
			return nil, cli.Usagef("-backend-ca: %v", err)
		}
		t.TLSClientConfig.RootCAs = pool
	}
	if h2c {
		if backend.Scheme != "http" {
			return nil, cli.Usagef("-backend-h2c needs an http:// backend")
		}
		t.Protocols = new(http.Protocols)
		t.Protocols.SetUnencryptedHTTP2(true)
	}
	return t, nil
}
