package http3

import (
	"context"
	"time"
)

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
//
// A response whose handler returned may still be on its way (a slow
// reader's stream window holds it back): the connection is not idle while
// it is. The first expiry with stream data unacknowledged waits for the
// acknowledgements (shutdownDrainTimeout at most, then closeAfterGoaway
// waits as long again) and restarts the idle period, so that a response
// in flight gets as long as when the request counted until its stream
// finished, and a peer that never lets it finish is still bounded.
func (sc *serverConn) idleTimeout() {
	sc.mu.Lock()
	if sc.active > 0 || sc.goaway {
		sc.mu.Unlock()
		return
	}
	if !sc.idleWaited {
		sc.idleWaited = true
		sc.mu.Unlock()
		if !sc.responsesInFlight() {
			sc.mu.Lock()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownDrainTimeout)
			sc.qc.WaitAcked(ctx)
			cancel()
			sc.mu.Lock()
			if sc.active == 0 && !sc.goaway && sc.qc.Context().Err() == nil {
				sc.startIdleTimer() // idle from now on
			}
			sc.mu.Unlock()
			return
		}
		if sc.active > 0 || sc.goaway {
			sc.mu.Unlock()
			return
		}
	}
	sc.goaway = true
	if sc.accepted {
		sc.goawayID = sc.lastID + 4
	}
	id := sc.goawayID
	sc.mu.Unlock()
	sc.closeAfterGoaway(id, true)
}

// responsesInFlight reports whether the connection has stream data not
// yet acknowledged.
func (sc *serverConn) responsesInFlight() bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return sc.qc.WaitAcked(ctx) != nil && sc.qc.Context().Err() == nil
}
