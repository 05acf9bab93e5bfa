//go:build linux

package quic

import (
	"os"
	"testing"
	"time"
)

// On Linux, path MTU discovery searches up to the largest UDP payload by
// default, above an Ethernet MTU once a connection sent 4 MB: over
// loopback (MTU 65536) the sending end finds 65507 bytes, the largest UDP
// payload over IPv4 (65535 less the IPv4 and UDP headers), to within the
// 1.5% the search stops at; the probes above it are refused by the
// kernel (EMSGSIZE) rather than lost. The receiving end, which sends
// little, stays at 1472.
//
// It runs with QUIC_TEST_JUMBO=1 (make test-jumbo), not in make test: on
// a machine busy enough to starve a process of CPU for three PTOs, the
// sender rightly takes the silence for a black hole (RFC 8899,
// Section 4.3), falls back and ends the search at 1471 bytes, which no
// wait undoes. What it checks runs in make test without real time:
// TestSimPathMTULoopbackJumbo (the search) and
// TestSocketLoopbackJumboDatagram (the socket's part).
func TestUDPLoopbackJumboPackets(t *testing.T) {
	if os.Getenv("QUIC_TEST_JUMBO") == "" {
		t.Skip("real time: set QUIC_TEST_JUMBO=1 (make test-jumbo)")
	}
	p := newBulkPair(t, nil)
	if !p.client.t.SocketInfo().GRO {
		t.Skip("no GRO: the receive buffers take 2 KB datagrams")
	}
	p.transfer(t, 8<<20, make([]byte, 64<<10))
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, s := p.client.Stats().MaxDatagramSize, p.server.Stats().MaxDatagramSize
		if c > 65507-65507/64 && c <= 65507 && s == 1472 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("maximum datagram sizes: client %d, server %d; want about 65507 and 1472", c, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
