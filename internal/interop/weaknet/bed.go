package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"

	qgo "github.com/quic-go/quic-go"
	qgh3 "github.com/quic-go/quic-go/http3"
	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/congestion"
	oursh3 "github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/linkem"
)

// Ports of the servers inside namespace B.
const (
	portOursCubic = 4433
	portOursBBR   = 4434
	portOursReno  = 4435
	portQuicGo    = 4436
	portOursIW32  = 4437
	portTCP       = 443
)

// A bed is one emulated link (a linkem.Pair) with every server running in
// its side B; the clients run in side A. Cells run on a bed one at a
// time.
type bed struct {
	p      *linkem.Pair
	opts   *options
	pool   *x509.CertPool
	closes []func()
}

// handshakeTimeout bounds the QUIC handshakes as the request timeout
// bounds the requests: quic-go's and our default of 5 s would end
// handshakes that TCP, which retries its SYN for two minutes, would
// complete.
func (o *options) quicConf(cc string) *ours.Config {
	c := &ours.Config{HandshakeIdleTimeout: o.timeout, MaxIdleTimeout: o.timeout}
	switch cc {
	case "cubic":
		c.Congestion = congestion.NewCubic
	case "bbr":
		c.Congestion = congestion.NewBBR
	case "reno":
		c.Congestion = congestion.NewNewReno
	case "bbr-iw32":
		c.Congestion = func(cc congestion.ControllerConfig) congestion.Controller {
			cc.InitialWindowPackets = 32
			return congestion.NewBBR(cc)
		}
	}
	if o.qlogDir != "" {
		c.Tracer = qlogTracer(o.qlogDir, cc)
	}
	return c
}

func (o *options) quicGoConf() *qgo.Config {
	return &qgo.Config{HandshakeIdleTimeout: o.timeout, MaxIdleTimeout: o.timeout}
}

// newBed makes a link and starts the servers.
func newBed(o *options, seed uint64) (*bed, error) {
	p, err := linkem.New(linkem.Config{AB: o.params(0), BA: o.params(0), Seed: seed})
	if err != nil {
		return nil, err
	}
	b := &bed{p: p, opts: o}
	if err := b.start(); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *bed) close() {
	for i := len(b.closes) - 1; i >= 0; i-- {
		b.closes[i]()
	}
	b.p.Close()
}

// setLoss sets the random loss of both directions.
func (b *bed) setLoss(loss float64) error {
	for _, d := range []linkem.Dir{linkem.AB, linkem.BA} {
		if err := b.p.SetParams(d, b.opts.params(loss)); err != nil {
			return err
		}
	}
	return nil
}

func (b *bed) serverAddr(port int) string {
	return net.JoinHostPort(b.p.Addr(linkem.B).String(), strconv.Itoa(port))
}

// oursPort returns the port of our server with controller cc.
func oursPort(cc string) int {
	return map[string]int{"cubic": portOursCubic, "bbr": portOursBBR, "reno": portOursReno, "bbr-iw32": portOursIW32}[cc]
}

// handler answers /bytes/N with N bytes.
func handler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const prefix = "/bytes/"
		n, err := strconv.Atoi(r.URL.Path[min(len(prefix), len(r.URL.Path)):])
		if err != nil || n < 0 || n > len(body) {
			http.Error(w, "want /bytes/N", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(body[:n])
	})
}

func (b *bed) start() error {
	o := b.opts
	host := b.p.Addr(linkem.B).String()
	cert, pool, err := certs.SelfSigned(host)
	if err != nil {
		return err
	}
	b.pool = pool
	h := handler(o.body)
	tlsConf := func(protos ...string) *tls.Config {
		return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13, NextProtos: protos}
	}

	for _, s := range []struct {
		port int
		cc   string
	}{{portOursCubic, "cubic"}, {portOursBBR, "bbr"}, {portOursReno, "reno"}, {portOursIW32, "bbr-iw32"}} {
		pc, err := b.p.ListenPacket(linkem.B, "udp4", b.serverAddr(s.port))
		if err != nil {
			return err
		}
		srv := &oursh3.Server{Handler: h, TLSConfig: tlsConf("h3"), QUICConfig: o.quicConf(s.cc)}
		go srv.Serve(pc)
		b.closes = append(b.closes, func() { srv.Close(); pc.Close() })
	}

	pc, err := b.p.ListenPacket(linkem.B, "udp4", b.serverAddr(portQuicGo))
	if err != nil {
		return err
	}
	qsrv := &qgh3.Server{Handler: h, TLSConfig: tlsConf("h3"), QUICConfig: o.quicGoConf()}
	go qsrv.Serve(pc)
	b.closes = append(b.closes, func() { qsrv.Close(); pc.Close() })

	var ln net.Listener
	err = b.p.Do(linkem.B, func() (err error) {
		lc := net.ListenConfig{Control: setCC(o.tcpCC)}
		ln, err = lc.Listen(context.Background(), "tcp4", b.serverAddr(portTCP))
		return err
	})
	if err != nil {
		return err
	}
	ln = ccListener{ln, o.tcpCC}
	hsrv := &http.Server{Handler: h, TLSConfig: tlsConf("h2", "http/1.1"), ReadHeaderTimeout: 2 * o.timeout,
		ErrorLog: log.New(io.Discard, "", 0)} // failed handshakes are counted by the clients
	hsrv.Protocols = new(http.Protocols)
	hsrv.Protocols.SetHTTP1(true)
	hsrv.Protocols.SetHTTP2(true)
	go hsrv.ServeTLS(ln, "", "")
	b.closes = append(b.closes, func() { hsrv.Close() })
	return nil
}

// clientTLS is the clients' TLS configuration: TLS 1.3, no session
// cache (every new connection makes a full handshake, the cold start).
func (b *bed) clientTLS(protos ...string) *tls.Config {
	return &tls.Config{RootCAs: b.pool, ServerName: b.p.Addr(linkem.B).String(), MinVersion: tls.VersionTLS13, NextProtos: protos}
}

// A client fetches /bytes/N over one protocol; Close ends its connections.
type client interface {
	get(ctx context.Context, size int) error
	close()
}

// newClient returns a client of protocol p whose connections, once made,
// are kept (reuse) or made anew for every request.
func (b *bed) newClient(p proto, reuse bool) (client, error) {
	switch p.Kind {
	case "ours":
		return &oursClient{b: b, cc: p.CC, url: "https://" + b.serverAddr(oursPort(p.CC)) + "/bytes/", reuse: reuse}, nil
	case "quic-go":
		return &quicGoClient{b: b, url: "https://" + b.serverAddr(portQuicGo) + "/bytes/", reuse: reuse}, nil
	case "tcp":
		return &tcpClient{b: b, h2: p.CC == "h2", url: "https://" + b.serverAddr(portTCP) + "/bytes/", reuse: reuse}, nil
	}
	return nil, errors.New("unknown protocol " + p.Name)
}

// fetch does a GET with rt and reads the body, which must have size
// bytes.
func fetch(ctx context.Context, rt http.RoundTripper, url string, size int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+strconv.Itoa(size), nil)
	if err != nil {
		return err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	n, err := discard(resp.Body)
	if err != nil {
		return err
	}
	if n != int64(size) {
		return fmt.Errorf("%d bytes of %d", n, size)
	}
	return nil
}

// closeLater runs f in the background: closing a connection politely
// (and a quic.Transport, which waits for its closed connections) must not
// hold up the next request.
func closeLater(f func()) {
	go f()
}
