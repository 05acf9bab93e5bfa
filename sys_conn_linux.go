//go:build linux

package quic

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/quicstack/quic/ackhandler"
)

// The Linux socket layer: recvmmsg and sendmmsg, UDP GSO and GRO, ECN
// through the TOS / traffic class control messages, IP_PKTINFO and
// IPV6_PKTINFO for the local address of each datagram, and the
// don't-fragment bit. Each feature is probed when the socket is wrapped
// and turned off for the socket if the kernel refuses it, then or later.
//
// Profiles of a bulk transfer over loopback shaped this file: before it,
// one sendto per 1,252-byte packet spent over half of the sender's CPU in
// the kernel's per-call overhead; a GSO send of 32 segments costs about
// as much as 3 single sends. All buffers live in the Transport (reads) or
// in pooled txBatches (writes) and the system calls run through RawConn
// callbacks made once, so a datagram allocates nothing.

const (
	// maxGSOSegments is the kernel's limit on segments per send
	// (UDP_MAX_SEGMENTS, 64 in kernels before 6.2).
	maxGSOSegments = 64
	// maxGSOBytes bounds the payload of one GSO send: an IP packet
	// carries at most 65,535 bytes.
	maxGSOBytes = 65535 - 8 - 40
	// rxBatchGRO and rxBatchPlain are the messages read per recvmmsg:
	// 8 × 64 KiB with GRO, 32 × 2 KiB without.
	rxBatchGRO   = 8
	rxBatchPlain = 32
	// oobSize holds the control messages of one datagram: GRO segment
	// size, TOS or traffic class, and packet info.
	oobSize = 128
)

type linuxConn struct {
	udp      *net.UDPConn
	rc       syscall.RawConn
	v6       bool // an AF_INET6 socket (perhaps dual-stack)
	wildcard bool // bound to 0.0.0.0 or [::]: replies name their source

	gso, gro, ecnOn, pktinfo, df, mmsg bool
	gsoOff                             atomic.Bool // GSO failed at run time
	rcvbuf, sndbuf                     int

	// The kernel's count of datagrams it dropped for the socket (a full
	// receive buffer, SO_RXQ_OVFL): the last value a datagram carried
	// (read loop only), and the Transport's total (socketOptions), which
	// does not wrap at 2^32.
	rxqLast     uint32
	kernelDrops *atomic.Uint64

	// Read scratch, used by the read loop only.
	rx struct {
		hdrs  [rxBatchPlain]unix.Mmsghdr
		iovs  [rxBatchPlain]unix.Iovec
		names [rxBatchPlain]unix.RawSockaddrInet6
		oob   [rxBatchPlain][oobSize]byte
		n     int // messages to read
		got   int
		errno syscall.Errno
	}
	readFn func(fd uintptr) bool
}

// txScratch is the Linux socket layer's per-batch write state, for as
// many datagrams as the batch holds.
type txScratch struct {
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	oob   [][oobSize]byte
	first []uint8 // first datagram of each message; first[nmsg] == batch length
	gso   []bool  // message uses UDP_SEGMENT
	name  unix.RawSockaddrInet6
	nmsg  int
	pos   int // next message to send
	sent  int
	errno syscall.Errno
	// failed0 is the error of the first message of the last send, if it
	// failed.
	failed0 syscall.Errno
	// writeFn is s.write, made once per batch so that a send does not
	// allocate a closure.
	writeFn func(fd uintptr) bool
}

// newTxScratch returns the scratch space of a batch of n datagrams.
func newTxScratch(n int) txScratch {
	return txScratch{
		hdrs: make([]unix.Mmsghdr, n), iovs: make([]unix.Iovec, n), oob: make([][oobSize]byte, n),
		first: make([]uint8, n+1), gso: make([]bool, n),
	}
}

