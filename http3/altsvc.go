package http3

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// defaultAltSvcMaxAge is Server.AltSvcMaxAge's default: 24 hours, the
// freshness of an Alt-Svc value without "ma" (RFC 7838, Section 3.1),
// which is also what the example server and DualServer advertise.
const defaultAltSvcMaxAge = 24 * time.Hour

// altSvcValue returns the Alt-Svc field value that advertises HTTP/3 on
// port of the same host, fresh for the server's AltSvcMaxAge:
// `h3=":443"; ma=86400`.
func (s *Server) altSvcValue(port int) string {
	ma := s.AltSvcMaxAge
	if ma <= 0 {
		ma = defaultAltSvcMaxAge
	}
	return `h3=":` + strconv.Itoa(port) + `"; ma=` + strconv.FormatInt(int64(ma/time.Second), 10)
}

// SetQUICHeaders adds to hdr the Alt-Svc header field that tells HTTP/1.1
// and HTTP/2 clients the server is reachable over HTTP/3 on the same host
// (RFC 7838; RFC 9114, Section 3.1.1): `h3=":port"; ma=86400` with the
// default AltSvcMaxAge. The port is the one the server listens on, or
// that of Addr before it listens.
func (s *Server) SetQUICHeaders(hdr http.Header) error {
	port, err := s.port()
	if err != nil {
		return err
	}
	hdr.Add("Alt-Svc", s.altSvcValue(port))
	return nil
}

// port returns the UDP port the server listens on.
func (s *Server) port() (int, error) {
	s.mu.Lock()
	for l := range s.listeners {
		if a, ok := l.Addr().(*net.UDPAddr); ok {
			s.mu.Unlock()
			return a.Port, nil
		}
	}
	s.mu.Unlock()
	addr := s.Addr
	if addr == "" {
		return 443, nil
	}
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	port, err := net.LookupPort("udp", p)
	if err != nil {
		return 0, err
	}
	if port == 0 {
		return 0, errors.New("http3: server port not known yet")
	}
	return port, nil
}

// ListenAndServeTLS serves handler on addr over both transports, the way
// sites deploy HTTP/3: HTTP/1.1 and HTTP/2 over TLS on TCP (net/http),
// with an Alt-Svc header added to every response, and HTTP/3 over QUIC on
// the UDP port of the same number (port 0 picks one free for both).
// certFile and keyFile hold the PEM certificate and key. It returns when
// either server fails, after closing the other. DualServer does the same
// with the servers' configuration, their addresses and a graceful
// Shutdown.
func ListenAndServeTLS(addr, certFile, keyFile string, handler http.Handler) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	return listenAndServeBoth(addr, cert, handler, nil)
}

// listenAndServeBoth is ListenAndServeTLS; started, if not nil, is given
// the two servers once they run (tests stop them with it).
func listenAndServeBoth(addr string, cert tls.Certificate, handler http.Handler, started func(*Server, *http.Server)) error {
	if addr == "" {
		addr = ":443"
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	d := &DualServer{
		H3:   &Server{Handler: handler, TLSConfig: tc},
		HTTP: &http.Server{Addr: addr, Handler: handler, TLSConfig: tc, ReadHeaderTimeout: DefaultReadHeaderTimeout},
	}
	if err := d.Listen(); err != nil {
		return err
	}
	if started != nil {
		started(d.H3, d.HTTP)
	}
	err := d.Serve()
	d.Close()
	return err
}
