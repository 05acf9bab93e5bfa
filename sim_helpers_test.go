package quic

import (
	"bytes"
	"crypto/tls"
	"io"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// Helpers of the simulator's harness (sim_harness_test.go), shared by
// the tests that run connections on it.

// simPairOpts are the settings of a simulated pair (newSimPairOpts). The
// zero value is a version 1 client and a server with default Configs, a
// fresh certificate, no ECN and no Retry.
type simPairOpts struct {
	config         *Config // both sides' Config, unless client or server is set
	client, server *Config
	ctls, stls     *tls.Config // nil: testTLS
	early          bool        // the client offers 0-RTT
	version        wire.Version
	token          []byte // the client's address token
	retry          bool   // the server's endpoint validates the address with Retry first
	ecn            bool   // both sockets mark and read ECN
}

// newSimPairOpts is the simulator's harness: a client connection and a
// server endpoint (endpoint.go, which starts the server connection when
// the client's Initial arrives) at addresses 1:5000 and 2:443, joined by
// a path of link in each direction, with a network seeded by seed. Loss,
// RTT, bandwidth, reordering and MTU are link's; the rest is o's.
func newSimPairOpts(t testing.TB, link netsim.LinkConfig, seed uint64, o simPairOpts) *simPair {
	t.Helper()
	if o.ctls == nil || o.stls == nil {
		o.ctls, o.stls = testTLS(t)
	}
	ccfg, scfg := o.config, o.config
	if o.client != nil {
		ccfg = o.client
	}
	if o.server != nil {
		scfg = o.server
	}
	v := o.version
	if v == 0 {
		v = wire.Version1
	}
	sim := netsim.NewSim()
	n := netsim.NewNetwork(sim, seed)
	p := &simPair{sim: sim, net: n, path: n.Connect(1, 2, link, link)}
	caddr, saddr := netsim.Addr{Host: 1, Port: 5000}, netsim.Addr{Host: 2, Port: 443}
	dcid := wire.NewConnectionID([]byte{0xd0, 1, 2, 3, 4, 5, 6, 7})
	cc, err := newConnState(sim.Now(), wire.RoleClient, ccfg.withDefaults(), connParams{
		tls: o.ctls, connIDGen: &testConnIDGen{next: 0xc000}, peerConnID: dcid, origDstConnID: dcid,
		version: v, seed: seed, early: o.early, token: o.token, ecn: o.ecn,
		path: pathAddrs{local: caddr.AddrPort(), remote: saddr.AddrPort()},
	})
	if err != nil {
		t.Fatal(err)
	}
	p.client = &simEndpoint{t: t, c: cc, peer: saddr, buf: make([]byte, 0, 1500), ecn: o.ecn}
	p.server = &simEndpoint{t: t, serverCfg: scfg.withDefaults(), serverTLS: o.stls, seed: seed + 1, buf: make([]byte, 0, 1500),
		ecn: o.ecn, requireRetry: o.retry}
	p.snode = n.Attach(saddr, p.server)
	p.cnode = n.Attach(caddr, p.client)
	// As Conn does (st.streams.wake = c.wake): an application call that
	// gives the connection work (a stream opened at the peer's limit,
	// which is to send STREAMS_BLOCKED) wakes its node.
	p.client.node, p.server.node = p.cnode, p.snode
	cc.streams.wake = p.cnode.Wake
	return p
}

// newSimPair is newSimPairOpts with one Config for both sides.
func newSimPair(t testing.TB, link netsim.LinkConfig, cfg *Config, seed uint64) *simPair {
	t.Helper()
	return newSimPairOpts(t, link, seed, simPairOpts{config: cfg})
}

// confirmed reports whether both ends confirmed the handshake.
func (p *simPair) confirmed() bool {
	return p.server.c != nil && p.client.c.handshakeConfirmed && p.server.c.handshakeConfirmed
}

// connect runs the pair until both ends confirmed the handshake.
func (p *simPair) connect(t testing.TB) {
	t.Helper()
	p.run(t, 10*time.Second, p.confirmed)
}

// bothClosed reports whether both connections reached the closed state.
func (p *simPair) bothClosed() bool {
	return p.client.c.closeState == stateClosed && p.server.c != nil && p.server.c.closeState == stateClosed
}

// acceptAll returns the streams the peer opened on c since the last call.
func acceptAll(c *connState, bidi bool) []*stream {
	var list []*stream
	for {
		s, _, _ := c.streams.acceptStream(bidi)
		if s == nil {
			return list
		}
		list = append(list, s)
	}
}

// packetTypes returns the types of the packets coalesced in datagram d, as
// far as they can be parsed; short-header packets count as 1-RTT.
func packetTypes(d []byte) []wire.PacketType {
	var types []wire.PacketType
	for len(d) > 0 {
		if !wire.IsLongHeader(d[0]) {
			return append(types, wire.PacketType1RTT)
		}
		pkt, rest, err := wire.NextPacket(d, 8)
		if err != nil {
			return types
		}
		pt, err := wire.PacketTypeOf(pkt)
		if err != nil {
			return types
		}
		types = append(types, pt)
		d = rest
	}
	return types
}

func hasPacketType(d []byte, pt wire.PacketType) bool {
	for _, t := range packetTypes(d) {
		if t == pt {
			return true
		}
	}
	return false
}

// sealTestPacket protects payload (frames, as the test wrote them) in a
// packet of space s of connection c, with c's next packet number and keys,
// and returns the datagram. It lets a test send frames an honest endpoint
// never would. The packet is recorded as sent, not ack-eliciting.
func sealTestPacket(c *connState, now time.Time, s ackhandler.Space, payload []byte) []byte {
	pt, ok := c.packetTypeFor(s)
	if !ok || c.spaces[s].discarded {
		panic("sealTestPacket: no keys for the space")
	}
	pn, pnLen := c.sent.NextPacketNumber(s)
	b := make([]byte, 0, 1500)
	if pt == wire.PacketType1RTT {
		h := wire.ShortHeader{DstConnID: c.peerIDs.active(), KeyPhase: c.oneRTT.KeyPhase() == 1}
		b = h.Append(b, pn, pnLen)
	} else {
		h := wire.LongHeader{Type: pt, Version: c.version, DstConnID: c.peerIDs.active(), SrcConnID: c.localConnID}
		b = h.Append(b, pn, pnLen)
	}
	pnOff := len(b) - pnLen
	b = append(b, payload...)
	for len(b)-pnOff-pnLen < handshake.MinPayloadLen(pnLen) {
		b = append(b, 0) // PADDING
	}
	return c.sealPacket(now, b, 0, pnOff, pnLen, pn, s, pt, false, false)
}

// injectFrames queues a packet of space s carrying payload for e to send
// at its next poll.
func (p *simPair) injectFrames(e *simEndpoint, s ackhandler.Space, payload []byte) {
	e.inject = append(e.inject, sealTestPacket(e.c, p.sim.Now(), s, payload))
	if e == p.client {
		p.cnode.Wake()
	} else {
		p.snode.Wake()
	}
}

// frameLog counts the frames a connection received, by type, through the
// connection's onFrame hook.
type frameLog struct {
	counts map[wire.FrameType]int
	// last frames of some types, for checking their contents
	dataBlocked       []wire.DataBlockedFrame
	streamDataBlocked []wire.StreamDataBlockedFrame
	maxData           []uint64
}

func watchFrames(c *connState) *frameLog {
	l := &frameLog{counts: make(map[wire.FrameType]int)}
	c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		t := f.Type
		if t.IsStream() {
			t = wire.FrameTypeStream
		}
		l.counts[t]++
		switch t {
		case wire.FrameTypeDataBlocked:
			l.dataBlocked = append(l.dataBlocked, f.DataBlocked)
		case wire.FrameTypeStreamDataBlocked:
			l.streamDataBlocked = append(l.streamDataBlocked, f.StreamDataBlocked)
		case wire.FrameTypeMaxData:
			l.maxData = append(l.maxData, f.MaxData.MaximumData)
		}
	}
	return l
}

