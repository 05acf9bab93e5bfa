package quic

import (
	"crypto/tls"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

var fuzzTLS struct {
	once           sync.Once
	client, server *tls.Config
}

// fuzzConfig keeps the limits small so that the fuzzer reaches them.
var fuzzConfig = &Config{MaxIncomingStreams: 8, MaxIncomingUniStreams: 8, EnableDatagrams: true,
	InitialStreamReceiveWindow: 16 << 10, InitialConnectionReceiveWindow: 48 << 10,
	MaxStreamReceiveWindow: 64 << 10, MaxConnectionReceiveWindow: 128 << 10}

// Fuzz datagram kinds, the low two bits of each record's first byte.
const (
	fuzzRaw    = iota // the bytes as they are
	fuzzShort         // a short header with the server's connection ID, then the bytes
	fuzzSealed        // a 1-RTT packet the client protects, the bytes being its frames
	fuzzLong          // a version 1 long header with the right connection IDs, then the bytes
)

// FuzzServerConnAfterHandshake feeds a server connection, after a
// completed handshake, datagrams made from the fuzzer's bytes, and checks
// that it neither panics nor holds unbounded memory, whatever the peer
// sends: "it is not possible for an endpoint to ... trust the peer ...
// implementations need to defend against" resource exhaustion
// (RFC 9000, Section 21.6). The input is a sequence of records: one byte
// (kind in the low two bits, milliseconds to advance the clock in the
// others), a two-byte length, then that many bytes (fewer at the end).
func FuzzServerConnAfterHandshake(f *testing.F) {
	rec := func(kind, ms byte, b []byte) []byte {
		r := []byte{ms<<2 | kind, byte(len(b) >> 8), byte(len(b))}
		return append(r, b...)
	}
	cat := func(rs ...[]byte) []byte {
		var b []byte
		for _, r := range rs {
			b = append(b, r...)
		}
		return b
	}
	stream := func(id wire.StreamID, off uint64, data string, fin bool) []byte {
		return wire.StreamFrame{StreamID: id, Offset: off, Data: []byte(data), Fin: fin, HasLength: true}.Append(nil)
	}
	f.Add(rec(fuzzRaw, 0, []byte("garbage")))
	f.Add(rec(fuzzShort, 1, []byte{0x41, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}))
	f.Add(rec(fuzzLong, 0, make([]byte, 60)))
	f.Add(rec(fuzzSealed, 0, []byte{byte(wire.FrameTypePing)}))
	f.Add(cat(
		rec(fuzzSealed, 1, stream(0, 0, "hello", false)),
		rec(fuzzSealed, 1, stream(0, 100, "later", true)),
		rec(fuzzSealed, 30, wire.ResetStreamFrame{StreamID: 4, ErrorCode: 1, FinalSize: 10}.Append(nil)),
		rec(fuzzSealed, 1, wire.StopSendingFrame{StreamID: 8, ErrorCode: 2}.Append(nil)),
	))
	f.Add(cat(
		rec(fuzzSealed, 0, stream(2, 0, "uni", true)),
		rec(fuzzSealed, 0, stream(30, 0, "uni", true)),
		rec(fuzzSealed, 0, stream(34, 0, "beyond the limit", true)),
	))
	f.Add(rec(fuzzSealed, 0, wire.DatagramFrame{Data: []byte("dgram"), HasLength: true}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.MaxDataFrame{MaximumData: 1 << 40}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.PathChallengeFrame{Data: [8]byte{1, 2, 3}}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.NewConnectionIDFrame{SequenceNumber: 1, ConnectionID: wire.NewConnectionID([]byte{9, 9, 9, 9}), StatelessResetToken: [16]byte{1}}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.ConnectionCloseFrame{ErrorCode: 1, Reason: []byte("bye")}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.CryptoFrame{Offset: 1000, Data: []byte("tls")}.Append(nil)))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzTLS.once.Do(func() { fuzzTLS.client, fuzzTLS.server = testTLS(t) })
		// The fuzzer reports no hangs by itself: crash the worker, so that
		// it saves the input, if one takes far longer than the usual few
		// milliseconds.
		wd := time.AfterFunc(30*time.Second, func() { panic("fuzz input took 30 s: the connection hangs") })
		defer wd.Stop()
		p := newSimPairOpts(t, netsim.LinkConfig{Delay: 10 * time.Millisecond}, 1, simPairOpts{config: fuzzConfig, ctls: fuzzTLS.client, stls: fuzzTLS.server})
		p.connect(t)
		fuzzServerConn(t, p, data)
	})
}

func fuzzServerConn(t *testing.T, p *simPair, data []byte) {
	fuzzConn(t, p.server.c, p.client.c, p.sim.Now(), data)
}

