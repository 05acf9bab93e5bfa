package quic

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// Reassembly of out-of-order STREAM and CRYPTO data. The rule these tests
// hold the receive paths to: once a packet is acknowledged, everything in
// it is kept, or the connection fails with an error; nothing is dropped in
// the hope of a retransmission, which never comes for acknowledged data.
//
// "Endpoints MUST be able to deliver stream data to an application as an
// ordered byte stream. Delivering an ordered byte stream requires that an
// endpoint buffer any data that is received out of order, up to the
// advertised flow control limit." RFC 9000, Section 2.2

// windowConfig is a Config whose stream receive window is win and does not
// grow, with a connection window that does not limit a single stream.
func windowConfig(win uint64) *Config {
	return &Config{
		InitialStreamReceiveWindow: win, MaxStreamReceiveWindow: win,
		InitialConnectionReceiveWindow: 4 * win, MaxConnectionReceiveWindow: 4 * win,
	}
}

// A sender that sends every STREAM frame exactly once, odd-numbered frames
// first and even-numbered ones after (the reproduction of issue 19), one
// 1,000-byte frame per packet, each window's worth of frames in turn: the
// receiver holds half a window of data in as many intervals as frames,
// every packet is acknowledged, and all of it must reach the reader.
func TestSimOddEvenStreamFrames(t *testing.T) {
	for _, win := range []uint64{64 << 10, 1 << 20, 16 << 20} {
		t.Run(fmt.Sprintf("window=%dKiB", win>>10), func(t *testing.T) {
			p := newSimPair(t, reassemblyLink, windowConfig(win), 71)
			p.connect(t)
			s, _, err := p.client.c.streams.openStream(true)
			if err != nil || s == nil {
				t.Fatalf("openStream: %v %v", s, err)
			}
			// The 520,000 bytes, and at least a window, so that a
			// full window is sent odd frames first.
			total := max(520_000, int(win))
			const frameLen = 1000
			sent, frameNum := 0, 0
			var r *patternReader
			p.run(t, 120*time.Second, func() bool {
				if r == nil {
					if acc := acceptAll(p.server.c, true); len(acc) > 0 {
						r = newPatternReader(t, acc[0], 0)
					}
				}
				if r != nil && r.step(0) {
					return true
				}
				got := 0
				if r != nil {
					got = r.got
				}
				if p.server.c.closeState != stateActive || p.client.c.closeState != stateActive {
					t.Fatalf("closed after %d of %d bytes arrived in order: server %v, client %v",
						got, total, p.server.c.closeErr, p.client.c.closeErr)
				}
				limit := min(total, int(s.sendFC.Limit()))
				if got < sent || limit <= sent {
					return false // the reader or the credit is behind
				}
				// One window: odd-numbered frames, then even-numbered.
				type seg struct{ off, n, num int }
				var segs []seg
				for off := sent; off < limit; off += frameLen {
					frameNum++
					segs = append(segs, seg{off, min(frameLen, limit-off), frameNum})
				}
				for _, parity := range []int{1, 0} {
					for _, g := range segs {
						if g.num%2 != parity {
							continue
						}
						f := wire.StreamFrame{StreamID: s.id, Offset: uint64(g.off), Data: testPattern(0, g.off, g.n),
							Fin: g.off+g.n == total, HasLength: true}
						p.injectFrames(p.client, ackhandler.SpaceApplication, f.Append(nil))
					}
				}
				sent = limit
				return false
			})
			if r.got != total {
				t.Fatalf("EOF after %d bytes, want %d", r.got, total)
			}
			if p.server.c.closeState != stateActive || p.client.c.closeState != stateActive {
				t.Fatalf("closed: server %v, client %v", p.server.c.closeErr, p.client.c.closeErr)
			}
		})
	}
}

// burstLoss drops 10% of the datagrams at random and, now and then, a
// burst of 300 in a row: an outage of the path while the sender sends at
// full rate (about 2 ms at 2 Gbit/s). A burst ends after 5 ms even if
// fewer datagrams went, so that it does not also swallow the probes of a
// sender that went quiet (which no real outage of 2 ms does either).
type burstLoss struct {
	rng            *rand.Rand
	burstLeft      int
	burstEnd       time.Time
	dropped, total int
	bursts         int
	burstDrops     int
}

