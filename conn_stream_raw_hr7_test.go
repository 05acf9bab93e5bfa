package quic

import (
	"io"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// TestStreamFrameOddEncodings (hostile review of 3890a65, STREAM frames
// parsed without ParseFrame): every legal encoding of the STREAM type
// bits (RFC 9000, Section 19.8: OFF, LEN and FIN in any combination, an
// absent Offset meaning 0, an absent Length meaning the rest of the
// packet, zero-length frames, varints longer than needed in the fields,
// which only frame types must avoid, Section 12.4), in one packet and
// out of order, delivers exactly the bytes sent and then EOF; a frame
// whose type is not minimally encoded (0x40 0x08) goes through the
// general parser and closes the connection.
func TestStreamFrameOddEncodings(t *testing.T) {
	// longVarint encodes v in 8 bytes.
	longVarint := func(v uint64) []byte {
		return []byte{0xc0 | byte(v>>56), byte(v >> 48), byte(v >> 40), byte(v >> 32), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	}
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 10}, 2207)
	p.connect(t)
	// Stream 2 (client uni), "hello, world" in one packet: ", " ahead
	// of the rest (OFF|LEN), "hello" without OFF (LEN, 8-byte stream ID),
	// an empty OFF|LEN frame with 2-byte varints, and "world" with OFF and
	// no LEN, which takes the rest of the packet.
	payload := cat(
		[]byte{0x0e, 2, 5, 2}, []byte(", "),
		[]byte{0x0a}, longVarint(2), []byte{5}, []byte("hello"),
		[]byte{0x0e, 2, 0x40, 7, 0x40, 0},               // off=7 (2-byte varint), len=0
		[]byte{0x0c, 2}, longVarint(7), []byte("world"), // OFF, no LEN: the rest of the packet
	)
	p.injectFrames(p.client, ackhandler.SpaceApplication, payload)
	// A zero-length FIN at the end, in a packet of its own, OFF|FIN
	// without LEN.
	p.injectFrames(p.client, ackhandler.SpaceApplication, cat([]byte{0x0d, 2}, longVarint(12)))
	p.sim.RunFor(100 * time.Millisecond)
	if p.server.c.closeState != stateActive {
		t.Fatalf("server closed: %v", p.server.c.closeErr)
	}
	ss := acceptAll(p.server.c, false)
	if len(ss) != 1 {
		t.Fatalf("accepted %d streams", len(ss))
	}
	var got []byte
	buf := make([]byte, 5)
	var err error
	p.run(t, 5*time.Second, func() bool {
		var n int
		n, err = simRead(ss[0], buf)
		got = append(got, buf[:n]...)
		return err != nil
	})
	if err != io.EOF || string(got) != "hello, world" {
		t.Fatalf("read %q, %v; want \"hello, world\", EOF", got, err)
	}

	// The type 0x08 encoded in two bytes: not the shortest encoding.
	p.injectFrames(p.client, ackhandler.SpaceApplication, cat([]byte{0x40, 0x08, 6}, []byte("x")))
	p.run(t, 10*time.Second, p.bothClosed)
	te, ok := p.server.c.closeErr.(*TransportError)
	if !ok || te.Remote || (te.Code != wire.ProtocolViolation && te.Code != wire.FrameEncodingError) {
		t.Fatalf("server closed with %v, want PROTOCOL_VIOLATION or FRAME_ENCODING_ERROR", p.server.c.closeErr)
	}
}
