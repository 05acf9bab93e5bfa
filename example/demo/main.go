// Command demo runs an HTTP/3 server and client of package http3 on the
// loopback interface and prints what they measured.
//
// Usage:
//
//	go run ./example/demo [-size n] [-v] [-qlog dir|off] [-cc name] [-keylog file]
//
// It needs no setup: it generates a self-signed ECDSA certificate for
// 127.0.0.1 and localhost in memory, starts an HTTP/3 server on a random
// UDP port of 127.0.0.1, and with an http.Client over http3.Transport that
// trusts only that certificate it fetches "/" (a small HTML page) and then
// the large body (10 MB of deterministic bytes by default, see -size),
// checking every byte. It then closes the client's transport and connects
// again with the same TLS session cache to fetch "/" once more, and
// reports whether the TLS session was resumed, as both ends saw it.
// Last it reconnects once more with an http3.Transport that sends its
// request in 0-RTT (Allow0RTT, same session cache) to a server that allows
// it (QUICConfig.Allow0RTT), and reports whether 0-RTT was accepted, as
// both ends saw it, with the handshake time and the time to the response
// headers. Every connection writes a qlog file on each side, in -qlog DIR,
// $QLOGDIR or a new temporary directory, whose name is printed.
//
// Every figure printed is measured by the run. Sizes use decimal units
// (1 KB = 1000 bytes). It exits with status 0 on success, 1 if anything
// failed and 2 on a usage error.
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/qlog"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exitCode reports err on stderr and returns the exit status: 0 for
// success and -h, 2 for a usage error, 1 for anything else.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(*usageError)):
		fmt.Fprintln(stderr, "demo:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "demo: FAILED:", err)
		return 1
	}
}

// defaultSize is the size of the large body: 10 MB.
const defaultSize = "10MB"

