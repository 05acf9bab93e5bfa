//go:build linux

package quic

import (
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
func TestUDPLoopbackJumboPackets(t *testing.T) {
	p := newBulkPair(t, nil)
	defer p.close()
	if !p.cli.t.SocketInfo().GRO {
		t.Skip("no GRO: the receive buffers take 2 KB datagrams")
	}
	p.transfer(t, 8<<20, make([]byte, 64<<10))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, s := p.cli.Stats().MaxDatagramSize, p.srv.Stats().MaxDatagramSize
		if c > 65507-65507/64 && c <= 65507 && s == 1472 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("maximum datagram sizes: client %d, server %d; want about 65507 and 1472", c, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
