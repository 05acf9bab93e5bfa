package quic

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"
)

// The portable socket layer (all platforms but Linux) sends a batch one
// datagram per call and reads one per call, with the sender's address.
func TestBasicConnRoundTrip(t *testing.T) {
	ur, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ur.Close()
	us, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer us.Close()
	r, s := &basicConn{pc: ur, udp: ur}, &basicConn{pc: us, udp: us}
	if s.ecn() || s.readBatchLen() != 1 || s.rxBufferSize() != packetBufferSize {
		t.Fatal("the portable layer claims a feature")
	}
	b := getTxBatch(true, 0)
	defer putTxBatch(b)
	for i := 0; i < 3; i++ {
		d := b.next()[:100+i]
		d[0] = byte(i)
		b.commit(d, 0, false)
	}
	dst := ur.LocalAddr().(*net.UDPAddr)
	if err := s.writeBatch(b, dst, dst.AddrPort(), netip.Addr{}); err != nil {
		t.Fatal(err)
	}
	ur.SetReadDeadline(time.Now().Add(5 * time.Second))
	ms := make([]rxMessage, 1)
	for i := 0; i < 3; i++ {
		buf := make([]byte, packetBufferSize)
		ms[0].buf = &buf
		n, err := r.readBatch(ms)
		if err != nil || n != 1 {
			t.Fatalf("read %d: %v", n, err)
		}
		m := ms[0]
		if m.n != 100+i || buf[0] != byte(i) || m.addr != us.LocalAddr().(*net.UDPAddr).AddrPort() || m.segSize != 0 {
			t.Fatalf("datagram %d: %d bytes starting with %d from %v", i, m.n, buf[0], m.addr)
		}
	}
}

// Errors of one datagram (ICMP errors reported on a connected socket, a
// full device queue) do not end a Transport; others do.
func TestTransientSocketErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "read", Err: os.NewSyscallError("recvmmsg", syscall.ECONNREFUSED)}, true},
		{syscall.EHOSTUNREACH, true},
		{syscall.ENETUNREACH, true},
		{syscall.ENOBUFS, true},
		{syscall.EMSGSIZE, true},
		{net.ErrClosed, false},
		{syscall.EBADF, false},
		{errors.New("something else"), false},
	} {
		if got := isTransientSocketError(tc.err); got != tc.want {
			t.Errorf("isTransientSocketError(%v) = %v", tc.err, got)
		}
	}
}