func (l *burstLoss) drop(now time.Time, _ []byte) bool {
	l.total++
	switch {
	case l.burstLeft > 0 && now.Before(l.burstEnd):
		l.burstLeft--
		l.burstDrops++
	case l.rng.IntN(1500) == 0:
		l.burstLeft, l.burstEnd = 299, now.Add(5*time.Millisecond)
		l.bursts++
		l.burstDrops++
	case l.rng.IntN(10) != 0:
		l.burstLeft = 0
		return false
	}
	l.dropped++
	return true
}

// A sender at full window (16 MiB) that loses 10% of its packets at random
// and bursts of 300 in a row: the receiver holds up to a window of
// out-of-order data in about as many intervals as packets were lost, and
// the transfer completes intact.
func TestSimFullWindowLossBursts(t *testing.T) {
	if testing.Short() {
		t.Skip("24 MB through heavy loss")
	}
	if connIDRaceEnabled {
		// One goroutine drives both ends: the race detector has nothing
		// to check and makes it 20 times slower. make test runs it in its
		// pass without the detector (Makefile, NORACE).
		t.Skip("runs without the race detector")
	}
	const win = 16 << 20
	cfg := windowConfig(win)
	cfg.Congestion = func(congestion.ControllerConfig) congestion.Controller { return &fixedWindowCC{window: 2 * win} }
	link := reassemblyLink
	link.Delay = 20 * time.Millisecond
	link.Bandwidth = 2_000_000_000
	p := newSimPair(t, link, cfg, 72)
	p.connect(t)
	loss := &burstLoss{rng: rand.New(rand.NewPCG(72, 1))}
	p.client.dropOut = loss.drop
	maxHeld := 0
	r := simTransferWatch(t, p, win+win/2, 2*win, 300*time.Second, func(s *stream) {
		s.mu.Lock()
		maxHeld = max(maxHeld, int(s.recv.highest()-s.recv.readOffset()))
		s.mu.Unlock()
	})
	t.Logf("%d of %d datagrams lost, %d in %d bursts; up to %d KiB held out of order", loss.dropped, loss.total, loss.burstDrops, loss.bursts, maxHeld>>10)
	if loss.bursts == 0 || maxHeld < win/2 {
		t.Fatalf("the test did not fill the window with out-of-order data: %d bursts, %d bytes held", loss.bursts, maxHeld)
	}
	if p.server.c.closeState != stateActive || p.client.c.closeState != stateActive {
		t.Fatalf("closed: server %v, client %v", p.server.c.closeErr, p.client.c.closeErr)
	}
	_ = r
}

// simTransferWatch is simTransfer of one stream of size bytes, whose send
// buffer holds up to sendBuf bytes (the default, 1 MiB, would keep the
// sender from filling a larger window), calling watch with the server's
// stream at every step.
func simTransferWatch(t *testing.T, p *simPair, size, sendBuf int, limit time.Duration, watch func(*stream)) *patternReader {
	t.Helper()
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v %v", s, err)
	}
	s.send.limit = sendBuf
	w := newPatternWriter(s, 0, size)
	var r *patternReader
	p.run(t, limit, func() bool {
		if !w.closed {
			w.step()
		}
		if r == nil {
			if acc := acceptAll(p.server.c, true); len(acc) > 0 {
				r = newPatternReader(t, acc[0], 0)
			}
		}
		if r == nil {
			return false
		}
		watch(r.s)
		if r.step(0) {
			if r.got != size {
				t.Fatalf("EOF after %d bytes, want %d", r.got, size)
			}
			return true
		}
		if p.server.c.closeState != stateActive || p.client.c.closeState != stateActive {
			t.Fatalf("closed: server %v, client %v", p.server.c.closeErr, p.client.c.closeErr)
		}
		return false
	})
	return r
}

