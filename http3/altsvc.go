package http3

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strconv"
)

// altSvcMaxAge is the lifetime advertised in Alt-Svc: 30 days, in
// seconds.
const altSvcMaxAge = 2592000

// SetQUICHeaders adds to hdr the Alt-Svc header field that tells HTTP/1.1
// and HTTP/2 clients the server is reachable over HTTP/3 on the same host
// (RFC 7838; RFC 9114, Section 3.1.1): `h3=":port"; ma=2592000`. The port
// is the one the server listens on, or that of Addr before it listens.
func (s *Server) SetQUICHeaders(hdr http.Header) error {
	port, err := s.port()
	if err != nil {
		return err
	}
	hdr.Add("Alt-Svc", `h3=":`+strconv.Itoa(port)+`"; ma=`+strconv.Itoa(altSvcMaxAge))
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
// with an Alt-Svc header added to every response (see
// Server.SetQUICHeaders), and HTTP/3 over QUIC on the UDP port of the same
// number. certFile and keyFile hold the PEM certificate and key. It
// returns when either server fails, after closing the other.
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
	if handler == nil {
		handler = http.DefaultServeMux
	}
	if addr == "" {
		addr = ":443"
	}
	h3 := &Server{Addr: addr, Handler: handler, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	altSvc := make(http.Header)
	if err := h3.SetQUICHeaders(altSvc); err != nil {
		return err
	}
	value := altSvc.Get("Alt-Svc")
	tcp := &http.Server{
		Addr: addr,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Add("Alt-Svc", value)
			handler.ServeHTTP(w, r)
		}),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
	}
	errc := make(chan error, 2)
	go func() { errc <- h3.ListenAndServe() }()
	go func() { errc <- tcp.ListenAndServeTLS("", "") }()
	if started != nil {
		started(h3, tcp)
	}
	err := <-errc
	h3.Close()
	tcp.Close()
	<-errc
	return err
}