func newOptimizedConn(u *net.UDPConn, o socketOptions) (sysConn, error) {
	rc, err := u.SyscallConn()
	if err != nil {
		return nil, err
	}
	c := &linuxConn{udp: u, rc: rc}
	la, _ := u.LocalAddr().(*net.UDPAddr)
	c.wildcard = la != nil && la.IP.IsUnspecified()
	var domain int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		domain, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
		if serr != nil {
			return
		}
		c.v6 = domain == unix.AF_INET6
		c.setup(int(fd), o)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, serr
	}
	c.mmsg = !o.disableBatch
	c.readFn = c.doRead
	return c, nil
}

// setup sets the socket options and records which ones the kernel took.
func (c *linuxConn) setup(fd int, o socketOptions) {
	on := func(level, opt int) bool { return unix.SetsockoptInt(fd, level, opt, 1) == nil }
	// Buffers: ask politely, then (as root) insist.
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, o.bufferSize)
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, o.bufferSize)
	if v, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF); v < o.bufferSize {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, o.bufferSize)
	}
	if v, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF); v < o.bufferSize {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, o.bufferSize)
	}
	c.rcvbuf, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	c.sndbuf, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	// Datagrams then carry the count of those dropped for a full buffer.
	if c.kernelDrops = o.receiveDrops; c.kernelDrops != nil {
		on(unix.SOL_SOCKET, unix.SO_RXQ_OVFL)
	}

	if !o.disableGSO {
		// Kernels that know UDP_SEGMENT (4.18) answer the query.
		_, err := unix.GetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_SEGMENT)
		c.gso = err == nil
	}
	if !o.disableGRO {
		c.gro = on(unix.IPPROTO_UDP, unix.UDP_GRO)
	}
	if !o.disableECN {
		if c.v6 {
			c.ecnOn = on(unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS)
			on(unix.IPPROTO_IP, unix.IP_RECVTOS) // IPv4 on a dual-stack socket
		} else {
			c.ecnOn = on(unix.IPPROTO_IP, unix.IP_RECVTOS)
		}
	}
	if c.v6 {
		c.pktinfo = on(unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO)
		on(unix.IPPROTO_IP, unix.IP_PKTINFO)
		c.df = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE) == nil &&
			on(unix.IPPROTO_IPV6, unix.IPV6_DONTFRAG)
		unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE)
	} else {
		c.pktinfo = on(unix.IPPROTO_IP, unix.IP_PKTINFO)
		// PROBE sets DF but ignores the kernel's path MTU cache: the
		// connection's own PMTU search decides (RFC 8899, Section 3).
		c.df = unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE) == nil
	}
}

func (c *linuxConn) info() SocketInfo {
	return SocketInfo{
		ReceiveBuffer: c.rcvbuf, SendBuffer: c.sndbuf, BatchIO: c.mmsg,
		GSO: c.gso && !c.gsoOff.Load(), GRO: c.gro, ECN: c.ecnOn, PacketInfo: c.pktinfo, DontFragment: c.df,
	}
}

// payloadLimits: with GRO every read buffer holds 64 KiB, so any UDP
// payload arrives whole; without it, packetBufferSize bytes. The kernel
// refuses datagrams larger than the interface's MTU at once (EMSGSIZE),
// so path MTU discovery may search up to the largest UDP payload: probes
// above the local MTU cost nothing.
func (c *linuxConn) payloadLimits() (send, recv int) {
	return jumboMaxPacketSize, min(c.rxBufferSize(), maxUDPPayloadSize)
}

func (c *linuxConn) rxBufferSize() int {
	if c.gro {
		return groBufferSize
	}
	return packetBufferSize
}

func (c *linuxConn) readBatchLen() int {
	switch {
	case !c.mmsg:
		return 1
	case c.gro:
		return rxBatchGRO
	}
	return rxBatchPlain
}

func (c *linuxConn) ecn() bool { return c.ecnOn }

