package quic

import (
	"net"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// 0-RTT datagrams that overtake their connection's Initial are kept for a
// while, within a bound, and handed over in arrival order to the
// connection created for the same client address and destination ID.
func TestListenerBuffersEarly0RTT(t *testing.T) {
	l := &Listener{config: (&Config{Allow0RTT: true}).withDefaults()}
	t0 := time.Unix(100, 0)
	client := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
	other := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5001}
	dcid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	dgram := func(b byte) ([]byte, *[]byte) {
		bp := getPacketBuffer()
		(*bp)[0] = b
		return (*bp)[:10], bp
	}
	for i := byte(0); i < 3; i++ {
		d, bp := dgram(i)
		if !l.bufferEarly(t0, dcid, client, d, bp) {
			t.Fatal("0-RTT datagram not buffered")
		}
	}
	d, bp := dgram(9)
	l.bufferEarly(t0, dcid, other, d, bp) // another client
	c := &Conn{}
	l.deliverEarly(c, dcid, client)
	if len(c.inbound.q) != 3 {
		t.Fatalf("delivered %d datagrams; want 3", len(c.inbound.q))
	}
	for i := byte(0); i < 3; i++ {
		if d := c.inbound.q[i]; d.data[0] != i {
			t.Fatalf("datagram %d delivered out of order (%d)", i, d.data[0])
		}
	}
	if len(l.earlyDatagrams) != 1 || l.earlyDatagrams[0].data[0] != 9 {
		t.Fatalf("the other client's datagram was not kept: %d left", len(l.earlyDatagrams))
	}
	// Bounded, and expired after a second.
	for i := 0; i < 2*earlyBufferLen; i++ {
		d, bp := dgram(byte(i))
		l.bufferEarly(t0, dcid, client, d, bp)
	}
	if len(l.earlyDatagrams) != earlyBufferLen {
		t.Fatalf("%d datagrams buffered; bound is %d", len(l.earlyDatagrams), earlyBufferLen)
	}
	d, bp = dgram(0xff)
	l.bufferEarly(t0.Add(2*earlyBufferLifetime), dcid, client, d, bp)
	if len(l.earlyDatagrams) != 1 {
		t.Fatalf("%d datagrams after expiry; want 1", len(l.earlyDatagrams))
	}
	// A server that does not accept 0-RTT keeps nothing.
	l2 := &Listener{config: (&Config{}).withDefaults()}
	d, bp = dgram(1)
	if l2.bufferEarly(t0, dcid, client, d, bp) {
		t.Fatal("0-RTT buffered without Allow0RTT")
	}
}