// The data of test streams: byte off of stream k is
// patternTable[(off+k*patternPhase) % patternPeriod]. The period is prime,
// so data misplaced by a frame's length (or any offset not a multiple of
// the period) is caught. The table holds one period plus 64 KiB, so any
// run of up to 64 KiB is one contiguous slice: writers and readers need
// no per-byte work, which keeps the race detector fast.
const (
	patternPeriod = 65521
	patternPhase  = 7919
)

var patternTable = func() []byte {
	b := make([]byte, patternPeriod+64<<10)
	x := uint32(1)
	for i := range patternPeriod {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x >> 11)
	}
	// Byte by byte: the 64 KiB after the period start with the period's
	// own tail, which a single copy (memmove) would take while still zero.
	for i := patternPeriod; i < len(b); i++ {
		b[i] = b[i-patternPeriod]
	}
	return b
}()

// testPattern returns the n bytes of stream k at offset off (n <= 64 KiB).
func testPattern(k, off, n int) []byte {
	i := (off + k*patternPhase) % patternPeriod
	return patternTable[i : i+n]
}

// patternWriter writes size bytes of testPattern(k, ...) to a stream
// without blocking, then closes it.
type patternWriter struct {
	s       *stream
	k, size int
	written int
	closed  bool
}

func newPatternWriter(s *stream, k, size int) *patternWriter {
	return &patternWriter{s: s, k: k, size: size}
}

// step writes what the send buffer takes and reports whether everything,
// and the FIN, was queued.
func (w *patternWriter) step() bool {
	for w.written < w.size {
		m := simWrite(w.s, testPattern(w.k, w.written, min(64<<10, w.size-w.written)))
		w.written += m
		if m == 0 {
			return false
		}
	}
	if !w.closed {
		w.s.closeWrite()
		w.closed = true
	}
	return true
}

// patternReader reads a stream and checks every byte against
// testPattern(k, ...).
type patternReader struct {
	t    testing.TB
	s    *stream
	k    int
	got  int
	eof  bool
	buf  []byte
	read int // bytes read in the last step
}

func newPatternReader(t testing.TB, s *stream, k int) *patternReader {
	return &patternReader{t: t, s: s, k: k, buf: make([]byte, 64<<10)}
}

// step reads what is available, at most limit bytes (0: no limit), and
// reports whether EOF was reached.
func (r *patternReader) step(limit int) bool {
	r.read = 0
	for !r.eof {
		b := r.buf
		if limit > 0 {
			if r.read >= limit {
				break
			}
			b = b[:min(len(b), limit-r.read)]
		}
		n, err := simRead(r.s, b)
		if !bytes.Equal(b[:n], testPattern(r.k, r.got, n)) {
			want := testPattern(r.k, r.got, n)
			i := 0
			for b[i] == want[i] {
				i++
			}
			r.t.Fatalf("stream %d: byte at offset %d is %#x, want %#x", r.s.id, r.got+i, b[i], want[i])
		}
		r.got += n
		r.read += n
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			r.t.Fatalf("stream %d: read: %v", r.s.id, err)
		}
		if n == 0 {
			break
		}
	}
	return r.eof
}

// linkWith returns testLink changed by f.
func linkWith(f func(*netsim.LinkConfig)) netsim.LinkConfig {
	l := testLink
	f(&l)
	return l
}
