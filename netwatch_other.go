//go:build !linux

package quic

import (
	"errors"
	"net"
	"net/netip"
)

// The network a FollowNetwork connection lives in, elsewhere than on
// Linux: no watcher of address and route changes (the connection follows
// the network when writes fail or the path stops answering), and the
// route's source address as a connected UDP socket reports it.

type netEnv struct{}

func newNetEnv(net.PacketConn) *netEnv { return &netEnv{} }

func (e *netEnv) listenUDP(src netip.Addr) (*net.UDPConn, error) {
	network := "udp4"
	if src.Is6() {
		network = "udp6"
	}
	return net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)))
}

var errNoWatcher = errors.New("quic: no network change notifications on this platform")

func (e *netEnv) subscribe(func()) (func(), error) { return nil, errNoWatcher }

// routeSource connects a UDP socket to dst (which sends nothing) and
// reads the local address the system chose.
func (e *netEnv) routeSource(dst netip.Addr) (netip.Addr, bool) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, 9)))
	if err != nil {
		return netip.Addr{}, false
	}
	defer c.Close()
	a := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
	return a, a.IsValid() && !a.IsUnspecified()
}

func (e *netEnv) close() {}
