package quic

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ListenReusePort binds the sockets of a new ReusePortGroup to address
// (such as "0.0.0.0:443", or with port 0 a port the kernel picks) on
// network ("udp", "udp4" or "udp6"), attaches the steering program, and
// checks that each socket gets the packets meant for it (which fails if
// other sockets of this user already share the port). This process reads
// generation 0 and takes every new connection.
func ListenReusePort(network, address string, cfg ReusePortConfig) (*ReusePortGroup, error) {
	n := cfg.sockets()
	g := &ReusePortGroup{n: n, gen: 0}
	if err := g.initIDs(cfg); err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		return errors.Join(err, serr)
	}}
	for i := range 2 * n {
		pc, err := lc.ListenPacket(context.Background(), network, address)
		if err != nil {
			g.Close()
			return nil, err
		}
		g.socks = append(g.socks, pc.(*net.UDPConn))
		if i == 0 {
			address = pc.LocalAddr().String() // the port the kernel picked
		}
	}
	if err := g.attach(0, n); err != nil {
		g.Close()
		return nil, err
	}
	if err := g.verify(); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// InheritReusePort makes a ReusePortGroup of the sockets another process
// passed (its Files), which reads generation prevGen (its Generation).
// This process reads the other generation and, as mode says, takes all
// new connections or shares them. cfg must give connection IDs of the
// same length as the other process's.
func InheritReusePort(files []*os.File, prevGen int, mode InheritMode, cfg ReusePortConfig) (*ReusePortGroup, error) {
	if len(files) == 0 || len(files)%2 != 0 || len(files) > 256 || prevGen < 0 || prevGen > 1 {
		return nil, errors.New("quic: InheritReusePort needs the two generations of a group")
	}
	g := &ReusePortGroup{n: len(files) / 2, gen: 1 - prevGen, share: mode == ShareMode}
	if err := g.initIDs(cfg); err != nil {
		return nil, err
	}
	for _, f := range files {
		pc, err := net.FilePacketConn(f)
		if err != nil {
			g.Close()
			return nil, err
		}
		u, ok := pc.(*net.UDPConn)
		if !ok {
			pc.Close()
			g.Close()
			return nil, errors.New("quic: InheritReusePort: not a UDP socket")
		}
		g.socks = append(g.socks, u)
	}
	base, count := g.gen*g.n, g.n
	if mode == ShareMode {
		base, count = 0, 2*g.n
	}
	if err := g.attach(base, count); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// initIDs makes the connection-ID generator of the process's sockets.
func (g *ReusePortGroup) initIDs(cfg ReusePortConfig) error {
	idx := make([]byte, g.n)
	for i := range idx {
		idx[i] = byte(g.gen*g.n + i)
	}
	var err error
	g.idGen, err = newReusePortIDGenerator(cfg.ConnectionIDGenerator, idx)
	if err == nil {
		g.cidLen = g.idGen.ConnectionIDLen()
	}
	return err
}

// attach attaches the steering program, new connections going to the
// sockets [base, base+count), to the group: any socket of a group sets
// the program of all of them.
func (g *ReusePortGroup) attach(base, count int) error {
	prog, err := reusePortProgram(g.cidLen, len(g.socks), base, count)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, ins := range prog {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	rc, err := g.socks[0].SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF,
			&unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]})
	})
	if err = errors.Join(err, serr); err != nil {
		return fmt.Errorf("quic: attaching the reuseport program: %w", err)
	}
	return nil
}

// verify sends each socket of the group a probe, a short header packet
// whose connection ID names it, and checks that the socket receives it:
// the group's indices are then the ones the program assumes.
func (g *ReusePortGroup) verify() error {
	la := g.socks[0].LocalAddr().(*net.UDPAddr)
	dst := &net.UDPAddr{IP: la.IP, Port: la.Port}
	if dst.IP.IsUnspecified() {
		dst.IP = net.IPv4(127, 0, 0, 1)
		if la.IP.To4() == nil {
			dst.IP = net.IPv6loopback
		}
	}
	src, err := net.ListenUDP("udp", &net.UDPAddr{IP: dst.IP})
	if err != nil {
		return err
	}
	defer src.Close()
	buf := make([]byte, 2048)
	for i, c := range g.socks {
		probe := make([]byte, 1+g.cidLen+16)
		rand.Read(probe)
		probe[0] = 0x40
		probe[g.cidLen] = byte(i)
		if _, err := src.WriteTo(probe, dst); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				c.SetReadDeadline(time.Time{})
				return fmt.Errorf("quic: reuseport socket %d did not receive its probe (is the port shared with other sockets?): %w", i, err)
			}
			if string(buf[:n]) == string(probe) {
				break
			}
		}
		c.SetReadDeadline(time.Time{})
	}
	return nil
}
