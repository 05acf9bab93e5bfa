package quic

import (
	"io"
	"testing"
	"time"
)

// TestSimResponseReadToEndWakesOnlyForContext: a client that reads a
// response to its end, on a stream it opened whose request the server
// acknowledged, wakes its connection goroutine only if someone holds the
// stream's Context (issue 28: the wakeup, one per request, only retired
// the stream early). Without a wakeup the Context, asked for afterwards,
// is done at once, and the stream retires when the goroutine next runs.
func TestSimResponseReadToEndWakesOnlyForContext(t *testing.T) {
	for _, withCtx := range []bool{false, true} {
		p := newSimPair(t, testLink, nil, 7)
		p.connect(t)
		cs, _, err := p.client.c.streams.openStream(true)
		if err != nil || cs == nil {
			t.Fatalf("openStream: %v %v", cs, err)
		}
		if withCtx {
			if isDone(cs.context()) {
				t.Fatal("Context of a new stream is done")
			}
		}
		cs.write([]byte("request"))
		cs.closeWrite()
		var ss *stream
		buf := make([]byte, 100)
		p.run(t, 5*time.Second, func() bool {
			if ss == nil && p.server.c != nil {
				ss, _, _ = p.server.c.streams.acceptStream(true)
				if ss != nil {
					if b, err := io.ReadAll(&simReader{ss}); err != nil || string(b) != "request" {
						t.Fatalf("server read %q, %v", b, err)
					}
					ss.write([]byte("response"))
					ss.closeWrite()
				}
			}
			cs.mu.Lock()
			defer cs.mu.Unlock()
			size, known := cs.recvFC.FinalSize()
			return cs.finAcked && known && cs.recv.readable() == int(size)
		})
		// What Conn.publish tells readers after each turn of the goroutine:
		// when their reads make a MAX_DATA due, and that it owes the
		// response's packet an ACK (it runs again for it).
		c := p.client.c
		c.streams.publishReadWakeAt(c.connRecv.ConsumedBeforeUpdate())
		if !c.ackOwed() {
			t.Fatal("the client owes no ACK for the response's packet")
		}
		c.streams.publishAckOwed(c.ackOwed())
		wakes := 0
		p.client.c.streams.wake = func() { wakes++; p.cnode.Wake() }
		n, err := simRead(cs, buf)
		if string(buf[:n]) != "response" || err != nil {
			t.Fatalf("client read %q, %v", buf[:n], err)
		}
		if _, err := simRead(cs, buf); err != io.EOF {
			t.Fatalf("client read %v at the end, want EOF", err)
		}
		if want := map[bool]int{false: 0, true: 1}[withCtx]; wakes != want {
			t.Fatalf("Context asked for %v: reading to the end woke the goroutine %d times, want %d", withCtx, wakes, want)
		}
		if !withCtx && !isDone(cs.context()) {
			t.Fatal("Context first asked for once the stream finished in both directions is not done")
		}
		p.sim.RunFor(time.Second) // the goroutine runs: the response's acknowledgment
		if !isDone(cs.context()) {
			t.Fatalf("Context asked for %v: not done once the stream retired", withCtx)
		}
		p.client.c.streams.mu.Lock()
		_, open := p.client.c.streams.streams[cs.id]
		p.client.c.streams.mu.Unlock()
		if open {
			t.Fatal("the stream did not retire when the goroutine next ran")
		}
	}
}

// simReader reads a stream in the simulator without blocking.
type simReader struct{ s *stream }

func (r *simReader) Read(p []byte) (int, error) {
	n, err := simRead(r.s, p)
	if n == 0 && err == nil {
		return 0, io.ErrUnexpectedEOF // the data has not all arrived
	}
	return n, err
}
