package quic

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// receivedDatagrams pops every datagram c received.
func receivedDatagrams(c *connState) [][]byte {
	var list [][]byte
	for {
		d, _ := c.datagrams.popReceived()
		if d == nil {
			return list
		}
		list = append(list, d)
	}
}

// RFC 9221, Section 3: "The max_datagram_frame_size transport parameter
// is an integer value (represented as a variable-length integer) that
// represents the maximum size of a DATAGRAM frame (including the frame
// type, length, and payload) the endpoint is willing to receive, in
// bytes." Both ends enabled them here, so both ways work.
func TestSimDatagrams(t *testing.T) {
	p := newSimPair(t, testLink, &Config{EnableDatagrams: true}, 51)
	p.connect(t)
	for _, c := range []*connState{p.client.c, p.server.c} {
		if c.peerParams.MaxDatagramFrameSize == 0 {
			t.Fatalf("%v: peer did not advertise datagram support", c.role)
		}
	}
	const n = 20
	var want [2][][]byte
	for i := range n {
		for k, c := range []*connState{p.client.c, p.server.c} {
			d := []byte(fmt.Sprintf("%v datagram %d %s", c.role, i, bytes.Repeat([]byte{byte(i)}, i*50)))
			want[k] = append(want[k], d)
			c.datagrams.pushSend(d)
		}
	}
	var got [2][][]byte
	p.run(t, 5*time.Second, func() bool {
		got[0] = append(got[0], receivedDatagrams(p.server.c)...)
		got[1] = append(got[1], receivedDatagrams(p.client.c)...)
		return len(got[0]) == n && len(got[1]) == n
	})
	for k := range got {
		for i := range got[k] {
			if !bytes.Equal(got[k][i], want[k][i]) {
				t.Errorf("datagram %d of side %d: got %q, want %q", i, k, got[k][i], want[k][i])
			}
		}
	}
	for _, c := range []*connState{p.client.c, p.server.c} {
		if c.closeState != stateActive {
			t.Fatalf("%v closed: %v", c.role, c.closeErr)
		}
	}
}

// An endpoint that did not enable datagrams gets none from an honest
// peer, and closes the connection if one arrives: "An endpoint MUST NOT
// send DATAGRAM frames until it has received the max_datagram_frame_size
// transport parameter with a non-zero value" and "An endpoint that
// receives a DATAGRAM frame when it has not indicated support via the
// transport parameter MUST terminate the connection with an error of type
// PROTOCOL_VIOLATION." (RFC 9221, Section 3)
func TestSimDatagramsNotNegotiated(t *testing.T) {
	p := newSimPair(t, testLink, &Config{EnableDatagrams: true}, 52)
	p.server.serverCfg = (&Config{}).withDefaults()
	p.connect(t)
	// The client's own state refuses to send them.
	p.client.c.datagrams.pushSend([]byte("not wanted"))
	p.run(t, time.Second, func() bool { return !p.client.c.datagrams.hasSend() })
	p.sim.RunFor(100 * time.Millisecond)
	if p.server.c.closeState != stateActive {
		t.Fatalf("client sent a DATAGRAM frame the server did not allow: server closed with %v", p.server.c.closeErr)
	}
	// A forged one closes the connection.
	p.injectFrames(p.client, ackhandler.SpaceApplication, wire.DatagramFrame{Data: []byte("forged"), HasLength: true}.Append(nil))
	checkCloseErrors(t, p, wire.RoleServer,
		&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeDatagram},
		&TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeDatagram, Remote: true})
}

// "An endpoint MUST NOT send DATAGRAM frames that are larger than the
// max_datagram_frame_size value it has received from its peer."
// (RFC 9221, Section 3) The Config does not set this value, so the test
// lowers what the client believes the server advertised.
func TestSimDatagramLargerThanPeerLimit(t *testing.T) {
	p := newSimPair(t, testLink, &Config{EnableDatagrams: true}, 53)
	p.connect(t)
	p.client.c.peerParams.MaxDatagramFrameSize = 100
	big, small := bytes.Repeat([]byte{'b'}, 100), bytes.Repeat([]byte{'s'}, 90)
	p.client.c.datagrams.pushSend(big)
	p.client.c.datagrams.pushSend(small)
	var got [][]byte
	p.run(t, time.Second, func() bool {
		got = append(got, receivedDatagrams(p.server.c)...)
		return len(got) > 0
	})
	if len(got) != 1 || !bytes.Equal(got[0], small) {
		t.Fatalf("server received %q, want only the datagram that fits the limit", got)
	}
}
