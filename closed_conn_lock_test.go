package quic

import (
	"sync"
	"testing"
	"time"
)

// TestAddClosedWhileLockHeld: a closing connection hands its record to the
// Transport without waiting for the closed set's lock (a runner blocked
// there cannot serve the next connection). Under load the lock formed a
// convoy: in the handshake benchmark 40 of 115 goroutines waited in
// addClosed, and new connections got new goroutines. Before the fix this
// test hung in addClosed (go test -timeout failed it).
func TestAddClosedWhileLockHeld(t *testing.T) {
	tr := &Transport{}
	s := &tr.closed
	defer func() {
		s.mu.Lock()
		if s.timer != nil {
			s.timer.Stop()
		}
		s.mu.Unlock()
	}()
	s.mu.Lock() // as the reaper holds it
	cc := &closedConn{deadline: time.Now().Add(time.Hour)}
	tr.addClosed(nil, cc) // returns: the record waits in the pending list
	if len(s.heap) != 0 {
		t.Fatal("the record entered the heap while another goroutine held the lock")
	}
	// The holder moves pending records into the heap after unlocking.
	s.mu.Unlock()
	tr.drainPendingClosed()
	s.mu.Lock()
	n, armed := len(s.heap), s.timer != nil
	s.mu.Unlock()
	if n != 1 || !armed {
		t.Fatalf("after the holder unlocked: %d records in the heap (want 1), timer armed %v", n, armed)
	}
}

// TestClosedConnsConcurrent: records added from many goroutines while the
// reaper runs all reach the heap and are all removed at their deadlines;
// none is left in the pending list.
func TestClosedConnsConcurrent(t *testing.T) {
	tr := &Transport{}
	s := &tr.closed
	const writers, each = 8, 200
	tr.conns.Add(writers * each)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	reaperDone := make(chan struct{})
	go func() {
		defer close(reaperDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			tr.reapClosed()
		}
	}()
	for range writers {
		wg.Go(func() {
			for range each {
				// Deadlines in the past: the next reap removes them.
				tr.addClosed(nil, &closedConn{deadline: time.Now().Add(-time.Millisecond)})
			}
		})
	}
	wg.Wait()
	close(stop)
	<-reaperDone
	tr.reapClosed()  // no other holder now: this one sees every record
	s.reaping.Wait() // a reap the timer started may still be removing
	s.mu.Lock()
	left, pending := len(s.heap), s.pending.Load()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	if left != 0 || pending != nil || tr.conns.Load() != 0 {
		t.Fatalf("after the deadlines: %d records in the heap, pending list empty %v, connections counted %d; want none",
			left, pending == nil, tr.conns.Load())
	}
}
