package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// simTransfer sends size bytes on each of n client streams to the server,
// which reads when readOK allows (nil: always), and returns the readers
// once every stream reached EOF with its data intact.
func simTransfer(t *testing.T, p *simPair, n, size int, limit time.Duration, readOK func() bool) []*patternReader {
	t.Helper()
	writers := make([]*patternWriter, n)
	for k := range writers {
		s, _, err := p.client.c.streams.openStream(true)
		if err != nil || s == nil {
			t.Fatalf("openStream: %v %v", s, err)
		}
		writers[k] = newPatternWriter(s, k, size)
	}
	var readers []*patternReader
	done := 0
	p.run(t, limit, func() bool {
		for _, w := range writers {
			if !w.closed {
				w.step()
			}
		}
		for _, s := range acceptAll(p.server.c, true) {
			k := int(s.id.Num()) - 1 // client streams are opened in order
			readers = append(readers, newPatternReader(t, s, k))
		}
		if readOK == nil || readOK() {
			for _, r := range readers {
				if !r.eof && r.step(0) {
					if r.got != size {
						t.Fatalf("stream %d: EOF after %d bytes, want %d", r.s.id, r.got, size)
					}
					done++
				}
			}
		}
		return done == n
	})
	return readers
}

// A 50 MB transfer through receive windows far below the path's
// bandwidth-delay product (250 kB): auto-tuning must grow them. RFC 9000,
// Section 4.2: "A receiver can use an autotuning mechanism to tune the
// frequency and amount of advertised additional credit based on a
// round-trip time estimate and the rate at which the receiving
// application consumes data".
func TestSimLargeTransferSmallWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB transfer")
	}
	const streamWin, connWin = 64 << 10, 96 << 10
	cfg := &Config{InitialStreamReceiveWindow: streamWin, InitialConnectionReceiveWindow: connWin}
	p := newSimPair(t, testLink, cfg, 11)
	p.connect(t)
	start := p.sim.Now()
	const size = 50 << 20
	r := simTransfer(t, p, 1, size, 60*time.Second, nil)[0]
	el := p.sim.Now().Sub(start)
	sw, cw := r.s.recvFC.Window(), p.server.c.connRecv.Window()
	t.Logf("50 MB in %v of simulated time (%.1f Mbit/s); stream window %d kB, connection window %d kB",
		el, float64(size)*8/el.Seconds()/1e6, sw>>10, cw>>10)
	if sw <= streamWin || cw <= connWin {
		t.Errorf("windows did not grow: stream %d (initial %d), connection %d (initial %d)", sw, streamWin, cw, connWin)
	}
	// With the initial stream window the transfer could not exceed
	// 64 KiB per 20 ms RTT, 26 Mbit/s: 16 s for 50 MB.
	if el > 10*time.Second {
		t.Errorf("transfer took %v: flow control held it back", el)
	}
	if p.client.c.closeState != stateActive || p.server.c.closeState != stateActive {
		t.Fatalf("connection closed: client %v, server %v", p.client.c.closeErr, p.server.c.closeErr)
	}
}

// Reordering and duplication must not corrupt data: "Endpoints MUST be
// able to deliver stream data to an application as an ordered byte
// stream." and "An endpoint could receive data for a stream at the same
// stream offset multiple times. Data that has already been received can
// be discarded." (RFC 9000, Section 2.2)
func TestSimReorderDuplicate(t *testing.T) {
	link := linkWith(func(l *netsim.LinkConfig) {
		l.ReorderProb, l.ReorderDelay, l.DuplicateProb = 0.2, 7*time.Millisecond, 0.05
	})
	p := newSimPair(t, link, nil, 12)
	p.connect(t)
	simTransfer(t, p, 3, 5<<20/3, 60*time.Second, nil)
	ab, ba := p.path.AB.Stats(), p.path.BA.Stats()
	if ab.Reordered == 0 || ab.Duplicated == 0 || ba.Reordered == 0 || ba.Duplicated == 0 {
		t.Fatalf("link did not reorder and duplicate: %+v %+v", ab, ba)
	}
	t.Logf("%d datagrams reordered, %d duplicated", ab.Reordered+ba.Reordered, ab.Duplicated+ba.Duplicated)
}

