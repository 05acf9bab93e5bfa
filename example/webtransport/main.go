// Command webtransport is a WebTransport echo server and client
// (draft-ietf-webtrans-http3, package webtransport).
//
// Usage:
//
//	go run ./example/webtransport [-listen ADDR]               # server
//	go run ./example/webtransport -dial https://HOST:PORT/echo # client
//
// The server echoes, in each session at /echo, every bidirectional stream
// on itself, every unidirectional stream on a new one, and every datagram.
// GET / serves a page whose script does the same from a browser with the
// JavaScript WebTransport API, trusting the server's self-signed
// certificate through serverCertificateHashes, and writes what came back
// into the page (internal/interop/chromium/webtransport.sh runs it in
// headless Chromium). The server prints the certificate's SPKI hash for
// Chrome's --ignore-certificate-errors-spki-list, which the page itself
// needs to load.
//
// The client opens a session, echoes a bidirectional stream, a
// unidirectional stream and a datagram, and prints the results. With
// -insecure it does not check the server's certificate.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/webtransport"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	listen := flag.String("listen", "127.0.0.1:4433", "UDP address to serve on")
	dial := flag.String("dial", "", "URL of a WebTransport echo server to run the client against")
	insecure := flag.Bool("insecure", false, "client: do not verify the server's certificate")
	common := cli.AddCommon(flag.CommandLine) // -cc, -qlog, -keylog
	flag.Parse()
	conf, kl, err := common.Setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "webtransport:", err)
		os.Exit(2)
	}
	if kl != nil {
		defer kl.Close()
	}
	if *dial != "" {
		err = runClient(ctx, *dial, *insecure, conf, kl, os.Stdout)
	} else {
		err = runServer(ctx, *listen, conf, kl, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "webtransport:", err)
		os.Exit(1)
	}
}

// runServer serves the echo and the page until ctx ends.
func runServer(ctx context.Context, addr string, conf *quic.Config, keyLog io.Writer, out io.Writer) error {
	cert, _, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "webtransport: SPKI SHA-256 (base64): %s\n", certs.SPKIHash(cert.Leaf))
	hash := sha256.Sum256(cert.Leaf.Raw)
	wt := &webtransport.Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		sess, err := wt.Upgrade(w, r)
		if err != nil {
			return
		}
		fmt.Fprintf(out, "webtransport: session %d from %s (%s)\n", sess.SessionID(), r.RemoteAddr, r.Header.Get(":protocol"))
		go func() {
			Echo(sess)
			fmt.Fprintf(out, "webtransport: session %d ended: %v\n", sess.SessionID(), context.Cause(sess.Context()))
		}()
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, strings.Replace(page, "HASH", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(hash[:])), ","), "[]"), 1))
	})
	srv := &http3.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, KeyLogWriter: keyLog}, QUICConfig: conf}
	wt.ConfigureServer(srv)
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "webtransport: listening on %s\n", pc.LocalAddr())
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

// Echo serves a session until it ends: each bidirectional stream is
// echoed on itself, each unidirectional stream on a new one, and each
// datagram back.
func Echo(sess *webtransport.Session) {
	ctx := sess.Context()
	go func() {
		for {
			str, err := sess.AcceptStream(ctx)
			if err != nil {
				return
			}
			go func() {
				io.Copy(str, str)
				str.CloseWrite()
			}()
		}
	}()
	go func() {
		for {
			str, err := sess.AcceptUniStream(ctx)
			if err != nil {
				return
			}
			go func() {
				b, err := io.ReadAll(io.LimitReader(str, 1<<20))
				if err != nil {
					return
				}
				out, err := sess.OpenUniStreamSync(ctx)
				if err != nil {
					return
				}
				out.Write(b)
				out.Close()
			}()
		}
	}()
	for {
		d, err := sess.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		sess.SendDatagram(d)
	}
}

// runClient echoes a stream of each kind and a datagram through the
// server at url.
func runClient(ctx context.Context, url string, insecure bool, conf *quic.Config, keyLog io.Writer, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d := &webtransport.Dialer{TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure, KeyLogWriter: keyLog}, QUICConfig: conf}
	defer d.Close()
	_, sess, err := d.Dial(ctx, url, nil)
	if err != nil {
		return err
	}
	defer sess.CloseWithError(0, "done")
	str, err := sess.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	str.Write([]byte("hello over a bidirectional stream"))
	str.CloseWrite()
	b, err := io.ReadAll(str)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "bidi: %s\n", b)
	u, err := sess.OpenUniStreamSync(ctx)
	if err != nil {
		return err
	}
	u.Write([]byte("hello over a unidirectional stream"))
	u.Close()
	in, err := sess.AcceptUniStream(ctx)
	if err != nil {
		return err
	}
	if b, err = io.ReadAll(in); err != nil {
		return err
	}
	fmt.Fprintf(out, "uni: %s\n", b)
	got := make(chan []byte, 1)
	go func() {
		if d, err := sess.ReceiveDatagram(ctx); err == nil {
			got <- d
		}
	}()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if err := sess.SendDatagram([]byte("hello in a datagram")); err != nil {
			return err
		}
		select {
		case d := <-got:
			fmt.Fprintf(out, "datagram: %s\n", d)
			return nil
		case <-t.C:
		case <-ctx.Done():
			return errors.New("no datagram came back")
		}
	}
}

// page is the browser's side of the echo: it writes "bidi=... uni=...
// datagram=... closed=..." into #result.
const page = `<!DOCTYPE html><html><body><p id="result">pending</p><script>
(async () => {
  const out = document.getElementById("result");
  const enc = new TextEncoder(), dec = new TextDecoder();
  const readAll = async (readable) => {
    const r = readable.getReader(); let s = "";
    for (;;) { const {value, done} = await r.read(); if (done) return s; s += dec.decode(value, {stream: true}); }
  };
  try {
    const wt = new WebTransport("https://" + location.host + "/echo",
      {serverCertificateHashes: [{algorithm: "sha-256", value: new Uint8Array([HASH])}]});
    await wt.ready;
    const bidi = await wt.createBidirectionalStream();
    const bw = bidi.writable.getWriter();
    await bw.write(enc.encode("bidi from chromium")); await bw.close();
    const bidiGot = await readAll(bidi.readable);
    const uni = await wt.createUnidirectionalStream();
    const uw = uni.getWriter(); await uw.write(enc.encode("uni from chromium")); await uw.close();
    const inUni = await wt.incomingUnidirectionalStreams.getReader().read();
    const uniGot = await readAll(inUni.value);
    const dw = wt.datagrams.writable.getWriter();
    const dr = wt.datagrams.readable.getReader();
    let dgGot = "none";
    const tick = setInterval(() => dw.write(enc.encode("datagram from chromium")), 100);
    dw.write(enc.encode("datagram from chromium"));
    const d = await dr.read(); clearInterval(tick); dgGot = dec.decode(d.value);
    wt.close({closeCode: 7, reason: "bye"});
    const closed = await wt.closed;
    out.textContent = "bidi=" + bidiGot + "; uni=" + uniGot + "; datagram=" + dgGot + "; closed=" + closed.closeCode;
  } catch (e) { out.textContent = "error: " + e; }
})();
</script></body></html>
`
