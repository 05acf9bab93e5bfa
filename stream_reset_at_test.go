package quic

import (
	"bytes"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// newResetAtTest connects a pair, both with EnableResetStreamAt unless
// serverOff, over link.
func newResetAtTest(t *testing.T, link netsim.LinkConfig, seed uint64, serverOff bool) *streamTest {
	t.Helper()
	cfg := &Config{MaxIncomingStreams: 1, EnableResetStreamAt: true}
	scfg := *cfg
	scfg.EnableResetStreamAt = !serverOff
	ctls, stls := testTLS(t)
	p := newSimPairOpts(t, link, seed, simPairOpts{client: cfg, server: &scfg, ctls: ctls, stls: stls})
	p.connect(t)
	return &streamTest{t: t, p: p, buf: make([]byte, 64<<10), scratch: make([]byte, 256<<10),
		slog: watchFrames(p.server.c), clog: watchFrames(p.client.c)}
}

// "When using a RESET_STREAM_AT frame, the initiator MUST guarantee
// reliable delivery of stream data of at least Reliable Size bytes. If
// STREAM frames containing data up to that byte offset are lost, the
// initiator MUST retransmit this data" (draft-ietf-quic-reliable-stream-
// reset, Section 5): over a link that loses 10% of the packets, the
// receiver reads exactly the first Reliable Size bytes, intact, and then
// the reset.
func TestSimResetStreamAtDeliversReliableBytes(t *testing.T) {
	lossy := testLink
	lossy.LossProb = 0.1
	st := newResetAtTest(t, lossy, 91, false)
	if !st.p.client.c.resetStreamAtNegotiated() || !st.p.server.c.resetStreamAtNegotiated() {
		t.Fatal("reset_stream_at not negotiated")
	}
	st.open()
	for i := range st.scratch {
		st.scratch[i] = byte(i * 7)
	}
	st.writeSome(st.cs, 200<<10)
	const reliable = 150_000
	st.cs.cancelWriteAt(0x33, reliable)
	st.checkWriteErr("client", st.cs, 0x33, false)
	ss := st.server()
	var got []byte
	var err error
	st.run(10*time.Second, func() bool {
		var n int
		n, err = simRead(ss, st.buf)
		got = append(got, st.buf[:n]...)
		return err != nil
	})
	st.checkStreamError("server read", err, 0x33, true)
	if len(got) != reliable || !bytes.Equal(got, st.scratch[:reliable]) {
		t.Fatalf("server read %d bytes (intact: %v), want the first %d", len(got), bytes.Equal(got, st.scratch[:len(got)]), reliable)
	}
	if st.slog.counts[wire.FrameTypeResetStreamAt] == 0 || st.slog.counts[wire.FrameTypeResetStream] != 0 {
		t.Errorf("server received %d RESET_STREAM_AT and %d RESET_STREAM frames", st.slog.counts[wire.FrameTypeResetStreamAt], st.slog.counts[wire.FrameTypeResetStream])
	}
	st.finishOther()
	st.retired()
}

// A reset whose Reliable Size lies below what the receiver has read is
// reported at once, as RESET_STREAM would be.
func TestSimResetStreamAtBelowReadOffset(t *testing.T) {
	st := newResetAtTest(t, testLink, 92, false)
	st.open()
	st.writeSome(st.cs, 10_000)
	ss := st.server()
	read := 0
	st.run(2*time.Second, func() bool {
		n, _ := simRead(ss, st.buf[:1000])
		read += n
		return read >= 5000
	})
	st.cs.cancelWriteAt(0x34, 10) // the header-sized prefix, long read
	n, err := st.readUntilErr(ss)
	st.checkStreamError("server read", err, 0x34, true)
	if read+n > 10_000 {
		t.Errorf("read %d bytes", read+n)
	}
	st.finishOther()
	st.retired()
}

// A peer that did not advertise reset_stream_at must not get
// RESET_STREAM_AT ("Support for receiving RESET_STREAM_AT frames is
// advertised by sending the reset_stream_at (0x1d) transport parameter",
// Section 3): CancelWriteAt sends RESET_STREAM instead.
func TestSimResetStreamAtFallsBackToResetStream(t *testing.T) {
	st := newResetAtTest(t, testLink, 93, true)
	if st.p.client.c.resetStreamAtNegotiated() {
		t.Fatal("negotiated with a server that did not enable it")
	}
	st.open()
	st.writeSome(st.cs, 1000)
	st.cs.cancelWriteAt(0x35, 500)
	ss := st.server()
	_, err := st.readUntilErr(ss)
	st.checkStreamError("server read", err, 0x35, true)
	if st.slog.counts[wire.FrameTypeResetStreamAt] != 0 || st.slog.counts[wire.FrameTypeResetStream] == 0 {
		t.Errorf("server received %d RESET_STREAM_AT and %d RESET_STREAM frames", st.slog.counts[wire.FrameTypeResetStreamAt], st.slog.counts[wire.FrameTypeResetStream])
	}
	st.finishOther()
	st.retired()
}