// A hostile peer sends thousands of 1-byte STREAM frames with 1-byte gaps
// between them. "QUIC deployments SHOULD provide mitigations for stream
// fragmentation attacks. Mitigations could consist of ... limiting the size
// of tracking data structures" (RFC 9000, Section 21.7). The receiver
// keeps its memory bounded and closes the connection with
// PROTOCOL_VIOLATION, saying why, rather than acknowledge data it then
// drops.
func TestSimHostileTinyStreamFrames(t *testing.T) {
	p := newSimPair(t, reassemblyLink, windowConfig(1<<20), 73)
	p.connect(t)
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v %v", s, err)
	}
	before := heapInUse()
	off := uint64(2)
	for range 100 { // 100 packets of 150 frames: 15,000 gaps
		if p.client.c.closeState != stateActive {
			break // the server closed the connection
		}
		var payload []byte
		for range 150 {
			payload = wire.StreamFrame{StreamID: s.id, Offset: off, Data: []byte{byte(off)}, HasLength: true}.Append(payload)
			off += 2
		}
		p.injectFrames(p.client, ackhandler.SpaceApplication, payload)
		p.sim.RunFor(time.Millisecond)
	}
	checkCloseErrors(t, p, wire.RoleServer,
		&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeStream},
		&TransportError{Code: wire.ProtocolViolation, Remote: true})
	if r := p.server.c.closeErr.(*TransportError).Reason; !strings.Contains(r, "fragment") {
		t.Errorf("close reason %q does not say what happened", r)
	}
	if grew := int64(heapInUse()) - int64(before); grew > 1<<20 {
		t.Errorf("the live heap grew by %d KiB", grew>>10)
	}
}

// sessionTicketOfSize returns a TLS 1.3 NewSessionTicket message (RFC 8446,
// Section 4.6.1) with a ticket of n bytes.
func sessionTicketOfSize(n int) []byte {
	body := binary.BigEndian.AppendUint32(nil, 3600)  // ticket_lifetime
	body = binary.BigEndian.AppendUint32(body, 12345) // ticket_age_add
	body = append(body, 1, 7)                         // ticket_nonce
	body = binary.BigEndian.AppendUint16(body, uint16(n))
	for i := range n {
		body = append(body, byte(i*13))
	}
	body = binary.BigEndian.AppendUint16(body, 0) // no extensions
	msg := []byte{4, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}
	return append(msg, body...)
}

// The twin of TestSimOddEvenStreamFrames for CRYPTO data (issue 20): a
// 55 KB NewSessionTicket sent in 100-byte CRYPTO frames, odd-numbered
// frames first, each exactly once, holds about 275 intervals in the
// client's 1-RTT CRYPTO buffer; all of it reaches TLS.
func TestSimCryptoFragmentedTicket(t *testing.T) {
	p := newSimPair(t, reassemblyLink, nil, 74)
	p.connect(t)
	p.sim.RunFor(500 * time.Millisecond) // the server's own tickets arrive
	cs := p.client.c.spaces[ackhandler.SpaceApplication].cryptoStream()
	base := int(cs.recv.readOffset()) // the server's own tickets came first
	msg := sessionTicketOfSize(55_000)
	const frameLen = 100
	for _, parity := range []int{1, 0} {
		var payload []byte
		for k, off := 0, 0; off < len(msg); k, off = k+1, off+frameLen {
			if k%2 != parity {
				continue
			}
			f := wire.CryptoFrame{Offset: uint64(base + off), Data: msg[off:min(off+frameLen, len(msg))]}
			if len(payload)+f.EncodedLen() > 1100 {
				p.injectFrames(p.server, ackhandler.SpaceApplication, payload)
				payload = nil
			}
			payload = f.Append(payload)
		}
		p.injectFrames(p.server, ackhandler.SpaceApplication, payload)
		p.sim.RunFor(50 * time.Millisecond)
	}
	p.run(t, 5*time.Second, func() bool {
		if p.client.c.closeState != stateActive {
			t.Fatalf("client closed: %v", p.client.c.closeErr)
		}
		return int(p.client.c.spaces[ackhandler.SpaceApplication].cryptoStream().recv.readOffset()) == base+len(msg)
	})
}

