package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// FuzzClientConnAfterHandshake is FuzzServerConnAfterHandshake in the
// other role: a client connection, after a completed handshake, is fed
// datagrams made from the fuzzer's bytes as if its server sent them
// (sealed ones with the server's 1-RTT keys), and must neither panic nor
// hold unbounded memory (RFC 9000, Section 21.6). Frames only a server
// may send (HANDSHAKE_DONE, NEW_TOKEN) and server-initiated streams are
// in the seeds. The input format is the server target's.
func FuzzClientConnAfterHandshake(f *testing.F) {
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
	// A Version Negotiation and a Retry after the handshake: both ignored.
	f.Add(rec(fuzzRaw, 0, append([]byte{0x80, 0, 0, 0, 0, 4, 1, 2, 3, 4, 4, 5, 6, 7, 8}, 0, 0, 0, 1)))
	f.Add(rec(fuzzLong, 0, append([]byte{0x30}, make([]byte, 40)...)))
	f.Add(rec(fuzzShort, 1, []byte{0x41, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}))
	f.Add(rec(fuzzSealed, 0, wire.HandshakeDoneFrame{}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.NewTokenFrame{Token: []byte("a token for later")}.Append(nil)))
	f.Add(cat(
		rec(fuzzSealed, 1, stream(1, 0, "server bidi", false)),
		rec(fuzzSealed, 1, stream(3, 0, "server uni", true)),
		rec(fuzzSealed, 1, stream(1, 100, "later", true)),
		rec(fuzzSealed, 30, wire.ResetStreamFrame{StreamID: 1, ErrorCode: 1, FinalSize: 200}.Append(nil)),
		rec(fuzzSealed, 1, wire.StopSendingFrame{StreamID: 0, ErrorCode: 2}.Append(nil)),
	))
	f.Add(cat(
		rec(fuzzSealed, 0, stream(0, 0, "response", true)),
		rec(fuzzSealed, 0, stream(4, 0, "to a stream never opened", true)),
		rec(fuzzSealed, 0, stream(35, 0, "beyond the limit", true)),
	))
	f.Add(rec(fuzzSealed, 0, wire.MaxStreamsFrame{Bidi: true, MaximumStreams: 1 << 50}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.DatagramFrame{Data: []byte("dgram"), HasLength: true}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.PathChallengeFrame{Data: [8]byte{1, 2, 3}}.Append(nil)))
	f.Add(cat(
		rec(fuzzSealed, 0, wire.NewConnectionIDFrame{SequenceNumber: 1, ConnectionID: wire.NewConnectionID([]byte{9, 9, 9, 9}), StatelessResetToken: [16]byte{1}}.Append(nil)),
		rec(fuzzSealed, 0, wire.NewConnectionIDFrame{SequenceNumber: 5, RetirePriorTo: 4, ConnectionID: wire.NewConnectionID([]byte{8, 8, 8, 8}), StatelessResetToken: [16]byte{2}}.Append(nil)),
		rec(fuzzSealed, 0, wire.RetireConnectionIDFrame{SequenceNumber: 0}.Append(nil)),
	))
	f.Add(rec(fuzzSealed, 0, wire.CryptoFrame{Offset: 0, Data: []byte{4, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0}}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.CryptoFrame{Offset: 1000, Data: []byte("tls")}.Append(nil)))
	f.Add(rec(fuzzSealed, 0, wire.ConnectionCloseFrame{ErrorCode: 1, Reason: []byte("bye")}.Append(nil)))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzTLS.once.Do(func() { fuzzTLS.client, fuzzTLS.server = testTLS(t) })
		wd := time.AfterFunc(30*time.Second, func() { panic("fuzz input took 30 s: the connection hangs") })
		defer wd.Stop()
		p := newSimPairOpts(t, netsim.LinkConfig{Delay: 10 * time.Millisecond}, 1, simPairOpts{config: fuzzConfig, ctls: fuzzTLS.client, stls: fuzzTLS.server})
		p.connect(t)
		// The client has a request in flight, so that the server's
		// frames for stream 0 and its flow control refer to something.
		if s, _, err := p.client.c.streams.openStream(true); err == nil {
			simWrite(s, []byte("GET /"))
		}
		fuzzConn(t, p.client.c, p.server.c, p.sim.Now(), data)
	})
}
