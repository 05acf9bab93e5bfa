package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
)

// retire stops new requests from using the connection, which closes once
// its requests are done: after its stream limit was met (a new
// connection takes the next requests) or when it is found unusable.
func (cc *clientConn) retire() {
	cc.mu.Lock()
	cc.retired = true
	idle := cc.active == 0
	cc.mu.Unlock()
	cc.forget(idle)
}

// forget removes the retired connection from the Transport's table, and
// closes it if idle.
func (cc *clientConn) forget(idle bool) {
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
// progress, reserved ones included (reserve).
func (cc *clientConn) closeIfIdle() {
	cc.mu.Lock()
	idle := cc.active == 0
	if idle {
		cc.retired = true
	}
	cc.mu.Unlock()
	if idle {
		cc.forget(true)
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

// errGoaway is a request not sent because the server sent GOAWAY; it is
// retried on a new connection.
var errGoaway = errors.New("http3: connection going away")

// goneAway reports whether the server sent GOAWAY.
func (cc *clientConn) goneAway() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.goawayRecv
}

// watch records str as waiting for its response, so that a GOAWAY that
// excludes it cancels it (goawayReceived), and reports false if a GOAWAY
// received already excludes it.
func (cc *clientConn) watch(str *quic.Stream) bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.goawayRecv && uint64(str.StreamID()) >= cc.goawayID {
		return false
	}
	if cc.awaiting == nil {
		cc.awaiting = make(map[*quic.Stream]struct{})
	}
	cc.awaiting[str] = struct{}{}
	return true
}

// unwatch forgets str: its response header arrived, or the request ended.
func (cc *clientConn) unwatch(str *quic.Stream) {
	cc.mu.Lock()
	delete(cc.awaiting, str)
	cc.mu.Unlock()
}

// cancelExcluded cancels the requests a GOAWAY with id excludes, which
// then fail as retryable: "if the client has already sent requests with
// a stream ID greater than or equal to the identifier contained in the
// GOAWAY frame, those requests will not be processed. Clients can safely
// retry unprocessed requests on a different HTTP connection." (RFC 9114,
// Section 5.2) They are retried at once, rather than when the server
// resets them (which it SHOULD) or closes the connection: a request does
// not wait a round trip, or for a server that forgets. "The endpoint that
// initiated these requests can cancel them to clean up transport state."
func (cc *clientConn) cancelExcluded(id uint64) {
	cc.mu.Lock()
	var excluded []*quic.Stream
	for str := range cc.awaiting {
		if uint64(str.StreamID()) >= id {
			excluded = append(excluded, str)
			delete(cc.awaiting, str)
		}
	}
	cc.mu.Unlock()
	for _, str := range excluded {
		str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
		str.CancelRead(quic.StreamErrorCode(ErrCodeRequestCancelled))
	}
}

// refused reports whether the server closed qc with CONNECTION_REFUSED,
// as a quic.Listener closes the connections it never handed to the
// application (quic.Listener.Close): none of its requests was processed.
func refused(qc *quic.Conn) bool {
	var te *quic.TransportError
	return errors.As(context.Cause(qc.Context()), &te) && te.Remote && te.Code == wire.ConnectionRefused
}
