// Command qlogexit uses the library as a short-lived program would, with
// a qlog file per connection, and exits as soon as the Close it calls
// returns: TestProgramsQlogComplete (../../programs_test.go) checks that
// the traces are complete.
//
//	qlogexit -qlog DIR dial HOST:PORT   quic.DialAddr, CloseWithError, exit
//	qlogexit -qlog DIR h3 URL           a GET with http3.Transport, Close, exit
//
// It trusts any certificate.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/qlog"
)

func main() {
	dir := flag.String("qlog", "", "qlog `dir`")
	flag.Parse()
	if err := run(*dir, flag.Arg(0), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "qlogexit:", err)
		os.Exit(1)
	}
	os.Exit(0) // at once: no deferred work, no waiting
}

func run(dir, mode, target string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conf := &quic.Config{Tracer: qlog.DirTracer(dir)}
	tc := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}}
	switch mode {
	case "dial":
		c, err := quic.DialAddr(ctx, target, tc, conf)
		if err != nil {
			return err
		}
		return c.CloseWithError(0, "bye")
	case "h3":
		tr := &http3.Transport{TLSClientConfig: tc, QUICConfig: conf}
		resp, err := (&http.Client{Transport: tr}).Get(target)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		return tr.Close()
	}
	return fmt.Errorf("unknown mode %q", mode)
}