// 1-byte CRYPTO frames with gaps: the client closes with
// CRYPTO_BUFFER_EXCEEDED, "An endpoint received more data in CRYPTO frames
// than it can buffer" (RFC 9000, Section 20.1), instead of dropping data
// it acknowledged.
func TestSimHostileTinyCryptoFrames(t *testing.T) {
	p := newSimPair(t, reassemblyLink, nil, 75)
	p.connect(t)
	base := p.client.c.spaces[ackhandler.SpaceApplication].cryptoStream().recv.readOffset() + 1000
	off := uint64(0)
	for range 20 {
		if p.server.c.closeState != stateActive {
			break // the client closed the connection
		}
		var payload []byte
		for range 150 {
			payload = wire.CryptoFrame{Offset: base + off, Data: []byte{1}}.Append(payload)
			off += 2
		}
		p.injectFrames(p.server, ackhandler.SpaceApplication, payload)
		p.sim.RunFor(time.Millisecond)
	}
	checkCloseErrors(t, p, wire.RoleClient,
		&TransportError{Code: wire.CryptoBufferExceeded, FrameType: wire.FrameTypeCrypto},
		&TransportError{Code: wire.CryptoBufferExceeded, Remote: true})
}

// The client's ClientHello, taken from its Initial CRYPTO stream before
// any of its datagrams leaves (they are all dropped), sent again in
// CRYPTO frames of frameLen bytes, odd-numbered first, in Initial packets
// padded to 1,200 bytes.
func injectFragmentedClientHello(t *testing.T, p *simPair, frameLen int) {
	t.Helper()
	p.client.dropOut = func(time.Time, []byte) bool { return true }
	p.sim.RunFor(time.Millisecond)
	cs := p.client.c.spaces[ackhandler.SpaceInitial].crypto
	if cs == nil || cs.send.writeOffset() == 0 {
		t.Fatal("no ClientHello")
	}
	ch := cs.send.appendData(nil, 0, int(cs.send.writeOffset()))
	var payload []byte
	flush := func() {
		for len(payload) < 1180 {
			payload = append(payload, 0) // PADDING: a datagram of 1,200 bytes
		}
		p.injectFrames(p.client, ackhandler.SpaceInitial, payload)
		payload = nil
	}
	for _, parity := range []int{1, 0} {
		for k, off := 0, 0; off < len(ch); k, off = k+1, off+frameLen {
			if k%2 != parity {
				continue
			}
			f := wire.CryptoFrame{Offset: uint64(off), Data: ch[off:min(off+frameLen, len(ch))]}
			if len(payload)+f.EncodedLen() > 1100 {
				flush()
			}
			payload = f.Append(payload)
		}
		flush()
	}
	p.client.dropOut = nil
}

// CRYPTO reassembly at the Initial level: a ClientHello in 100-byte
// frames sent odd first (more pieces than browsers make to defeat
// middleboxes) completes the handshake; in 1-byte frames it is refused
// with CRYPTO_BUFFER_EXCEEDED instead of being acknowledged and dropped.
func TestSimFragmentedClientHello(t *testing.T) {
	t.Run("100-byte frames", func(t *testing.T) {
		p := newSimPair(t, reassemblyLink, nil, 76)
		injectFragmentedClientHello(t, p, 100)
		p.connect(t)
		// From the injected packets, not from a retransmission of the
		// client's dropped ones (its first PTO is about a second).
		if el := p.sim.Elapsed(); el > 500*time.Millisecond {
			t.Fatalf("handshake took %v", el)
		}
	})
	t.Run("1-byte frames", func(t *testing.T) {
		p := newSimPair(t, reassemblyLink, nil, 77)
		injectFragmentedClientHello(t, p, 1)
		p.run(t, 10*time.Second, func() bool { return p.server.c != nil && p.server.c.closeState != stateActive })
		if te, ok := p.server.c.closeErr.(*TransportError); !ok || te.Code != wire.CryptoBufferExceeded || te.Remote {
			t.Fatalf("server closed with %v, want CRYPTO_BUFFER_EXCEEDED", p.server.c.closeErr)
		}
	})
}