// fuzzConn feeds srv, the connection under test (of either role), the
// datagrams data describes, as if its peer cli sent them: cli's keys
// protect the sealed ones, and the headers carry the connection IDs cli
// uses.
func fuzzConn(t *testing.T, srv, cli *connState, now time.Time, data []byte) {
	dcid, scid := cli.peerIDs.active(), cli.localConnID
	buf := make([]byte, 0, 1500)
	// With an input of odd length the server's application is busy: it
	// accepts streams, reads them, answers and closes them, and receives
	// datagrams; otherwise it does nothing, and the limits must hold what
	// the peer opens.
	app := &fuzzApp{c: srv, active: len(data)%2 == 1}
	for len(data) >= 3 {
		kind, ms := data[0]&3, data[0]>>2
		n := min(int(binary.BigEndian.Uint16(data[1:3])), len(data)-3, 1500)
		chunk := data[3 : 3+n]
		data = data[3+n:]
		now = now.Add(time.Duration(ms) * time.Millisecond)
		var d []byte
		switch kind {
		case fuzzRaw:
			d = append([]byte(nil), chunk...)
		case fuzzShort:
			first := byte(0x40)
			if len(chunk) > 0 {
				first |= chunk[0] & 0x3f
				chunk = chunk[1:]
			}
			d = append([]byte{first}, dcid.Bytes()...)
			d = append(d, chunk...)
		case fuzzSealed:
			if cli.closeState != stateActive || len(chunk) > 1200 {
				continue
			}
			d = sealTestPacket(cli, now, ackhandler.SpaceApplication, chunk)
		case fuzzLong:
			first := byte(0xc0)
			if len(chunk) > 0 {
				first |= chunk[0] & 0x3f
				chunk = chunk[1:]
			}
			d = append([]byte{first}, 0, 0, 0, 1)
			d = append(d, byte(dcid.Len()))
			d = append(d, dcid.Bytes()...)
			d = append(d, byte(scid.Len()))
			d = append(d, scid.Bytes()...)
			d = append(d, chunk...)
		}
		srv.handleDatagram(now, d, ackhandler.NotECT)
		app.step()
		fuzzPoll(srv, now, buf)
		checkFuzzBounds(t, srv)
	}
	// Let the timers run: loss detection, idle timeout, closing.
	for i := 0; i < 20; i++ {
		dl := srv.nextDeadline(now)
		if dl.IsZero() {
			break
		}
		if dl.After(now) {
			now = dl
		}
		srv.handleTimeout(now)
		fuzzPoll(srv, now, buf)
		checkFuzzBounds(t, srv)
	}
}

func fuzzPoll(c *connState, now time.Time, buf []byte) {
	for i := 0; i < 100; i++ {
		if c.pollTransmit(now, buf[:0]) == nil {
			return
		}
	}
}

// checkFuzzBounds checks that what c holds stays within the limits it set
// its peer, whatever the peer sent.
func checkFuzzBounds(t *testing.T, c *connState) {
	t.Helper()
	if n := len(c.undecryptable); n > maxBufferedUndecryptable {
		t.Fatalf("%d undecryptable packets buffered", n)
	}
	m := c.streams
	m.mu.Lock()
	streams := make([]*stream, 0, len(m.streams))
	for _, s := range m.streams {
		streams = append(streams, s)
	}
	nStreams, nAccept := len(m.streams), len(m.acceptBidi)+len(m.acceptUni)
	m.mu.Unlock()
	limit := int(c.config.MaxIncomingStreams + c.config.MaxIncomingUniStreams)
	if nStreams > limit || nAccept > limit {
		t.Fatalf("%d streams and %d waiting to be accepted, with stream limits adding up to %d", nStreams, nAccept, limit)
	}
	total, tables := 0, 0
	for _, s := range streams {
		s.mu.Lock()
		total += s.recv.memory()
		tables += 8 * cap(s.recv.chunks.slots)
		s.mu.Unlock()
	}
	// Chunks hold what arrived below the limits granted (a chunk at each
	// end of a stream's data at most beyond it), and the connection limit
	// covers all streams; a table has a slot per chunk of a stream's
	// window.
	if max := 2*int(c.connRecv.Limit()) + 2*nStreams*4096 + tables; total > max {
		t.Fatalf("stream receive buffers hold %d bytes, connection limit %d", total, c.connRecv.Limit())
	}
	for s := range c.spaces {
		if cs := c.spaces[s].crypto; cs != nil && cs.recv.memory() > 2*maxCryptoBufferPerLevel {
			n := cs.recv.memory()
			t.Fatalf("CRYPTO buffer of space %d holds %d bytes", s, n)
		}
	}
	c.datagrams.mu.Lock()
	nd := len(c.datagrams.received) + len(c.datagrams.send)
	c.datagrams.mu.Unlock()
	if nd > 2*datagramQueueLen {
		t.Fatalf("%d datagrams queued", nd)
	}
	if n := len(c.peerIDs.ids) + len(c.peerIDs.retiring); n > 4*int(c.peerIDs.limit)+4 {
		t.Fatalf("%d peer connection IDs held (limit %d)", n, c.peerIDs.limit)
	}
	if n := len(c.localIDs.ids); n > 64 {
		t.Fatalf("%d local connection IDs held", n)
	}
}

// fuzzApp is the server's application during fuzzing.
type fuzzApp struct {
	c       *connState
	active  bool
	streams []*stream
	buf     [2048]byte
}

func (a *fuzzApp) step() {
	if !a.active {
		return
	}
	for _, bidi := range []bool{true, false} {
		a.streams = append(a.streams, acceptAll(a.c, bidi)...)
	}
	keep := a.streams[:0]
	for i, s := range a.streams {
		n, err := simRead(s, a.buf[:])
		switch {
		case err != nil:
			if s.hasSend {
				simWrite(s, a.buf[:n%100+1])
				s.closeWrite()
			}
			continue
		case n > 0 && i%3 == 0:
			s.cancelRead(StreamErrorCode(n))
		case n > 0 && i%3 == 1 && s.hasSend:
			s.cancelWrite(StreamErrorCode(n))
		}
		keep = append(keep, s)
	}
	a.streams = keep
	receivedDatagrams(a.c)
}