// page is the HTML served at "/".
const page = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>quicstack HTTP/3 demo</title></head>
<body>
<h1>Hello over HTTP/3</h1>
<p>This page was served by <code>github.com/quicstack/quic/http3</code>, a pure-Go
implementation of HTTP/3 (RFC 9114) and QPACK (RFC 9204) on QUIC (RFC 9000),
to a client using the same library's <code>http3.Transport</code>.</p>
<p>Protocol of this request: %s. TLS session resumed: %v.</p>
<p>Try the large body: <a href="%s">%s</a>.</p>
</body>
</html>
`

// seed makes the large body's bytes the same on every run.
var seed = [32]byte{'q', 'u', 'i', 'c', 's', 't', 'a', 'c', 'k', ' ', 'd', 'e', 'm', 'o'}

// bodyStream returns the deterministic bytes of the large body.
func bodyStream() io.Reader { return mrand.NewChaCha8(seed) }

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(out)
	sizeFlag := fs.String("size", defaultSize, "size of the large body: bytes, or with a KB, MB or GB suffix (decimal units)")
	verbose := fs.Bool("v", false, "print the response headers")
	common := cli.AddCommon(fs) // -cc, -qlog, -keylog
	qlogFlag := &common.Qlog
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: demo [flags]\n\n"+
			"demo starts an HTTP/3 server on a random port of 127.0.0.1 with a fresh\n"+
			"self-signed certificate, fetches \"/\" and a large body from it with an\n"+
			"http.Client over http3.Transport (checking every byte), reconnects to show\n"+
			"TLS session resumption and 0-RTT, and prints what it measured, with qlog\n"+
			"files of every connection. It needs no setup.\n\n"+
			"Without -qlog and $QLOGDIR the qlog files go to a new temporary directory;\n"+
			"-qlog off writes none.\n\n"+
			"Flags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err}
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Errorf("unexpected argument %q (see -h)", fs.Arg(0))}
	}
	cc, err := cli.Congestion(common.CC)
	if err != nil {
		return &usageError{err}
	}
	keyLog, err := cli.KeyLog(common.Keylog)
	if err != nil {
		return err
	}
	if keyLog != nil {
		defer keyLog.Close()
	}
	size, err := parseSize(*sizeFlag)
	if err != nil {
		return &usageError{fmt.Errorf("-size: %v", err)}
	}
	bigPath := "/" + sizeName(size)

	cert, pool, err := selfSignedCert()
	if err != nil {
		return fmt.Errorf("generating the certificate: %w", err)
	}

	// Server. The demo accepts the QUIC connections itself and hands each
	// to Server.ServeConn, so that it can report the QUIC version and the
	// server's view of resumption and 0-RTT for every connection (once its
	// handshake is complete).
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		resumed := r.TLS != nil && r.TLS.DidResume
		fmt.Fprintf(w, page, r.Proto, resumed, bigPath, bigPath)
	})
	mux.HandleFunc("GET "+bigPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		io.CopyN(w, bodyStream(), size) // a write error means the client went away
	})
	qlogDir := *qlogFlag
	if qlogDir == "" {
		qlogDir = os.Getenv("QLOGDIR")
	}
	if qlogDir == "" {
		if qlogDir, err = os.MkdirTemp("", "quicstack-demo-qlog-"); err != nil {
			return err
		}
	}
	var tracer qlog.TracerHook
	if qlogDir != "off" {
		tracer = qlog.DirTracer(qlogDir)
	}
	srv := &http3.Server{Handler: mux}
	serverTLS := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{http3.NextProtoH3}, KeyLogWriter: keyLog}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("server: listening: %w", err)
	}
	defer udp.Close()
	serverTransport := &quic.Transport{Conn: udp}
	defer serverTransport.Close()
	// ListenEarly: connections are handed to the server before their
	// handshake completes, so that it can answer requests sent in 0-RTT.
	l, err := serverTransport.ListenEarly(serverTLS, &quic.Config{Allow0RTT: true, Tracer: tracer, Congestion: cc})
	if err != nil {
		return fmt.Errorf("server: listening: %w", err)
	}
	defer l.Close()
	acceptCtx, stopAccept := context.WithCancel(context.Background())
	defer stopAccept()
	accepted := make(chan quic.ConnectionState, 4)
	go func() {
		for {
			qc, err := l.Accept(acceptCtx)
			if err != nil {
				return
			}
			go srv.ServeConn(qc)
			go func() {
				select {
				case <-qc.HandshakeComplete():
				case <-qc.Context().Done():
					return
				}
				select {
				case accepted <- qc.ConnectionState():
				default:
				}
			}()
		}
	}()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	}()
	addr := l.Addr().String()
	fmt.Fprintf(out, "server: listening on %s (HTTP/3, 0-RTT allowed; certificate: self-signed ECDSA P-256 for 127.0.0.1, localhost)\n", addr)

	// Client. The session cache is shared by the two transports so that
	// the second connection can resume the first one's TLS session.
	clientTLS := &tls.Config{
		RootCAs:            pool,
		ClientSessionCache: tls.NewLRUClientSessionCache(8),
		KeyLogWriter:       keyLog,
	}
	base := "https://" + addr

	handshakes := &cli.Handshakes{}
	clientConf := &quic.Config{Tracer: handshakes.Hook(tracer), Congestion: cc}
	tr1 := &http3.Transport{TLSClientConfig: clientTLS, QUICConfig: clientConf}
	defer tr1.Close()
	client := &http.Client{Transport: tr1, Timeout: 60 * time.Second}

	// GET / on a new connection: the time to the response headers includes
	// the QUIC and TLS handshake.
	start := time.Now()
	resp, err := client.Get(base + "/")
	if err != nil {
		return fmt.Errorf("GET /: %w", err)
	}
	headers := time.Since(start)
	body, err := readAll(resp)
	if err != nil {
		return fmt.Errorf("GET /: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("Hello over HTTP/3")) {
		return fmt.Errorf("GET /: status %s, %d bytes: not the demo page", resp.Status, len(body))
	}
	sc, err := serverState(accepted)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "GET /      %d  %-8s protocol %s  QUIC %s  %s  handshake %s  time to headers %s (new connection)\n",
		resp.StatusCode, formatBytes(int64(len(body))), resp.Proto, sc.Version, tlsSummary(resp.TLS), handshakeTime(handshakes, 0), formatMs(headers))
	printHeaders(out, *verbose, resp)

	// The large body on the same connection.
	start = time.Now()
	resp, err = client.Get(base + bigPath)
	if err != nil {
		return fmt.Errorf("GET %s: %w", bigPath, err)
	}
	n, err := verifyBody(resp.Body, size)
	resp.Body.Close()
	elapsed := time.Since(start)
	if err != nil {
		return fmt.Errorf("GET %s: %w", bigPath, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %s", bigPath, resp.Status)
	}
	if resp.ContentLength != size {
		return fmt.Errorf("GET %s: Content-Length %d, want %d", bigPath, resp.ContentLength, size)
	}
	mbps := float64(n) * 8 / elapsed.Seconds() / 1e6
	fmt.Fprintf(out, "GET %-6s %d  %-8s in %s = %.0f Mbit/s (body verified: %d bytes match)\n",
		bigPath, resp.StatusCode, formatBytes(n), formatMs(elapsed), mbps, n)
	printHeaders(out, *verbose, resp)
	if err := tr1.Close(); err != nil {
		return fmt.Errorf("closing the client transport: %w", err)
	}

	// A second transport, hence a new QUIC connection, with the same
	// session cache.
	tr2 := &http3.Transport{TLSClientConfig: clientTLS, QUICConfig: clientConf}
	defer tr2.Close()
	client = &http.Client{Transport: tr2, Timeout: 60 * time.Second}
	start = time.Now()
	resp, err = client.Get(base + "/")
	if err != nil {
		return fmt.Errorf("reconnect: GET /: %w", err)
	}
	headers = time.Since(start)
	body, err = readAll(resp)
	if err != nil {
		return fmt.Errorf("reconnect: GET /: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("Hello over HTTP/3")) {
		return fmt.Errorf("reconnect: GET /: status %s, %d bytes: not the demo page", resp.Status, len(body))
	}
	sc2, err := serverState(accepted)
	if err != nil {
		return fmt.Errorf("reconnect: %w", err)
	}
	resumed := "unknown (the response carries no TLS state)"
	if resp.TLS != nil {
		resumed = yesNo(resp.TLS.DidResume)
	}
	fmt.Fprintf(out, "reconnect: GET / %d  handshake %s  time to headers %s  TLS session resumed: %s (server: %s)\n",
		resp.StatusCode, handshakeTime(handshakes, 1), formatMs(headers), resumed, yesNo(sc2.TLS.DidResume))
	printHeaders(out, *verbose, resp)
	tr2.Close()

	// 0-RTT: a third transport, with the same session cache, that sends
	// GET and HEAD requests in 0-RTT on resumed connections.
	tr3 := &http3.Transport{TLSClientConfig: clientTLS, QUICConfig: clientConf, Allow0RTT: true}
	defer tr3.Close()
	client = &http.Client{Transport: tr3, Timeout: 60 * time.Second}
	start = time.Now()
	resp, err = client.Get(base + "/")
	if err != nil {
		return fmt.Errorf("0-RTT: GET /: %w", err)
	}
	headers = time.Since(start)
	body, err = readAll(resp)
	if err != nil {
		return fmt.Errorf("0-RTT: GET /: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("Hello over HTTP/3")) {
		return fmt.Errorf("0-RTT: GET /: status %s, %d bytes: not the demo page", resp.Status, len(body))
	}
	sc3, err := serverState(accepted)
	if err != nil {
		return fmt.Errorf("0-RTT: %w", err)
	}
	// The client's view comes from its handshake record (the tracer's
	// HandshakeComplete), the server's from its connection state.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	hs := handshakes.Wait(ctx, 3)
	cancel()
	if len(hs) < 3 {
		return errors.New("0-RTT: the client did not report its handshake")
	}
	fmt.Fprintf(out, "0-RTT: GET / %d  handshake %s  time to headers %s  request sent in 0-RTT, accepted: %s (server: %s)\n",
		resp.StatusCode, formatMs(hs[2].Duration), formatMs(headers), yesNo(hs[2].Used0RTT), yesNo(sc3.Used0RTT))
	printHeaders(out, *verbose, resp)
	fmt.Fprintln(out, "0-RTT: (on loopback a round trip costs almost nothing, so 0-RTT saves little time here; across a network it saves one RTT)")
	tr3.Close()
	if !hs[2].Used0RTT || !sc3.Used0RTT {
		return errors.New("the server did not accept 0-RTT")
	}
	if qlogDir == "off" {
		fmt.Fprintln(out, "qlog: off")
		return nil
	}
	// Closing the server's Transport waits for its connections to end,
	// which completes their qlog files; the clients' are complete already.
	stopAccept()
	srv.Close()
	serverTransport.Close()
	files, _ := filepath.Glob(filepath.Join(qlogDir, "*.sqlog"))
	fmt.Fprintf(out, "qlog: %d files in %s (one per connection and side; open them in https://qvis.quictools.info)\n", len(files), qlogDir)
	return nil
}

// handshakeTime formats the duration of the i-th handshake the client
// completed.
func handshakeTime(h *cli.Handshakes, i int) string {
	if l := h.List(); len(l) > i {
		return formatMs(l[i].Duration)
	}
	return "unknown"
}

// serverState returns the state of the connection the server accepted
// last.
func serverState(accepted <-chan quic.ConnectionState) (quic.ConnectionState, error) {
	select {
	case s := <-accepted:
		return s, nil
	case <-time.After(5 * time.Second):
		return quic.ConnectionState{}, errors.New("the server did not report the connection it accepted")
	}
}

// readAll reads and closes resp's body, checking its length against
// Content-Length when known.
func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	if resp.ContentLength >= 0 && int64(len(b)) != resp.ContentLength {
		return nil, fmt.Errorf("body of %d bytes, Content-Length %d", len(b), resp.ContentLength)
	}
	return b, nil
}

// verifyBody reads r to its end, comparing it with the deterministic
// stream as it goes, and returns the number of bytes read.
func verifyBody(r io.Reader, size int64) (int64, error) {
	want := bodyStream()
	got := make([]byte, 64<<10)
	exp := make([]byte, len(got))
	var n int64
	for {
		m, err := r.Read(got)
		if m > 0 {
			if n+int64(m) > size {
				return n, fmt.Errorf("body longer than %d bytes", size)
			}
			io.ReadFull(want, exp[:m])
			if i := mismatch(got[:m], exp[:m]); i >= 0 {
				return n, fmt.Errorf("body differs at byte %d", n+int64(i))
			}
			n += int64(m)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, fmt.Errorf("reading the body after %d bytes: %w", n, err)
		}
	}
	if n != size {
		return n, fmt.Errorf("body of %d bytes, want %d", n, size)
	}
	return n, nil
}

func mismatch(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// selfSignedCert returns a fresh self-signed ECDSA P-256 certificate for
// 127.0.0.1 and localhost, and a pool that trusts it.
func selfSignedCert() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "quicstack demo"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}

// parseSize parses "1000", "64KB", "10MB" or "1GB" (decimal units).
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes, optionally with KB, MB or GB", s)
	}
	if n > (1<<40)/mult {
		return 0, fmt.Errorf("size %q too large (at most 1 TB)", s)
	}
	return n * mult, nil
}

// sizeName names the large body's path: "10mb", "64kb", "1500".
func sizeName(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"gb", 1e9}, {"mb", 1e6}, {"kb", 1e3}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// formatBytes formats n in decimal units: "812 B", "1.2 KB", "10.0 MB".
func formatBytes(n int64) string {
	switch {
	case n < 1e3:
		return fmt.Sprintf("%d B", n)
	case n < 1e6:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

func formatMs(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// tlsSummary names the TLS version and cipher suite of a response.
func tlsSummary(s *tls.ConnectionState) string {
	if s == nil {
		return "TLS state unknown"
	}
	return tls.VersionName(s.Version) + " " + tls.CipherSuiteName(s.CipherSuite)
}

func printHeaders(out io.Writer, verbose bool, resp *http.Response) {
	if !verbose {
		return
	}
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(out, "    %s %s\n", resp.Proto, resp.Status)
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			fmt.Fprintf(out, "    %s: %s\n", k, v)
		}
	}
}
