//go:build linux

package quic

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// procUDPDrops returns the drops counter of the UDP socket bound to port
// in /proc/net/udp (the kernel's count of datagrams it dropped for that
// socket, a full receive buffer above all).
func procUDPDrops(t *testing.T, port int) uint64 {
	t.Helper()
	f, err := os.Open("/proc/net/udp")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	want := fmt.Sprintf(":%04X", port)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 13 && strings.HasSuffix(fields[1], want) {
			n, err := strconv.ParseUint(fields[len(fields)-1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no socket on port %d in /proc/net/udp", port)
	return 0
}

// Datagrams the kernel drops because the socket's receive buffer is full
// show in TransportStats.ReceiveBufferDrops (SO_RXQ_OVFL), as many as
// /proc/net/udp counts. The buffer is filled before any Transport reads
// from the socket: a burst at a socket of the smallest buffer nobody
// reads.
func TestTransportReceiveBufferDrops(t *testing.T) {
	u := listenUDP(t, "127.0.0.1:0")
	rc, _ := u.SyscallConn()
	rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 1) })
	port := u.LocalAddr().(*net.UDPAddr).Port
	sender := listenUDP(t, "127.0.0.1:0")
	junk := make([]byte, 1200)
	junk[0] = 0x40
	for range 200 {
		sender.WriteTo(junk, u.LocalAddr())
	}
	dropped := procUDPDrops(t, port)
	if dropped == 0 {
		t.Fatal("the kernel dropped nothing: the buffer did not fill")
	}
	tr := &Transport{Conn: u}
	defer tr.Close()
	if err := tr.init(); err != nil {
		t.Fatal(err)
	}
	// The kernel tells the count with each datagram read after.
	deadline := time.Now().Add(10 * time.Second)
	for tr.Stats().ReceiveBufferDrops != dropped {
		if time.Now().After(deadline) {
			t.Fatalf("ReceiveBufferDrops = %d, /proc/net/udp counts %d", tr.Stats().ReceiveBufferDrops, dropped)
		}
		sender.WriteTo(junk, u.LocalAddr())
		time.Sleep(10 * time.Millisecond)
	}
	// The Transport asked for a larger buffer; SocketInfo says what the
	// kernel granted.
	if info := tr.SocketInfo(); info.ReceiveBuffer <= 4608 {
		t.Errorf("receive buffer of %d bytes after the Transport asked for %d", info.ReceiveBuffer, socketBufferSize)
	}
}