// A receiver that stops reading blocks the sender at the stream limit; the
// sender says so and resumes when the reader does, even after a pause
// longer than the idle timeout: "A sender SHOULD send a
// STREAM_DATA_BLOCKED or DATA_BLOCKED frame to indicate to the receiver
// that it has data to write but is blocked by flow control limits. ... To
// keep the connection from closing, a sender that is flow control limited
// SHOULD periodically send a STREAM_DATA_BLOCKED or DATA_BLOCKED frame when
// it has no ack-eliciting packets in flight." (RFC 9000, Section 4.1)
func TestSimStreamFlowControlBlocked(t *testing.T) {
	const streamWin = 64 << 10
	cfg := &Config{InitialStreamReceiveWindow: streamWin, MaxIdleTimeout: 30 * time.Second}
	p := newSimPair(t, testLink, cfg, 13)
	p.connect(t)
	log := watchFrames(p.server.c)
	pauseUntil := p.sim.Now().Add(45 * time.Second) // beyond the idle timeout
	var cs *stream
	checked := false
	simTransfer(t, p, 1, 1<<20, 120*time.Second, func() bool {
		if cs == nil {
			cs = p.client.c.streams.lookup(wire.NthStreamID(wire.RoleClient, true, 1))
		}
		if p.sim.Now().Before(pauseUntil) {
			return false
		}
		if !checked {
			checked = true
			// The sender used exactly the credit it had and said so.
			cs.mu.Lock()
			sent, credit := cs.sendFC.Sent(), cs.sendFC.Credit()
			cs.mu.Unlock()
			if sent != streamWin || credit != 0 {
				t.Errorf("blocked sender sent %d with %d credit left, want %d and 0", sent, credit, streamWin)
			}
			if len(log.streamDataBlocked) < 2 {
				t.Errorf("receiver got %d STREAM_DATA_BLOCKED frames during a 45 s stall, want repeats", len(log.streamDataBlocked))
			}
			for _, f := range log.streamDataBlocked {
				if f.MaximumStreamData != streamWin || f.StreamID != cs.id {
					t.Errorf("STREAM_DATA_BLOCKED %+v, want limit %d on stream %d", f, streamWin, cs.id)
				}
			}
		}
		return true
	})
	if !checked {
		t.Fatal("transfer ended before the reader resumed")
	}
}

// Several streams exhaust the connection's credit while the receiver does
// not read; when it does, MAX_DATA resumes all of them. RFC 9000,
// Section 4.1: "A receiver MUST close the connection with an error of type
// FLOW_CONTROL_ERROR if the sender violates the advertised connection or
// stream data limits" (so the sender must stop at the limit) and
// Section 19.12: "A sender SHOULD send a DATA_BLOCKED frame (type=0x14)
// when it wishes to send data but is unable to do so due to
// connection-level flow control".
func TestSimConnFlowControlBlocked(t *testing.T) {
	const streamWin, connWin = 256 << 10, 96 << 10
	cfg := &Config{InitialStreamReceiveWindow: streamWin, InitialConnectionReceiveWindow: connWin}
	p := newSimPair(t, testLink, cfg, 14)
	p.connect(t)
	log, clog := watchFrames(p.server.c), watchFrames(p.client.c)
	pauseUntil := p.sim.Now().Add(2 * time.Second)
	checked := false
	const n = 4
	readers := simTransfer(t, p, n, 1<<20, 60*time.Second, func() bool {
		if p.sim.Now().Before(pauseUntil) {
			return false
		}
		if !checked {
			checked = true
			if sent, credit := p.client.c.connSend.Sent(), p.client.c.connSend.Credit(); sent != connWin || credit != 0 {
				t.Errorf("blocked sender sent %d with %d connection credit left, want %d and 0", sent, credit, connWin)
			}
			if len(log.dataBlocked) == 0 || log.dataBlocked[0].MaximumData != connWin {
				t.Errorf("DATA_BLOCKED frames received: %+v, want one at %d", log.dataBlocked, connWin)
			}
		}
		return true
	})
	for _, r := range readers {
		if !r.eof {
			t.Errorf("stream %d did not finish", r.s.id)
		}
	}
	if len(clog.maxData) == 0 || clog.maxData[len(clog.maxData)-1] < n<<20 {
		t.Errorf("MAX_DATA received by the sender: %v, want one allowing all %d bytes", clog.maxData, n<<20)
	}
}
