//go:build linux

package quic

import (
	"testing"
	"time"
)

// On Linux, path MTU discovery searches up to the largest UDP payload by
// default: over loopback (MTU 65536) both ends find 65507 bytes, the
// largest UDP payload over IPv4 (65535 less the IPv4 and UDP headers);
// the probes above it are refused by the kernel (EMSGSIZE) rather than
// lost.
func TestUDPLoopbackJumboPackets(t *testing.T) {
	p := newBulkPair(t, nil)
	defer p.close()
	if !p.cli.t.SocketInfo().GRO {
		t.Skip("no GRO: the receive buffers take 2 KB datagrams")
	}
	p.transfer(t, 4<<20, make([]byte, 64<<10))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, s := p.cli.Stats().MaxDatagramSize, p.srv.Stats().MaxDatagramSize
		if c == 65507 && s == 65507 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("maximum datagram sizes: client %d, server %d; want 65507", c, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
