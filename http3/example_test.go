package http3_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
)

// exampleCert returns a certificate for localhost and a client TLS
// configuration that trusts it. Use your own certificates.
func exampleCert() (tls.Certificate, *tls.Config) {
	cert, pool, err := certs.SelfSigned("localhost", "127.0.0.1")
	if err != nil {
		log.Fatal(err)
	}
	return cert, &tls.Config{RootCAs: pool}
}

// startServer serves srv on a loopback UDP port and returns the port's
// https URL.
func startServer(srv *http3.Server) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(pc)
	return "https://localhost:" + fmt.Sprint(pc.LocalAddr().(*net.UDPAddr).Port)
}

// An HTTP/3 server and a net/http client using it, on loopback. The
// handler is an ordinary http.Handler.
func ExampleServer() {
	cert, clientTLS := exampleCert()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello over "+r.Proto)
	})
	srv := &http3.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	defer srv.Close()
	url := startServer(srv)

	tr := &http3.Transport{TLSClientConfig: clientTLS}
	defer tr.Close()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	resp, err := client.Get(url + "/")
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Proto, resp.Status, string(body))
	// Output: HTTP/3.0 200 OK hello over HTTP/3.0
}

// A client that sends GET requests in 0-RTT when it reconnects: the
// second connection resumes the first one's TLS session.
func ExampleTransport() {
	cert, clientTLS := exampleCert()
	srv := &http3.Server{
		Handler:    http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		TLSConfig:  &tls.Config{Certificates: []tls.Certificate{cert}},
		QUICConfig: &quic.Config{Allow0RTT: true},
	}
	defer srv.Close()
	url := startServer(srv)

	tr := &http3.Transport{TLSClientConfig: clientTLS, Allow0RTT: true}
	defer tr.Close()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	for i := range 2 {
		resp, err := client.Get(url + "/")
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Printf("request %d: %s, resumed session: %v\n", i+1, resp.Status, resp.TLS.DidResume)
		tr.CloseIdleConnections() // the next request makes a new connection
	}
	// Output:
	// request 1: 200 OK, resumed session: false
	// request 2: 200 OK, resumed session: true
}

// A server handler that takes over an extended CONNECT request's stream
// (RFC 9220) and echoes its capsules, and a client opening such a stream
// with Transport.OpenRequestStream.
func ExampleHTTPStreamer() {
	cert, clientTLS := exampleCert()
	srv := &http3.Server{
		TLSConfig:             &tls.Config{Certificates: []tls.Certificate{cert}},
		EnableExtendedConnect: true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodConnect || r.Header.Get(":protocol") != "my-protocol" {
				w.WriteHeader(http.StatusNotImplemented)
				return
			}
			str := w.(http3.HTTPStreamer).HTTPStream() // sends 200
			defer str.Close()
			for {
				c, err := str.ReadCapsule(0)
				if err != nil {
					return
				}
				str.WriteCapsule(c.Type, c.Value) // echo
			}
		}),
	}
	defer srv.Close()
	url := startServer(srv)

	tr := &http3.Transport{TLSClientConfig: clientTLS}
	defer tr.Close()
	req, _ := http.NewRequest(http.MethodConnect, url+"/tunnel", nil)
	req.Header.Set(":protocol", "my-protocol")
	resp, str, err := tr.OpenRequestStream(req)
	if err != nil {
		log.Fatal(err)
	}
	defer str.Close()
	fmt.Println(resp.Status)
	str.WriteCapsule(0x2a, []byte("a capsule"))
	c, err := str.ReadCapsule(0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("capsule %#x %q\n", c.Type, c.Value)
	// Output:
	// 200 OK
	// capsule 0x2a "a capsule"
}

// HTTP datagrams (RFC 9297) on an extended CONNECT stream: the server
// answers each datagram; the client sends again until an answer comes,
// since datagrams may be lost.
func ExampleTransport_OpenRequestStream() {
	cert, clientTLS := exampleCert()
	srv := &http3.Server{
		TLSConfig:             &tls.Config{Certificates: []tls.Certificate{cert}},
		EnableExtendedConnect: true,
		EnableDatagrams:       true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			str := w.(http3.HTTPStreamer).HTTPStream()
			defer str.Close()
			for {
				d, err := str.ReceiveDatagram(r.Context())
				if err != nil {
					return
				}
				str.SendDatagram(append([]byte("echo: "), d...))
			}
		}),
	}
	defer srv.Close()
	url := startServer(srv)

	tr := &http3.Transport{TLSClientConfig: clientTLS, EnableDatagrams: true}
	defer tr.Close()
	req, _ := http.NewRequest(http.MethodConnect, url+"/tunnel", nil)
	req.Header.Set(":protocol", "my-protocol")
	resp, str, err := tr.OpenRequestStream(req)
	if err != nil {
		log.Fatal(err)
	}
	defer str.Close()
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("refused: %s", resp.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		str.SendDatagram([]byte("a datagram"))
		wait, stop := context.WithTimeout(ctx, 200*time.Millisecond)
		d, err := str.ReceiveDatagram(wait)
		stop()
		if err == nil {
			fmt.Printf("%s\n", d)
			break
		}
		if ctx.Err() != nil {
			log.Fatal(err)
		}
	}
	// Output: echo: a datagram
}

// HTTP/1.1 and HTTP/2 on TCP port 443 with an Alt-Svc header pointing
// browsers to HTTP/3 on UDP port 443. (Not run: it needs port 443 and
// certificate files.)
func ExampleListenAndServeTLS() {
	log.Fatal(http3.ListenAndServeTLS(":443", "cert.pem", "key.pem", http.DefaultServeMux))
}
