package http3

import "time"

// startIdleTimer arms Server.IdleTimeout for a connection that has no
// request in progress. sc.mu held.
func (sc *serverConn) startIdleTimer() {
	d := sc.srv.IdleTimeout
	if d <= 0 {
		return
	}
	if sc.idleT != nil {
		sc.idleT.Reset(d)
		return
	}
	sc.idleT = time.AfterFunc(d, sc.idleTimeout)
}

// stopIdleTimer disarms the idle timer. sc.mu held.
func (sc *serverConn) stopIdleTimer() {
	if sc.idleT != nil {
		sc.idleT.Stop()
	}
}

// idleTimeout closes the connection if it is still idle, gracefully: a
// GOAWAY first ("Servers SHOULD send a GOAWAY frame when the closing of a
// connection is known in advance, even if the advance notice is small, so
// that the remote peer can know whether or not a request has been
// partially processed", RFC 9114, Section 5.2), which must arrive before
// the CONNECTION_CLOSE, and requests that raced it are rejected for the
// client to retry (closeAfterGoaway).
func (sc *serverConn) idleTimeout() {
	sc.mu.Lock()
	if sc.active > 0 || sc.goaway {
		sc.mu.Unlock()
		return
	}
	sc.goaway = true
	if sc.accepted {
		sc.goawayID = sc.lastID + 4
	}
	id := sc.goawayID
	sc.mu.Unlock()
	sc.closeAfterGoaway(id, true)
}
