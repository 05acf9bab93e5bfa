package quic

import (
	"testing"
	"time"
)

// A peer that withholds MAX_DATA must not make the sender keep streams
// that are long gone: streams whose new data waited for the connection's
// credit, then were reset (CancelWrite) and retired once the peer
// acknowledged the RESET_STREAM, must leave the scheduler. Otherwise each
// such stream stays listed until a MAX_DATA that may never come, and an
// application that resets what it cannot send (a server timing out
// responses to a client that does not read) grows the list without bound
// ("everything a peer can make us store has a bound").
func TestSimResetStreamsLeaveConnBlockedList(t *testing.T) {
	const window = 8 << 10
	ccfg := &Config{}
	scfg := &Config{InitialConnectionReceiveWindow: window, MaxConnectionReceiveWindow: window, MaxIncomingUniStreams: 4}
	ctls, stls := testTLS(t)
	p := newSimPairOpts(t, testLink, 77, simPairOpts{client: ccfg, server: scfg, ctls: ctls, stls: stls})
	p.connect(t)
	cm := p.client.c.streams
	// Stream A takes the whole connection window; the server never reads it.
	a, _, err := cm.openStream(false)
	if err != nil || a == nil {
		t.Fatalf("open: %v", err)
	}
	simWrite(a, make([]byte, 2*window))
	p.run(t, 5*time.Second, func() bool { return p.client.c.connSend.Credit() == 0 })
	const rounds = 40
	reset := 0
	var cur *stream
	p.run(t, 60*time.Second, func() bool {
		if p.server.c != nil {
			acceptAll(p.server.c, false) // returns stream credit as they end
		}
		if cur == nil && reset < rounds {
			s, _, err := cm.openStream(false)
			if err != nil {
				t.Fatal(err)
			}
			if s != nil {
				simWrite(s, make([]byte, 1000))
				cur = s
			}
			return false
		}
		if cur != nil {
			cur.mu.Lock()
			queued := cur.sched.where == schedConnBlock
			cur.mu.Unlock()
			if queued {
				cur.cancelWrite(7)
				cur, reset = nil, reset+1
			}
		}
		return reset == rounds && cm.openCount() == 1
	})
	p.sim.RunFor(time.Second)
	if n := cm.sched.connBlocked.n; n > 1 {
		t.Errorf("%d streams wait for MAX_DATA with one stream (A) open", n)
	}
	if n := cm.sched.len(); n > 1 {
		t.Errorf("scheduler counts %d sendable streams with one stream (A) open", n)
	}
}
