package linkem

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// tunName is the name of the TUN device in each namespace.
const tunName = "linkem0"

// tunQueue is the transmit queue of the TUN devices, in packets: what the
// kernel keeps for the forwarder to read (500 by default). Half a second
// at 100 Mbit/s of full packets, so that a forwarder held off the CPU
// loses nothing before the emulated link decides.
const tunQueue = 4096

// openTUN creates a TUN device (IFF_TUN: IP packets without a link-layer
// header; IFF_NO_PI: without the packet information prefix) inside the
// namespace ns, gives it addr and mtu, brings it up and returns its file
// descriptor, non-blocking. The device lives as long as the descriptor:
// closing it removes the device. IPv6 is disabled on the device, so that
// router solicitations and the like do not cross the emulated link.
//
// Without IFF_VNET_HDR the device offers no segmentation offload, so the
// kernel hands it packets of at most mtu bytes, each of which the link
// emulates as it is.
func openTUN(ns string, addr netip.Prefix, mtu int) (int, error) {
	fd := -1
	err := Do(ns, func() error {
		// The device is made in the namespace of the thread that opens
		// /dev/net/tun.
		var err error
		fd, err = unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return fmt.Errorf("linkem: opening /dev/net/tun: %v", err)
		}
		ifr, err := unix.NewIfreq(tunName)
		if err != nil {
			return err
		}
		ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			return fmt.Errorf("linkem: TUNSETIFF: %v", err)
		}
		// Best effort: without IPv6 in the kernel the file is absent.
		os.WriteFile("/proc/sys/net/ipv6/conf/"+tunName+"/disable_ipv6", []byte("1"), 0)
		return nil
	})
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, err
	}
	for _, args := range [][]string{
		{"-n", ns, "addr", "add", addr.String(), "dev", tunName},
		{"-n", ns, "link", "set", "dev", tunName, "mtu", strconv.Itoa(mtu), "txqueuelen", strconv.Itoa(tunQueue), "up"},
	} {
		if err := ip(args...); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}
