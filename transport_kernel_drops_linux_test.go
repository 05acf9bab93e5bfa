//go:build linux

package quic

import (
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketDrops returns the kernel's count of datagrams it dropped for the
// socket u (sk_drops, as /proc/net/udp shows it), read with SO_MEMINFO.
func socketDrops(t *testing.T, u *net.UDPConn) uint64 {
	t.Helper()
	const skMeminfoDrops = 8 // SK_MEMINFO_DROPS
	var info [16]uint32
	size := uint32(unsafe.Sizeof(info))
	var errno syscall.Errno
	rc, _ := u.SyscallConn()
	rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&size)), 0)
	})
	if errno != 0 || size < (skMeminfoDrops+1)*4 {
		t.Skipf("SO_MEMINFO: %v, %d bytes", errno, size)
	}
	return uint64(info[skMeminfoDrops])
}

// Datagrams the kernel drops because the socket's receive buffer is full
// show in TransportStats.ReceiveBufferDrops (SO_RXQ_OVFL), as many as
// the kernel counts (SO_MEMINFO, the count /proc/net/udp shows). The
// buffer is filled before any Transport reads
// from the socket: a burst at a socket of the smallest buffer nobody
// reads.
func TestTransportReceiveBufferDrops(t *testing.T) {
	u := listenUDP(t, "127.0.0.1:0")
	rc, _ := u.SyscallConn()
	rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 1) })
	sender := listenUDP(t, "127.0.0.1:0")
	junk := make([]byte, 1200)
	junk[0] = 0x40
	for range 200 {
		sender.WriteTo(junk, u.LocalAddr())
	}
	dropped := socketDrops(t, u)
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
	for {
		sender.WriteTo(junk, u.LocalAddr())
		time.Sleep(10 * time.Millisecond)
		got, kernel := tr.Stats().ReceiveBufferDrops, socketDrops(t, u)
		if got == kernel && got >= dropped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ReceiveBufferDrops = %d, the kernel counts %d", got, kernel)
		}
	}
	// The Transport asked for a larger buffer; SocketInfo says what the
	// kernel granted.
	if info := tr.SocketInfo(); info.ReceiveBuffer <= 4608 {
		t.Errorf("receive buffer of %d bytes after the Transport asked for %d", info.ReceiveBuffer, socketBufferSize)
	}
}
