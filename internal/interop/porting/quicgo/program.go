// Package program is a typical quic-go v0.65 program: an echo server and
// client over QUIC with 0-RTT-capable listeners and dials, stream and
// connection errors inspected by their codes, and an HTTP/3 server
// (ConfigureTLSConfig, ConnContext, a Logger that gets handler panics)
// with its client. ../ours/program.go is its port to
// github.com/quicstack/quic; porting_test.go checks that the two differ
// only by the changes docs/MIGRATING.md lists.
package program

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

type connKey struct{}

// Run runs the servers and clients on loopback and returns what the
// clients and servers saw. logs receives the HTTP/3 server's log.
func Run(ctx context.Context, cert tls.Certificate, roots *x509.CertPool, logs io.Writer) ([]string, error) {
	var out []string
	conf := &quic.Config{Allow0RTT: true, Versions: []quic.Version{quic.Version1}}

	// An echo server.
	ln, err := quic.ListenAddrEarly("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"echo"}}, conf)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	serverSaw := make(chan string, 3)
	go func() {
		conn, err := ln.Accept(ctx)
		if err != nil {
			serverSaw <- err.Error()
			return
		}
		serverSaw <- "server ALPN at Accept: " + conn.ConnectionState().TLS.NegotiatedProtocol
		for {
			str, err := conn.AcceptStream(ctx)
			var appErr *quic.ApplicationError
			if errors.As(err, &appErr) {
				serverSaw <- fmt.Sprintf("server: connection closed by the client: code %#x, %q", appErr.ErrorCode, appErr.ErrorMessage)
				return
			}
			if err != nil {
				serverSaw <- err.Error()
				return
			}
			go func() {
				_, err := io.Copy(str, str)
				var streamErr *quic.StreamError
				if errors.As(err, &streamErr) {
					serverSaw <- fmt.Sprintf("server: stream %d reset by the client: code %d", str.StreamID(), streamErr.ErrorCode)
					return
				}
				str.Close()
			}()
		}
	}()

	// Its client: ServerName comes from the address.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	conn, err := quic.DialAddrEarly(ctx, "localhost:"+port, &tls.Config{RootCAs: roots, NextProtos: []string{"echo"}}, conf)
	if err != nil {
		return nil, err
	}
	out = append(out, <-serverSaw)
	str, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	str.Write([]byte("hello, echo"))
	str.Close()
	reply, err := io.ReadAll(str)
	if err != nil {
		return nil, err
	}
	out = append(out, "echo: "+string(reply))
	out = append(out, "version: "+conn.ConnectionState().Version.String())
	out = append(out, "server name: "+conn.ConnectionState().TLS.ServerName)
	out = append(out, fmt.Sprintf("RTT measured: %v", conn.ConnectionStats().SmoothedRTT > 0))
	str2, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	str2.Write([]byte("abandoned"))
	str2.CancelWrite(42)
	out = append(out, <-serverSaw)
	conn.CloseWithError(0x42, "bye")
	out = append(out, <-serverSaw)

	// An HTTP/3 server on a listener of its own.
	tlsConf := http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	hln, err := quic.ListenAddrEarly("127.0.0.1:0", tlsConf, &quic.Config{Allow0RTT: true})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		from, _ := r.Context().Value(connKey{}).(string)
		fmt.Fprintf(w, "hello over %s, from %s", r.Proto, strings.Split(from, ":")[0])
	})
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) { panic("handler bug") })
	srv := &http3.Server{
		Handler: mux,
		Logger:  slog.New(slog.NewTextHandler(logs, nil)),
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c.RemoteAddr().String())
		},
	}
	go srv.ServeListener(hln)
	defer srv.Close()

	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	defer tr.Close()
	client := &http.Client{Transport: tr}
	_, hport, _ := net.SplitHostPort(hln.Addr().String())
	resp, err := client.Get("https://localhost:" + hport + "/hello")
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out = append(out, "http3: "+resp.Proto+" "+strconv.Itoa(resp.StatusCode)+" "+string(body))
	_, err = client.Get("https://localhost:" + hport + "/panic")
	var streamErr *quic.StreamError
	if errors.As(err, &streamErr) {
		out = append(out, fmt.Sprintf("http3: panicking handler: stream reset with %#x", uint64(streamErr.ErrorCode)))
	} else {
		out = append(out, fmt.Sprintf("http3: panicking handler: %v", err))
	}
	return out, nil
}
