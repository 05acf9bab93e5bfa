// Command server serves HTTP/3 (ALPN "h3") and HTTP/0.9 over QUIC (ALPN
// "hq-interop", the QUIC interop runner's file protocol) on one UDP
// port, and optionally HTTP/1.1 and HTTP/2 over TCP on the same port
// number, advertising HTTP/3 with Alt-Svc.
//
// Usage:
//
//	go run ./example/server [flags]
//
// Besides the files under -root, it serves:
//
//	GET /          a small HTML page stating the protocol of the request
//	GET /bytes/N   N bytes (N up to 10 GB)
//	POST /echo     the request body, echoed
//
// Without -cert and -key it generates a self-signed ECDSA certificate for
// localhost, 127.0.0.1 and ::1, and prints the base64 SHA-256 hash of its
// public key, which Chrome accepts with
// --ignore-certificate-errors-spki-list. -qlog DIR (or $QLOGDIR) writes a
// qlog file per connection; -keylog FILE (or $SSLKEYLOGFILE) writes the
// TLS secrets for Wireshark, and turns GSO and GRO off so that a capture
// shows one QUIC datagram per UDP datagram (Wireshark cannot split the
// batches they make); -expvar ADDR serves the Transport's
// statistics as JSON at http://ADDR/debug/vars.
//
// It accepts 0-RTT (resumed clients' first requests) and listens early
// (quic.Transport.ListenEarly): a request that arrives in 0-RTT is
// answered at once, before the client's handshake completes; HTTP/3
// requests of unsafe methods in 0-RTT get 425 (Too Early).
//
// It runs until interrupted (SIGINT or SIGTERM) and then exits with
// status 0; it exits with 1 if it cannot start and 2 on a usage error.
package main

import (
	"context"
	"crypto/tls"
	"expvar"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/internal/serve"
	"github.com/quicstack/quic/quicexpvar"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, nil)
	os.Exit(cli.ExitCode("server", err, os.Stderr))
}

// run starts the server and serves until ctx is done. ready, if not nil,
// is called with the UDP address once the server accepts connections.
func run(ctx context.Context, args []string, out io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(out)
	listen := fs.String("listen", "127.0.0.1:4433", "UDP `address` to listen on (and TCP with -tcp)")
	certFile := fs.String("cert", "", "PEM certificate chain `file` (default: a fresh self-signed certificate)")
	keyFile := fs.String("key", "", "PEM private key `file` for -cert")
	root := fs.String("root", "", "`directory` to serve files from (default: none, only the built-in pages)")
	common := cli.AddCommon(fs) // -cc, -qlog, -keylog
	ccName, qlogDir, keylogFile := &common.CC, &common.Qlog, &common.Keylog
	retry := fs.Bool("retry", false, "validate every client's address with a Retry packet first")
	tcp := fs.Bool("tcp", false, "also serve HTTP/1.1 and HTTP/2 over TCP on the same port, with Alt-Svc")
	expvarAddr := fs.String("expvar", "", "serve the QUIC statistics as JSON at http://`addr`/debug/vars")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: server [flags]\n\n"+
			"server serves HTTP/3 (h3) and HTTP/0.9 over QUIC (hq-interop) on one UDP port:\n"+
			"GET / (a page naming the protocol), GET /bytes/N, POST /echo and the files\n"+
			"under -root. It runs until interrupted.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	cc, err := cli.Congestion(*ccName)
	if err != nil {
		return err
	}
	if (*certFile == "") != (*keyFile == "") {
		return cli.Usagef("-cert and -key go together")
	}
	if *root != "" {
		if st, err := os.Stat(*root); err != nil || !st.IsDir() {
			return cli.Usagef("-root %q is not a directory", *root)
		}
	}

	var cert tls.Certificate
	if *certFile != "" {
		if cert, err = certs.Load(*certFile, *keyFile); err != nil {
			return fmt.Errorf("loading the certificate: %w", err)
		}
	} else {
		if cert, _, err = certs.SelfSigned(certs.DefaultHosts...); err != nil {
			return fmt.Errorf("generating a certificate: %w", err)
		}
		fmt.Fprintf(out, "server: self-signed ECDSA certificate for %s\n", strings.Join(certs.DefaultHosts, ", "))
		fmt.Fprintf(out, "server: SPKI SHA-256 (base64): %s\n", certs.SPKIHash(cert.Leaf))
	}
	kl, err := cli.KeyLog(*keylogFile)
	if err != nil {
		return fmt.Errorf("opening the key log: %w", err)
	}
	if kl != nil {
		defer kl.Close()
	}
	srv, err := serve.Start(serve.Options{Addr: *listen, Cert: cert, Root: *root, KeyLog: kl,
		Config: cli.Config(cc, *qlogDir), Retry: *retry, TCP: *tcp, NoOffload: kl != nil})
	if err != nil {
		return err
	}
	defer srv.Close()
	addr, tr := srv.Addr, srv.Transport
	protos := "UDP: h3, hq-interop"
	if *tcp {
		protos += "; TCP: h2, http/1.1"
	}
	if *expvarAddr != "" {
		el, err := net.Listen("tcp", *expvarAddr)
		if err != nil {
			return fmt.Errorf("-expvar: %w", err)
		}
		publishStats(tr)
		mux := http.NewServeMux()
		mux.Handle("/debug/vars", expvar.Handler())
		es := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go es.Serve(el)
		defer es.Close()
		fmt.Fprintf(out, "server: statistics at http://%s/debug/vars\n", el.Addr())
	}
	fmt.Fprintf(out, "server: listening on %s (%s), congestion control %s, Retry %v\n", addr, protos, strings.ToLower(*ccName), *retry)
	if d := cli.QlogDir(*qlogDir); d != "" {
		fmt.Fprintf(out, "server: qlog files in %s\n", d)
	}
	if ready != nil {
		ready(addr.String())
	}

	<-ctx.Done()
	st := tr.Stats()
	fmt.Fprintf(out, "server: shutting down; %d handshakes completed, %d failed, %d with 0-RTT\n",
		st.HandshakesCompleted, st.HandshakesFailed, st.ZeroRTTAccepted)
	return nil
}

// statsOf is the Transport whose statistics -expvar serves; expvar
// variables cannot be unpublished, so one variable serves the latest.
var (
	statsOf     atomic.Pointer[quic.Transport]
	publishOnce sync.Once
)

func publishStats(tr *quic.Transport) {
	statsOf.Store(tr)
	publishOnce.Do(func() {
		expvar.Publish("quic", quicexpvar.Func(func() quic.TransportStats { return statsOf.Load().Stats() }))
	})
}
