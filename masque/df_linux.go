package masque

import (
	"net"
	"syscall"
)

// setDontFragment sets the Don't Fragment bit on the packets of a proxy
// socket: "UDP proxies MUST NOT introduce fragmentation at the IP layer
// when forwarding HTTP Datagrams onto a UDP socket; overly large datagrams
// are silently dropped. In IPv4, the Don't Fragment (DF) bit MUST be set,
// if possible" (RFC 9298, Section 3.1). The kernel then refuses to send a
// datagram larger than the path MTU instead of fragmenting it.
func setDontFragment(c *net.UDPConn, v6 bool) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		if v6 {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_MTU_DISCOVER, syscall.IPV6_PMTUDISC_DO)
		} else {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MTU_DISCOVER, syscall.IP_PMTUDISC_DO)
		}
	})
	if err != nil {
		return err
	}
	return serr
}