func (c *linuxConn) readBatch(ms []rxMessage) (int, error) {
	r := &c.rx
	r.n = min(len(ms), len(r.hdrs))
	for i := 0; i < r.n; i++ {
		b := *ms[i].buf
		r.iovs[i].Base = &b[0]
		r.iovs[i].SetLen(len(b))
		h := &r.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&r.names[i]))
		h.Namelen = unix.SizeofSockaddrInet6
		h.Iov = &r.iovs[i]
		h.Iovlen = 1
		h.Control = &r.oob[i][0]
		h.SetControllen(oobSize)
		h.Flags = 0
		r.hdrs[i].Len = 0
	}
	if err := c.rc.Read(c.readFn); err != nil {
		return 0, err
	}
	if r.errno != 0 {
		return 0, r.errno
	}
	for i := 0; i < r.got; i++ {
		m := &ms[i]
		m.n = int(r.hdrs[i].Len)
		m.from, m.segSize, m.ecn, m.dst = nil, 0, ackhandler.NotECT, netip.Addr{}
		if r.hdrs[i].Hdr.Flags&unix.MSG_TRUNC != 0 {
			m.n = len(*m.buf) + 1 // too long: the Transport drops it
		}
		m.addr = sockaddrToAddrPort(&r.names[i])
		c.parseControl(m, r.oob[i][:r.hdrs[i].Hdr.Controllen])
	}
	return r.got, nil
}

// doRead is the RawConn callback of readBatch.
func (c *linuxConn) doRead(fd uintptr) bool {
	r := &c.rx
	for {
		n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.hdrs[0])), uintptr(r.n), 0, 0, 0)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false // wait until readable
		}
		r.got, r.errno = int(n), e
		return true
	}
}

// parseControl reads the control messages of a received datagram without
// allocating (unix.ParseSocketControlMessage would).
func (c *linuxConn) parseControl(m *rxMessage, oob []byte) {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(oob) {
			return
		}
		data := oob[unix.CmsgLen(0):l]
		switch {
		case h.Level == unix.IPPROTO_UDP && h.Type == unix.UDP_GRO && len(data) >= 4:
			m.segSize = int(*(*int32)(unsafe.Pointer(&data[0])))
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_TOS && len(data) >= 1:
			m.ecn = ackhandler.ECNMark(data[0] & 0b11)
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_TCLASS && len(data) >= 4:
			m.ecn = ackhandler.ECNMark(*(*int32)(unsafe.Pointer(&data[0])) & 0b11)
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SO_RXQ_OVFL && len(data) >= 4:
			// The kernel's drop count since the socket was made.
			n := *(*uint32)(unsafe.Pointer(&data[0]))
			if d := n - c.rxqLast; d > 0 && c.kernelDrops != nil {
				c.kernelDrops.Add(uint64(d))
			}
			c.rxqLast = n
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			p := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			m.dst = netip.AddrFrom4(p.Addr)
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			p := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			m.dst = withZoneIndex(netip.AddrFrom16(p.Addr).Unmap(), p.Ifindex)
		}
		oob = oob[min(cmsgAlign(l), len(oob)):]
	}
}

// isMsgTooBig reports whether a send failed because the datagram is
// larger than the interface's MTU.
func isMsgTooBig(err error) bool { return errors.Is(err, unix.EMSGSIZE) }

func cmsgAlign(n int) int { return (n + unix.SizeofPtr - 1) &^ (unix.SizeofPtr - 1) }

func sockaddrToAddrPort(sa *unix.RawSockaddrInet6) netip.AddrPort {
	port := uint16(sa.Port>>8 | sa.Port<<8) // network byte order
	switch sa.Family {
	case unix.AF_INET6:
		return netip.AddrPortFrom(withZoneIndex(netip.AddrFrom16(sa.Addr).Unmap(), sa.Scope_id), port)
	case unix.AF_INET:
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port)
	}
	return netip.AddrPort{}
}

// fillSockaddr writes ap into s.name for the socket's family and returns
// its length, or 0 if the socket cannot reach ap.
func (c *linuxConn) fillSockaddr(s *txScratch, ap netip.AddrPort) uint32 {
	port := ap.Port()
	if c.v6 {
		s.name = unix.RawSockaddrInet6{Family: unix.AF_INET6, Port: port>>8 | port<<8, Addr: ap.Addr().As16(), Scope_id: zoneIndex(ap.Addr().Zone())}
		return unix.SizeofSockaddrInet6
	}
	a := ap.Addr().Unmap()
	if !a.Is4() {
		return 0
	}
	sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(&s.name))
	*sa4 = unix.RawSockaddrInet4{Family: unix.AF_INET, Port: port>>8 | port<<8, Addr: a.As4()}
	return unix.SizeofSockaddrInet4
}

