package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/quicstack/quic"
)

// A DualServer serves one origin the way sites deploy HTTP/3: HTTP/1.1
// and HTTP/2 over TLS on TCP with HTTP (a net/http Server), and HTTP/3
// over QUIC on the UDP port of the same number with H3, and it advertises
// HTTP/3 in an Alt-Svc header field (RFC 7838) on every TCP response, so
// that clients such as AutoTransport and browsers move to HTTP/3:
//
//	srv := &http3.DualServer{
//		H3:   &http3.Server{Handler: mux},
//		HTTP: &http.Server{Addr: ":443", Handler: mux},
//	}
//	err := srv.ListenAndServeTLS("cert.pem", "key.pem")
//
// The address is HTTP.Addr, else H3.Addr, else ":443"; port 0 picks a
// port free for both protocols, which UDPAddr and TCPAddr report once
// Listen returned. A nil H3 or HTTP is a server with the defaults; a nil
// Handler or TLSConfig of one is taken from the other. The Alt-Svc value
// is `h3=":port"; ma=86400`, the lifetime being H3.AltSvcMaxAge; a
// handler that sets Alt-Svc itself (such as "clear") replaces it. Serve
// sets HTTP.Handler to a handler that adds the field and calls the one
// that was there.
//
// The methods may be called from any goroutine; Shutdown and Close may
// be called while Serve runs.
type DualServer struct {
	// H3 serves HTTP/3 on UDP.
	H3 *Server
	// HTTP serves HTTP/1.1 and HTTP/2 on TCP.
	HTTP *http.Server

	mu       sync.Mutex
	udp      net.PacketConn
	tcp      net.Listener
	cert     *tls.Certificate // from ListenAndServeTLS
	serving  bool
	shutdown bool
}

// errDualClosed is DualServer.Serve's error after Shutdown or Close: it
// is both http3.ErrServerClosed and http.ErrServerClosed for errors.Is.
var errDualClosed error = dualClosedError{}

type dualClosedError struct{}

func (dualClosedError) Error() string { return "http3: dual server closed" }
func (dualClosedError) Is(target error) bool {
	return target == ErrServerClosed || target == http.ErrServerClosed
}

// defaults fills in the missing servers, handlers and TLS
// configurations. s.mu held.
func (s *DualServer) defaults() {
	if s.H3 == nil {
		s.H3 = &Server{}
	}
	if s.HTTP == nil {
		s.HTTP = &http.Server{ReadHeaderTimeout: DefaultReadHeaderTimeout}
	}
	if s.H3.Handler == nil {
		s.H3.Handler = s.HTTP.Handler
	}
	if s.HTTP.Handler == nil {
		s.HTTP.Handler = s.H3.Handler
	}
	if s.H3.TLSConfig == nil {
		s.H3.TLSConfig = s.HTTP.TLSConfig
	}
	if s.HTTP.TLSConfig == nil {
		s.HTTP.TLSConfig = s.H3.TLSConfig
	}
}

// addr returns the address to listen on.
func (s *DualServer) addr() string {
	switch {
	case s.HTTP.Addr != "":
		return s.HTTP.Addr
	case s.H3.Addr != "":
		return s.H3.Addr
	}
	return ":443"
}

// Listen opens the UDP socket and the TCP listener, on the same port
// number; with port 0, on a port free for both. It is called by Serve if
// needed; calling it first lets UDPAddr and TCPAddr tell the addresses
// before serving.
func (s *DualServer) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaults()
	if s.udp != nil {
		return nil
	}
	if s.shutdown {
		return errDualClosed
	}
	udp, tcp, err := listenBoth(s.addr())
	if err != nil {
		return err
	}
	s.udp, s.tcp = udp, tcp
	return nil
}

// maxPortTries bounds the ports tried for a port free for both UDP and
// TCP.
const maxPortTries = 32

// listenBoth listens on addr over UDP and TCP.
func listenBoth(addr string) (net.PacketConn, net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, err
	}
	if port != "0" {
		udp, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, err
		}
		tcp, err := net.Listen("tcp", addr)
		if err != nil {
			udp.Close()
			return nil, nil, err
		}
		return udp, tcp, nil
	}
	var lastErr error
	for i := 0; i < maxPortTries; i++ {
		udp, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, err
		}
		p := udp.LocalAddr().(*net.UDPAddr).Port
		tcp, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			return udp, tcp, nil
		}
		udp.Close()
		lastErr = err
	}
	return nil, nil, lastErr
}

