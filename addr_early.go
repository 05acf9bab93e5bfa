package quic

import (
	"context"
	"crypto/tls"
	"net"
)

// DialAddrEarly is DialAddr with DialEarly: it returns as soon as the
// connection is started, so that data written before the handshake
// completes goes out in 0-RTT packets when tlsConf's ClientSessionCache
// holds a session from the server that allows it (see
// Transport.DialEarly for what 0-RTT risks). The connection's Transport,
// on an ephemeral port, closes in the background once the connection
// ended.
func DialAddrEarly(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return dialAddr(ctx, addr, tlsConf, conf, true)
}

// ListenAddrEarly is ListenAddr with ListenEarly: Accept returns
// connections before their handshake completes, so that the application
// can read 0-RTT data (with Config.Allow0RTT) and send 0.5-RTT data (see
// Transport.ListenEarly).
func ListenAddrEarly(addr string, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	return listenAddr(addr, tlsConf, conf, true)
}

// dialAddr is DialAddr, or DialAddrEarly with early.
func dialAddr(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config, early bool) (*Conn, error) {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	t := &Transport{Conn: udp, ownConn: true}
	c, err := t.dial(ctx, raddr, withServerNameOf(tlsConf, addr), conf, early, nil)
	// The Transport closes once the connection ended, in the background:
	// a dial that failed or was abandoned returns at once, while what is
	// left of the connection answers the server for its closing period
	// (closed_conn.go), 5 s at most.
	t.closeWhenIdle.Store(true)
	t.closeIfIdle()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// listenAddr is ListenAddr, or ListenAddrEarly with early.
func listenAddr(addr string, tlsConf *tls.Config, conf *Config, early bool) (*Listener, error) {
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, err
	}
	t := &Transport{Conn: udp, ownConn: true}
	l, err := t.listen(tlsConf, conf, early)
	if err != nil {
		t.Close()
		return nil, err
	}
	l.ownTransport = true
	return l, nil
}

// withServerNameOf returns tlsConf, or, if its ServerName is empty, a
// copy with the host part of addr ("localhost" of "localhost:4433") as
// ServerName, as tls.Dial does: the server's certificate is verified
// against that name, and crypto/tls keeps the sessions to resume under
// it. The caller's tls.Config is never modified.
func withServerNameOf(tlsConf *tls.Config, addr string) *tls.Config {
	if tlsConf == nil || tlsConf.ServerName != "" {
		return tlsConf
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return tlsConf // dial fills in the IP address
	}
	tc := tlsConf.Clone()
	tc.ServerName = host
	return tc
}
