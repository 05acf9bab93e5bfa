// Package twolink builds, for tests of connection migration, a device
// with two networks: a client network namespace joined to a server
// namespace by two veth pairs, "wifi" (10.1.0.2 to 10.1.0.1, the default
// route, metric 100) and "cellular" (10.2.0.2 to 10.2.0.1, metric 200).
// The server's address, 10.9.0.1, is on its loopback and reachable over
// both; the client's traffic takes wifi while wifi has its address.
// RemoveWifi and RestoreWifi are what a phone's network stack does when
// it leaves and rejoins a Wi-Fi network. It needs root and the ip command.
package twolink

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"

	"github.com/quicstack/quic/internal/linkem"
)

// Addresses of the topology.
var (
	Server   = netip.MustParseAddr("10.9.0.1")
	Wifi     = netip.MustParseAddr("10.1.0.2")
	Cellular = netip.MustParseAddr("10.2.0.2")
)

var count atomic.Uint32

// Net is the two namespaces and their links.
type Net struct {
	Client, ServerNS string // namespace names
	wifi, cell       string // the client's interfaces
}

// ErrUnsupported is wrapped by New's error where namespaces cannot be
// made (not root, no ip command).
var ErrUnsupported = errors.ErrUnsupported

// New makes the namespaces and links, with wifi up unless noWifi.
func New(noWifi bool) (*Net, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("twolink: needs root: %w", ErrUnsupported)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("twolink: needs the ip command: %w", ErrUnsupported)
	}
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, count.Add(1))
	n := &Net{Client: "tlc" + id, ServerNS: "tls" + id, wifi: "tlw" + id, cell: "tlm" + id}
	sw, sc := "tsw"+id, "tsm"+id
	cmds := [][]string{
		{"netns", "add", n.Client}, {"netns", "add", n.ServerNS},
		{"link", "add", n.wifi, "type", "veth", "peer", "name", sw},
		{"link", "add", n.cell, "type", "veth", "peer", "name", sc},
		{"link", "set", n.wifi, "netns", n.Client}, {"link", "set", n.cell, "netns", n.Client},
		{"link", "set", sw, "netns", n.ServerNS}, {"link", "set", sc, "netns", n.ServerNS},
		{"-n", n.Client, "link", "set", "lo", "up"}, {"-n", n.ServerNS, "link", "set", "lo", "up"},
		{"-n", n.ServerNS, "addr", "add", Server.String() + "/32", "dev", "lo"},
		{"-n", n.ServerNS, "addr", "add", "10.1.0.1/24", "dev", sw},
		{"-n", n.ServerNS, "addr", "add", "10.2.0.1/24", "dev", sc},
		{"-n", n.ServerNS, "link", "set", sw, "up"}, {"-n", n.ServerNS, "link", "set", sc, "up"},
		{"-n", n.Client, "link", "set", n.wifi, "up"}, {"-n", n.Client, "link", "set", n.cell, "up"},
		{"-n", n.Client, "addr", "add", Cellular.String() + "/24", "dev", n.cell},
		{"-n", n.Client, "route", "add", "default", "via", "10.2.0.1", "metric", "200"},
	}
	for i, c := range cmds {
		if err := ip(c...); err != nil {
			n.Close()
			if i == 0 {
				return nil, fmt.Errorf("%w: %w", err, ErrUnsupported)
			}
			return nil, err
		}
	}
	if !noWifi {
		if err := n.RestoreWifi(); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// RemoveWifi removes the client's wifi address, which also removes the
// routes through wifi: the client is on cellular only.
func (n *Net) RemoveWifi() error {
	return ip("-n", n.Client, "addr", "del", Wifi.String()+"/24", "dev", n.wifi)
}

// RestoreWifi gives the client its wifi address and default route back
// (as a DHCP client would): wifi is preferred again.
func (n *Net) RestoreWifi() error {
	if err := ip("-n", n.Client, "addr", "add", Wifi.String()+"/24", "dev", n.wifi); err != nil {
		return err
	}
	return ip("-n", n.Client, "route", "add", "default", "via", "10.1.0.1", "metric", "100")
}

// ListenUDP opens a UDP socket at addr in namespace ns.
func ListenUDP(ns string, addr netip.AddrPort) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := linkem.Do(ns, func() (err error) {
		c, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(addr))
		return err
	})
	return c, err
}

// Listen opens a TCP listener at addr in namespace ns.
func Listen(ns string, addr netip.AddrPort) (net.Listener, error) {
	var l net.Listener
	err := linkem.Do(ns, func() (err error) {
		l, err = net.Listen("tcp4", addr.String())
		return err
	})
	return l, err
}

// Close removes the namespaces (and with them the links).
func (n *Net) Close() error {
	e1 := ip("netns", "del", n.Client)
	e2 := ip("netns", "del", n.ServerNS)
	return errors.Join(e1, e2)
}