// UDPAddr returns the address of the UDP socket, or nil before Listen.
func (s *DualServer) UDPAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.udp == nil {
		return nil
	}
	return s.udp.LocalAddr()
}

// TCPAddr returns the address of the TCP listener, or nil before Listen.
func (s *DualServer) TCPAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tcp == nil {
		return nil
	}
	return s.tcp.Addr()
}

// ListenAndServe listens (see Listen) and serves until Shutdown or Close;
// the servers' TLS configurations must hold the certificate.
func (s *DualServer) ListenAndServe() error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.Serve()
}

// ListenAndServeTLS is ListenAndServe with the certificate and key
// loaded from PEM files, which take precedence over the TLS
// configurations' certificates.
func (s *DualServer) ListenAndServeTLS(certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cert = &cert
	s.mu.Unlock()
	return s.ListenAndServe()
}

// Serve serves both protocols on the sockets Listen opened (it calls
// Listen if needed) until Shutdown or Close, after which it returns an
// error that is both ErrServerClosed and http.ErrServerClosed for
// errors.Is. If one server fails, Serve closes the other and returns the
// failure. The servers close the sockets when they are done.
func (s *DualServer) Serve() error {
	if err := s.Listen(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return errors.New("http3: DualServer already serving")
	}
	s.serving = true
	udp, tcp := s.udp, s.tcp
	h3TLS := s.H3.tlsConfig()
	var tcpTLS *tls.Config
	if s.HTTP.TLSConfig != nil {
		tcpTLS = s.HTTP.TLSConfig.Clone()
	} else {
		tcpTLS = &tls.Config{}
	}
	if s.cert != nil {
		h3TLS.Certificates, h3TLS.GetCertificate = []tls.Certificate{*s.cert}, nil
		tcpTLS.Certificates, tcpTLS.GetCertificate = []tls.Certificate{*s.cert}, nil
	}
	s.HTTP.TLSConfig = tcpTLS
	altSvc := s.H3.altSvcValue(udp.LocalAddr().(*net.UDPAddr).Port)
	inner := s.HTTP.Handler
	if inner == nil {
		inner = http.DefaultServeMux
	}
	s.HTTP.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Alt-Svc", altSvc)
		inner.ServeHTTP(w, r)
	})
	s.mu.Unlock()

	errc := make(chan error, 2)
	go func() { errc <- s.H3.serveTransport(&quic.Transport{Conn: udp}, h3TLS, udp) }()
	go func() { errc <- s.HTTP.ServeTLS(tcp, "", "") }()
	first := <-errc
	s.mu.Lock()
	stopping := s.shutdown
	s.mu.Unlock()
	if !stopping {
		// One server failed: the other goes too.
		s.H3.Close()
		s.HTTP.Close()
	}
	// The servers close the sockets: the H3 server once its
	// connections are done after a graceful Shutdown.
	second := <-errc
	if stopping {
		return errDualClosed
	}
	if errors.Is(first, ErrServerClosed) || errors.Is(first, http.ErrServerClosed) {
		first = second
	}
	return first
}

// Shutdown shuts both servers down gracefully, at once: HTTP/3
// connections get GOAWAY (Server.Shutdown), TCP connections are closed
// once idle (http.Server.Shutdown); requests in flight finish. It returns
// when both are done, or with ctx's error.
func (s *DualServer) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.defaults()
	s.shutdown = true
	udp, tcp, serving := s.udp, s.tcp, s.serving
	s.mu.Unlock()
	var wg sync.WaitGroup
	var e3, e2 error
	wg.Go(func() { e3 = s.H3.Shutdown(ctx) })
	wg.Go(func() { e2 = s.HTTP.Shutdown(ctx) })
	wg.Wait()
	if !serving {
		closeSockets(udp, tcp)
	}
	return errors.Join(e3, e2)
}

// Close closes both servers and their connections at once.
func (s *DualServer) Close() error {
	s.mu.Lock()
	s.defaults()
	s.shutdown = true
	udp, tcp, serving := s.udp, s.tcp, s.serving
	s.mu.Unlock()
	err := errors.Join(s.H3.Close(), s.HTTP.Close())
	if !serving {
		closeSockets(udp, tcp)
	}
	return err
}

func closeSockets(udp net.PacketConn, tcp net.Listener) {
	if udp != nil {
		udp.Close()
	}
	if tcp != nil {
		tcp.Close()
	}
}
