// Package serve is the server of the example programs: HTTP/3 (ALPN "h3")
// and HTTP/0.9 over QUIC (ALPN "hq-interop") on one UDP port, dispatched
// by each connection's ALPN protocol, with the same handler, and
// optionally HTTP/1.1 and HTTP/2 over TCP on the same port number,
// advertising HTTP/3 with Alt-Svc.
package serve

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/hq"
)

// MaxBytes bounds GET /bytes/N.
const MaxBytes = 10_000_000_000

// Options configure a Server.
type Options struct {
	// Addr is the UDP address to listen on ("127.0.0.1:0" for any port).
	Addr string
	// Cert is the server's certificate.
	Cert tls.Certificate
	// Root, if not empty, is a directory whose files are served.
	Root string
	// KeyLog, if not nil, receives the TLS secrets.
	KeyLog io.Writer
	// Config configures QUIC; Allow0RTT is set on a copy.
	Config *quic.Config
	// Retry validates every client's address with a Retry packet.
	Retry bool
	// TCP also serves HTTP/1.1 and HTTP/2 over TCP on the same port.
	TCP bool
	// NoOffload turns GSO and GRO off (quic.Transport.DisableGSO and
	// DisableGRO), so that a packet capture shows one QUIC datagram per
	// UDP datagram: Wireshark cannot split the batches the kernel sends
	// and delivers whole with them.
	NoOffload bool
}

// A Server serves until Close.
type Server struct {
	// Transport is the QUIC Transport, for its statistics.
	Transport *quic.Transport
	// Addr is the UDP address (and TCP address with Options.TCP).
	Addr *net.UDPAddr

	udp    net.PacketConn
	h3     *http3.Server
	tcp    *http.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// Start starts a server.
func Start(o Options) (*Server, error) {
	udp, err := net.ListenPacket("udp", o.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{udp: udp, Addr: udp.LocalAddr().(*net.UDPAddr), done: make(chan struct{})}
	s.Transport = &quic.Transport{Conn: udp, DisableGSO: o.NoOffload, DisableGRO: o.NoOffload}
	if o.Retry {
		s.Transport.RequireAddressValidation = func(net.Addr) bool { return true }
	}
	var conf quic.Config
	if o.Config != nil {
		conf = *o.Config
	}
	conf.Allow0RTT = true
	tlsConf := &tls.Config{
		Certificates: []tls.Certificate{o.Cert},
		NextProtos:   []string{http3.NextProtoH3, hq.ALPN},
		KeyLogWriter: o.KeyLog,
	}
	// ListenEarly: a request sent in 0-RTT is served at once, and its
	// response sent before the client's handshake completes (0.5-RTT),
	// rather than a round trip later. Accept returns each connection
	// once its ClientHello chose the application protocol.
	l, err := s.Transport.ListenEarly(tlsConf, &conf)
	if err != nil {
		udp.Close()
		return nil, err
	}
	handler := Handler(o.Root)
	s.h3 = &http3.Server{Handler: handler}
	if o.TCP {
		tl, err := net.Listen("tcp", s.Addr.String())
		if err != nil {
			s.Transport.Close()
			udp.Close()
			return nil, fmt.Errorf("TCP: %w", err)
		}
		s.tcp = &http.Server{
			Handler:           AltSvc(handler, s.Addr.Port),
			TLSConfig:         &tls.Config{Certificates: []tls.Certificate{o.Cert}, KeyLogWriter: o.KeyLog},
			ReadHeaderTimeout: 10 * time.Second,
		}
		go s.tcp.ServeTLS(tl, "", "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		defer close(s.done)
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			switch c.ConnectionState().TLS.NegotiatedProtocol {
			case http3.NextProtoH3:
				go s.h3.ServeConn(c)
			case hq.ALPN:
				go hq.ServeConn(ctx, c, handler)
			default:
				c.CloseWithError(0, "no application protocol")
			}
		}
	}()
	return s, nil
}

// Close stops the server and closes its connections.
func (s *Server) Close() error {
	s.cancel()
	<-s.done
	s.h3.Close()
	if s.tcp != nil {
		s.tcp.Close()
	}
	s.Transport.Close()
	return s.udp.Close()
}

// Handler returns the server's pages, and the files under root if root
// is not empty:
//
//	GET /          a small HTML page stating the protocol of the request
//	GET /bytes/N   N bytes
//	POST /echo     the request body
func Handler(root string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>quicstack</title></head>\n"+
			"<body>\n<h1>quicstack server</h1>\n<p>This request arrived over %s.</p>\n"+
			"<p>Try <a href=\"/bytes/1000000\">/bytes/1000000</a>; POST to /echo to get your body back.</p>\n</body>\n</html>\n", r.Proto)
	})
	mux.HandleFunc("GET /bytes/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.PathValue("n"), 10, 64)
		if err != nil || n < 0 || n > MaxBytes {
			http.Error(w, "want /bytes/N with 0 <= N <= 10000000000", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		buf := make([]byte, min(n, 64<<10))
		for i := range buf {
			buf[i] = byte('a' + i%26)
		}
		for n > 0 {
			m, err := w.Write(buf[:min(n, int64(len(buf)))])
			if err != nil {
				return
			}
			n -= int64(m)
		}
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		io.Copy(w, r.Body)
	})
	if root != "" {
		mux.Handle("GET /", http.FileServer(http.Dir(root)))
	}
	return mux
}

// AltSvc advertises HTTP/3 on port in every response (RFC 7838; RFC 9114,
// Section 3.1.1), with the value http3.Server.SetQUICHeaders gives
// (http3's default lifetime, Server.AltSvcMaxAge: 24 hours).
func AltSvc(h http.Handler, port int) http.Handler {
	hdr := make(http.Header)
	(&http3.Server{Addr: ":" + strconv.Itoa(port)}).SetQUICHeaders(hdr)
	v := hdr.Get("Alt-Svc")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Alt-Svc", v)
		h.ServeHTTP(w, r)
	})
}
