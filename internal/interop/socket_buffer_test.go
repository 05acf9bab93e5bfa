//go:build unix

package interop

import (
	"net"
	"syscall"
	"testing"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
)

// socketRecvBuffer returns the SO_RCVBUF the kernel reports for c (Linux
// reports twice the size set).
func socketRecvBuffer(t *testing.T, c *net.UDPConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var size int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		size, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return size
}

// Regression test: our Transport once left the UDP socket's receive
// buffer at the kernel default (net.core.rmem_default, 208 KiB on Linux), where quic-go raises
// it to 7 MiB. With 32 handshakes in flight on one socket the buffer
// overflows (RcvbufErrors in /proc/net/snmp): a lost first flight costs the
// 1 s initial PTO, which made BenchmarkHandshakes/ours swing between ~90 and
// ~800 handshakes/s, and bulk transfer on loopback loses ~2,000 datagrams
// per 64 MB. Transport.init now raises both buffers to 7 MiB (the kernel
// caps the size at net.core.rmem_max / wmem_max); this checks it gets what
// quic-go gets.
func TestTransportRaisesReceiveBuffer(t *testing.T) {
	_, stls := testTLS(t)

	// What an unprivileged request for quic-go's 7 MiB gets here.
	probe, err := loopbackSocket(quicGoSocketBuffer)
	if err != nil {
		t.Fatal(err)
	}
	want := socketRecvBuffer(t, probe)
	probe.Close()

	qgSock, err := loopbackSocket(0)
	if err != nil {
		t.Fatal(err)
	}
	defer qgSock.Close()
	qgTr := &quicgo.Transport{Conn: qgSock}
	defer qgTr.Close()
	qgL, err := qgTr.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer qgL.Close()

	ourSock, err := loopbackSocket(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ourSock.Close()
	ourTr := &ours.Transport{Conn: ourSock}
	defer ourTr.Close()
	if _, err := ourTr.Listen(stls, nil); err != nil {
		t.Fatal(err)
	}

	got, qg := socketRecvBuffer(t, ourSock), socketRecvBuffer(t, qgSock)
	t.Logf("SO_RCVBUF: ours %d, quic-go %d, 7 MiB requested without privilege %d", got, qg, want)
	if got < want {
		t.Errorf("our Transport left SO_RCVBUF at %d bytes; quic-go's is %d, want at least %d", got, qg, want)
	}
}