var errUnreachableFamily = errors.New("quic: address family not reachable from this socket")

func (c *linuxConn) writeBatch(b *txBatch, addr net.Addr, ap netip.AddrPort, src netip.Addr) error {
	if !ap.IsValid() {
		ap, _ = addrPortOf(addr)
	}
	s := &b.scratch
	namelen := c.fillSockaddr(s, ap)
	if namelen == 0 {
		return errUnreachableFamily
	}
	if s.writeFn == nil {
		s.writeFn = s.write
	}
	if !c.wildcard {
		src = netip.Addr{} // the kernel picks the bound address
	}
	return c.send(b, 0, namelen, ap.Addr().Unmap().Is4(), src, true)
}

// send sends datagrams from..b.n of b, grouping runs for GSO if allowGSO
// and the socket can.
func (c *linuxConn) send(b *txBatch, from int, namelen uint32, to4 bool, src netip.Addr, allowGSO bool) error {
	s := &b.scratch
	gso := allowGSO && c.gso && !c.gsoOff.Load()
	s.nmsg, s.pos, s.failed0 = 0, 0, 0
	for i := from; i < b.n; {
		j := i + 1
		if gso && !b.solo[i] {
			// A run of equal-size datagrams with the same marking; a
			// shorter one ends it: the kernel cuts the payload into
			// gso_size pieces, of which only the last may be shorter.
			size, total := b.sizes[i], int(b.sizes[i])
			for j < b.n && !b.solo[j] && j-i < maxGSOSegments && b.ecn[j] == b.ecn[i] && total+int(b.sizes[j]) <= maxGSOBytes {
				if b.sizes[j] > size {
					break
				}
				total += int(b.sizes[j])
				j++
				if b.sizes[j-1] < size {
					break
				}
			}
		}
		k := s.nmsg
		s.first[k] = uint8(i)
		s.gso[k] = j-i > 1
		for p := i; p < j; p++ {
			s.iovs[p].Base = &b.buf[b.off[p]]
			s.iovs[p].SetLen(int(b.sizes[p]))
		}
		h := &s.hdrs[k].Hdr
		h.Name = (*byte)(unsafe.Pointer(&s.name))
		h.Namelen = namelen
		h.Iov = &s.iovs[i]
		h.SetIovlen(j - i)
		oob := c.appendControl(s.oob[k][:0], s.gso[k], int(b.sizes[i]), b.ecn[i], to4, src)
		if len(oob) > 0 {
			h.Control = &s.oob[k][0]
		} else {
			h.Control = nil
		}
		h.SetControllen(len(oob))
		h.Flags = 0
		s.nmsg++
		i = j
	}
	s.first[s.nmsg] = uint8(b.n)
	var firstErr error
	for s.pos < s.nmsg {
		if !c.mmsg {
			// One message per call, for the fallback test of sendmmsg.
			n := s.nmsg
			s.nmsg = s.pos + 1
			err := c.rc.Write(s.writeFn)
			s.nmsg = n
			if err != nil {
				return err
			}
		} else if err := c.rc.Write(s.writeFn); err != nil {
			return err
		}
		if s.errno == 0 {
			s.pos += s.sent
			continue
		}
		// The message at s.pos failed; the ones before it went.
		if s.gso[s.pos] && (s.errno == unix.EIO || s.errno == unix.EINVAL) {
			// The kernel or the device cannot segment: turn GSO off for
			// the socket and send the rest one datagram per message. If
			// the first of them fails the same way, or as too big for
			// the interface (the kernel refuses segments larger than
			// its MTU with EINVAL), the fault was not GSO's: turn it
			// back on.
			errno, first := s.errno, int(s.first[s.pos])
			c.gsoOff.Store(true)
			err := c.send(b, first, namelen, to4, src, true)
			if s.failed0 == errno || s.failed0 == unix.EMSGSIZE {
				c.gsoOff.Store(false)
			}
			return err
		}
		if s.errno == unix.EMSGSIZE {
			// Larger than the interface's MTU (the don't-fragment bit
			// is set): the connection learns of it (a path MTU probe).
			b.tooBig = max(b.tooBig, int(b.sizes[s.first[s.pos]]))
			if s.gso[s.pos] {
				// The run's first datagram was the probe, and a run of
				// smaller datagrams may follow it: the kernel refused
				// the whole run. Send the rest one datagram per
				// message, so that only the probe is lost.
				return c.send(b, int(s.first[s.pos]), namelen, to4, src, false)
			}
		}
		if firstErr == nil {
			firstErr = s.errno
		}
		if s.pos == 0 {
			s.failed0 = s.errno
		}
		s.pos++ // drop it: UDP send errors are transient, loss recovery copes
	}
	return firstErr
}

