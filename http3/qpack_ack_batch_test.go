package http3

import (
	"math"
	"net/http"
	"testing"
	"time"
)

// TestSectionAcksHeldThenFlushed: the server holds back the Section
// Acknowledgment of a request that references only dynamic table entries
// the client knows were received (issue 28: the client's decoder-stream
// reader no longer wakes for each request), and sends it within
// ackHoldMax even if no other request follows, so that the client's
// encoder releases the entries (RFC 9204, Section 2.1.1).
func TestSectionAcksHeldThenFlushed(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 3 { // the client's encoder inserts :authority and the like
		e.get(t, "/")
	}
	e.srv.mu.Lock()
	var sc *serverConn
	for c := range e.srv.conns {
		sc = c
	}
	e.srv.mu.Unlock()
	held := func() int {
		sc.qmu.Lock()
		defer sc.qmu.Unlock()
		// A limit no count reaches: returns the number held, flushes
		// nothing unless something must go out at once.
		_, n := sc.dec.AppendDecoderStreamBatched(nil, math.MaxInt)
		return n
	}
	queued := func() uint64 {
		sc.decW.mu.Lock()
		defer sc.decW.mu.Unlock()
		return sc.decW.queued
	}
	// A loaded machine may take longer than ackHoldMax for a request:
	// one of several must find its acknowledgment held.
	seen := false
	for range 20 {
		if e.get(t, "/"); held() > 0 {
			seen = true
			break
		}
	}
	if !seen {
		t.Fatal("no Section Acknowledgment held back")
	}
	before := queued()
	deadline := time.Now().Add(10 * time.Second)
	for held() > 0 || queued() == before {
		if time.Now().After(deadline) {
			t.Fatalf("Section Acknowledgments still held after 10 s (%d held, %d bytes queued before, %d now)", held(), before, queued())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
