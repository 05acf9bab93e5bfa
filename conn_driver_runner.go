package quic

import (
	"sync/atomic"
	"time"
)

// Runners: the goroutines that run connections' loops (Conn.run). A
// goroutine whose connection finished or parked (conn_driver_park.go) waits a
// short while for another connection of its Transport to run, instead of
// exiting at once. A new goroutine starts with a small stack that a
// handshake grows by copying it several times (crypto/tls and key
// derivation run deep on it), which costs about as much as the rest of the
// connection's own bookkeeping; a runner that has run a connection
// already has the stack the next one needs. A Transport that starts
// connections often thus keeps a few runners busy, and one that does not
// is left with none once runnerIdleTime has passed.
//
// Still one goroutine at a time runs a connection's loop: a runner takes
// a connection only through runConn, which is called where a goroutine
// was started before (Conn.start, Conn.wake).

// At most maxIdleRunners runners of a Transport wait for work, each for
// at most runnerIdleTime: a parked connection still gives its goroutine
// stack back (conn_driver_park.go), if not at once.
const (
	maxIdleRunners = 16
	runnerIdleTime = 100 * time.Millisecond
)

// runnerPool hands connections to a Transport's idle runners.
type runnerPool struct {
	ch   chan *Conn // unbuffered: an idle runner receives
	idle atomic.Int32
}

// runConn runs c's loop on an idle runner, or on a new goroutine if none
// waits.
func (t *Transport) runConn(c *Conn) {
	select {
	case t.runners.ch <- c:
	default:
		go t.runner(c)
	}
}

// runner runs c's loop, then those of the connections runConn hands it,
// until none comes for runnerIdleTime, too many runners wait already or
// the Transport closes.
func (t *Transport) runner(c *Conn) {
	// One timer serves the loops of the runner's connections and its
	// wait between them.
	timer := time.NewTimer(time.Hour)
	for {
		c.run(timer)
		if t.runners.idle.Add(1) > maxIdleRunners {
			t.runners.idle.Add(-1)
			return
		}
		timer.Reset(runnerIdleTime)
		select {
		case c = <-t.runners.ch:
			t.runners.idle.Add(-1)
			continue
		case <-timer.C:
		case <-t.closing:
			timer.Stop()
		}
		t.runners.idle.Add(-1)
		return
	}
}
