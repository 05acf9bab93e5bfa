package http3

import (
	"crypto/tls"
	"net"
	"sync"

	"github.com/quicstack/quic"
)

// defaultMaxConcurrentRequests is the QUIC bidirectional stream limit of
// the listeners the server makes when QUICConfig leaves
// MaxIncomingStreams zero: concurrent requests per connection, as
// net/http's HTTP/2 server allows 250 concurrent streams. The QUIC
// default of 100 makes clients with many requests in flight wait for
// stream credit.
const defaultMaxConcurrentRequests = 250

// quicConfig returns the QUIC configuration for the server's listeners:
// QUICConfig, with datagrams enabled when EnableDatagrams asks for them
// and MaxIncomingStreams defaulting to defaultMaxConcurrentRequests.
func (s *Server) quicConfig() *quic.Config {
	c := &quic.Config{}
	if s.QUICConfig != nil {
		*c = *s.QUICConfig
	}
	if s.EnableDatagrams {
		c.EnableDatagrams = true
	}
	if c.MaxIncomingStreams == 0 {
		c.MaxIncomingStreams = defaultMaxConcurrentRequests
	}
	return c
}

// ListenAndServe listens on the UDP address s.Addr (":443" if empty) and
// serves requests until Close or Shutdown, after which it returns
// ErrServerClosed. TLSConfig must hold the server's certificate. When
// QUICConfig.Allow0RTT is set the listener accepts 0-RTT requests.
func (s *Server) ListenAndServe() error {
	return s.listenAndServe(s.tlsConfig())
}

// ListenAndServeTLS is like ListenAndServe with the certificate and key
// loaded from PEM files, which take precedence over TLSConfig's
// certificates.
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	tc := s.tlsConfig()
	tc.Certificates = []tls.Certificate{cert}
	tc.GetCertificate = nil
	return s.listenAndServe(tc)
}

func (s *Server) listenAndServe(tc *tls.Config) error {
	addr := s.Addr
	if addr == "" {
		addr = ":443"
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	return s.serveTransport(&quic.Transport{Conn: pc}, tc, pc)
}

// Serve serves HTTP/3 on the UDP socket pc until Close or Shutdown, after
// which it returns ErrServerClosed. The server makes a quic.Transport on
// pc; pc is not closed. Use ServeListener to share a socket or a
// quic.Transport with other QUIC uses.
func (s *Server) Serve(pc net.PacketConn) error {
	return s.serveTransport(&quic.Transport{Conn: pc}, s.tlsConfig(), nil)
}

// serveTransport listens on tr and serves until the server closes; the
// Transport (and owned, if not nil) are closed when the server no longer
// needs them: at once on an accept error, after the last connection on
// Shutdown, immediately on Close.
func (s *Server) serveTransport(tr *quic.Transport, tc *tls.Config, owned net.PacketConn) error {
	closeAll := sync.OnceFunc(func() {
		tr.Close()
		if owned != nil {
			owned.Close()
		}
	})
	qconf := s.quicConfig()
	var l *quic.Listener
	var err error
	if qconf.Allow0RTT {
		l, err = tr.ListenEarly(tc, qconf)
	} else {
		l, err = tr.Listen(tc, qconf)
	}
	if err != nil {
		closeAll()
		return err
	}
	s.mu.Lock()
	s.init()
	closed := s.closed
	if !closed {
		s.cleanups = append(s.cleanups, closeAll)
	}
	s.mu.Unlock()
	if closed {
		closeAll()
		return ErrServerClosed
	}
	err = s.ServeListener(l)
	if err != ErrServerClosed {
		closeAll()
	}
	return err
}
