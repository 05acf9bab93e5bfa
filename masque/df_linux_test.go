package masque

import (
	"net"
	"syscall"
	"testing"
)

// getMTUDiscover reads IP_MTU_DISCOVER back.
func getMTUDiscover(c *net.UDPConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var v int
	var gerr error
	rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MTU_DISCOVER)
	})
	return v, gerr
}

// The proxy's sockets do not fragment (RFC 9298, Section 3.1): the
// option that makes the kernel set DF and refuse datagrams above the
// path MTU is set.
func TestProxySocketDontFragment(t *testing.T) {
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := setDontFragment(c, false); err != nil {
		t.Fatal(err)
	}
	if v, err := getMTUDiscover(c); err != nil || v != 2 {
		t.Fatalf("IP_MTU_DISCOVER %d, %v; want IP_PMTUDISC_DO (2)", v, err)
	}
}