// write is the RawConn callback of send: sendmmsg from s.pos.
func (s *txScratch) write(fd uintptr) bool {
	for {
		n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&s.hdrs[s.pos])), uintptr(s.nmsg-s.pos), 0, 0, 0)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false // wait until writable
		}
		s.sent, s.errno = int(n), e
		return true
	}
}

// appendControl appends the control messages of one sendmsg: the GSO
// segment size, the ECN codepoint (RFC 9000, Section 13.4: "the endpoint
// sends packets with an ECT marking") and the source address.
func (c *linuxConn) appendControl(b []byte, gso bool, segSize int, ecn ackhandler.ECNMark, to4 bool, src netip.Addr) []byte {
	if gso {
		var d []byte
		b, d = appendCmsg(b, unix.IPPROTO_UDP, unix.UDP_SEGMENT, 2)
		*(*uint16)(unsafe.Pointer(&d[0])) = uint16(segSize)
	}
	if ecn != ackhandler.NotECT && c.ecnOn {
		var d []byte
		if to4 {
			b, d = appendCmsg(b, unix.IPPROTO_IP, unix.IP_TOS, 4)
		} else {
			b, d = appendCmsg(b, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, 4)
		}
		*(*int32)(unsafe.Pointer(&d[0])) = int32(ecn)
	}
	if src.IsValid() && c.pktinfo {
		var d []byte
		if to4 && src.Unmap().Is4() {
			b, d = appendCmsg(b, unix.IPPROTO_IP, unix.IP_PKTINFO, unix.SizeofInet4Pktinfo)
			p := (*unix.Inet4Pktinfo)(unsafe.Pointer(&d[0]))
			*p = unix.Inet4Pktinfo{Spec_dst: src.Unmap().As4()}
		} else if !to4 && src.Is6() {
			b, d = appendCmsg(b, unix.IPPROTO_IPV6, unix.IPV6_PKTINFO, unix.SizeofInet6Pktinfo)
			p := (*unix.Inet6Pktinfo)(unsafe.Pointer(&d[0]))
			// A link-local source needs its interface, or the kernel
			// refuses the datagram (EINVAL).
			*p = unix.Inet6Pktinfo{Addr: src.As16(), Ifindex: zoneIndex(src.Zone())}
		}
	}
	return b
}

// appendCmsg appends a control message header for n bytes of data to b,
// whose capacity must hold it, and returns b and the data.
func appendCmsg(b []byte, level, typ int32, n int) ([]byte, []byte) {
	start := len(b)
	b = b[:start+unix.CmsgSpace(n)]
	clear(b[start:])
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[start]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(n))
	return b, b[start+unix.CmsgLen(0) : start+unix.CmsgLen(n)]
}

// socketBufferSizes reports a UDP socket's buffer sizes.
func socketBufferSizes(pc net.PacketConn) (rcv, snd int) {
	sc, ok := pc.(syscall.Conn)
	if !ok {
		return 0, 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, 0
	}
	rc.Control(func(fd uintptr) {
		rcv, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		snd, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	return rcv, snd
}
