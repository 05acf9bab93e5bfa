package main

import (
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// Kernel TCP's congestion control is chosen per socket (TCP_CONGESTION):
// a network namespace other than the first may only make the controllers
// of net.ipv4.tcp_allowed_congestion_control its default, and the host's
// default must not change under the other users of the machine.

// setCC returns a Control function for net.Dialer and net.ListenConfig
// that sets the socket's congestion control.
func setCC(name string) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return fmt.Errorf("TCP_CONGESTION %s: %w", name, err)
		}
		return nil
	}
}

// ccListener sets the congestion control of each accepted connection
// (Linux gives it the listener's, but says so nowhere).
type ccListener struct {
	net.Listener
	cc string
}

func (l ccListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			if err := setCC(l.cc)("", "", rc); err != nil {
				c.Close()
				return nil, err
			}
		}
	}
	return c, nil
}

// tcpCC returns the congestion control of a TCP connection.
func tcpCC(c net.Conn) (string, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return "", fmt.Errorf("%T: no socket", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return "", err
	}
	var name string
	var gerr error
	err = rc.Control(func(fd uintptr) {
		name, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	})
	if err == nil {
		err = gerr
	}
	return name, err
}
