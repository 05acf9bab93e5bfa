package http3

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/quicstack/quic"
)

// retire stops new requests from using the connection, which closes once
// its requests are done: after its stream limit was met (a new
// connection takes the next requests) or when it is found unusable.
func (cc *clientConn) retire() {
	cc.mu.Lock()
	cc.retired = true
	idle := cc.active == 0
	cc.mu.Unlock()
	if t := cc.t; t != nil {
		t.mu.Lock()
		for k, call := range t.conns {
			if call.cc == cc {
				delete(t.conns, k)
			}
		}
		t.mu.Unlock()
	}
	if idle {
		cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
	}
}

// startIdleTimer arms Transport.IdleConnTimeout on a connection without
// requests. cc.mu held.
func (cc *clientConn) startIdleTimer() {
	if cc.t == nil || cc.t.IdleConnTimeout <= 0 {
		return
	}
	if cc.idleT != nil {
		cc.idleT.Reset(cc.t.IdleConnTimeout)
		return
	}
	cc.idleT = time.AfterFunc(cc.t.IdleConnTimeout, cc.closeIfIdle)
}

// stopIdleTimer disarms the idle timer. cc.mu held.
func (cc *clientConn) stopIdleTimer() {
	if cc.idleT != nil {
		cc.idleT.Stop()
	}
}

// closeIfIdle retires and closes the connection if no request is in
// progress.
func (cc *clientConn) closeIfIdle() {
	cc.mu.Lock()
	idle := cc.active == 0
	cc.mu.Unlock()
	if idle {
		cc.retire()
	}
}

// CloseIdleConnections closes the connections that have no request in
// progress. http.Client.CloseIdleConnections calls it.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	all := make([]*clientConn, 0, len(t.all))
	for cc := range t.all {
		all = append(all, cc)
	}
	t.mu.Unlock()
	for _, cc := range all {
		cc.closeIfIdle()
	}
}

// dialEarly dials with quic.Transport.DialEarly from the Transport's own
// socket, so that a resumed session can carry requests in 0-RTT.
func (t *Transport) dialEarly(ctx context.Context, authority string, tc *tls.Config) (*quic.Conn, error) {
	addr, err := net.ResolveUDPAddr("udp", authority)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.qtr == nil {
		pc, err := net.ListenUDP("udp", nil)
		if err != nil {
			t.mu.Unlock()
			return nil, err
		}
		t.qtr = &quic.Transport{Conn: pc}
	}
	qtr := t.qtr
	t.mu.Unlock()
	if tc.ClientSessionCache == nil {
		tc.ClientSessionCache = t.sessionCache()
	}
	return qtr.DialEarly(ctx, addr, tc, t.quicConfig())
}

// sessionCache returns the Transport's own session cache, for 0-RTT
// dials when TLSClientConfig has none.
func (t *Transport) sessionCache() tls.ClientSessionCache {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessions == nil {
		t.sessions = tls.NewLRUClientSessionCache(64)
	}
	return t.sessions
}
