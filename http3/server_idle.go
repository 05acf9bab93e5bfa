package http3

import (
	"time"

	"github.com/quicstack/quic"
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

// idleTimeout closes the connection if it is still idle. A GOAWAY first
// tells the client that no request was lost (RFC 9114, Section 5.2), and
// the close itself uses H3_NO_ERROR.
func (sc *serverConn) idleTimeout() {
	sc.mu.Lock()
	idle := sc.active == 0
	if idle && !sc.goaway {
		sc.goaway = true
		if sc.accepted {
			sc.goawayID = sc.lastID + 4
		}
	}
	id := sc.goawayID
	sc.mu.Unlock()
	if !idle {
		return
	}
	sc.writeControl(appendIDFrame(nil, frameGoaway, uint64(id)))
	sc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "idle")
}
