package quic

import (
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/quicstack/quic/ackhandler"
)

// SocketInfo describes what a Transport's socket achieved: the buffer
// sizes the kernel granted and the offloads in use. Features the kernel or
// the interface rejected at run time are reported off.
type SocketInfo struct {
	// ReceiveBuffer and SendBuffer are the socket buffer sizes in bytes as
	// the kernel reports them (Linux reports twice the size it was asked
	// for, to account for its bookkeeping), or 0 when unknown.
	ReceiveBuffer, SendBuffer int
	// BatchIO reports batched system calls (recvmmsg, sendmmsg).
	BatchIO bool
	// GSO reports UDP generic segmentation offload: a run of equal-size
	// packets leaves in one system call (UDP_SEGMENT).
	GSO bool
	// GRO reports UDP generic receive offload: coalesced datagrams are
	// received in one system call and split (UDP_GRO).
	GRO bool
	// ECN reports that packets are marked ECT(0) and the ECN codepoint of
	// received packets is read (RFC 9000, Section 13.4).
	ECN bool
	// PacketInfo reports that the destination address of each received
	// datagram is known and replies leave from it, which matters on
	// sockets bound to a wildcard address (IP_PKTINFO, IPV6_PKTINFO).
	PacketInfo bool
	// DontFragment reports that datagrams are sent with the don't-fragment
	// bit, so that path MTU discovery is honest (IP_MTU_DISCOVER,
	// IPV6_DONTFRAG).
	DontFragment bool
}

// socketOptions are the Transport fields that shape the socket layer.
type socketOptions struct {
	disableGSO, disableGRO, disableECN, disableBatch bool
	bufferSize                                       int
	// receiveDrops, if set, counts the datagrams the kernel dropped for
	// a full receive buffer, where the socket layer learns of them.
	receiveDrops *atomic.Uint64
}

// rxMessage is one received datagram, or with GRO a run of datagrams of
// segSize bytes each (the last may be shorter) coalesced by the kernel.
type rxMessage struct {
	buf     *[]byte // pooled storage; the datagram is (*buf)[:n]
	n       int
	segSize int            // 0: a single datagram
	addr    netip.AddrPort // the sender, when the socket layer knows it as such
	from    net.Addr       // the sender, on sockets that are not UDP sockets
	dst     netip.Addr     // the local address it was sent to, if known
	ecn     ackhandler.ECNMark
}

// peer returns the sender as a net.Addr (allocates for UDP addresses: call
// it only off the hot path).
func (m *rxMessage) peer() net.Addr {
	if m.from != nil {
		return m.from
	}
	return net.UDPAddrFromAddrPort(m.addr)
}

// remote returns the sender as paths know it (IPv4-mapped addresses as
// IPv4), without allocating for UDP sockets.
func (m *rxMessage) remote() netip.AddrPort {
	if m.addr.IsValid() {
		return netip.AddrPortFrom(m.addr.Addr().Unmap(), m.addr.Port())
	}
	return unmappedAddrPort(m.from)
}

// txBatch is a run of datagrams stored back to back in buf, that a
// connection hands to the socket in one call. Batches are pooled, in two
// sizes: small ones for the few datagrams of most wakeups (handshakes,
// ACKs, requests), large ones for bulk transfers and datagrams larger
// than an Ethernet MTU. Each also holds the socket layer's scratch space
// so that concurrent writers share nothing.
type txBatch struct {
	buf   []byte // datagrams
	off   []uint32
	sizes []uint16
	ecn   []ackhandler.ECNMark
	// solo marks a datagram to send in a message of its own, never in a
	// GSO run: a path MTU probe, which the kernel may refuse as too big
	// for the interface without that failing the run's other datagrams.
	solo  []bool
	large bool
	n     int
	used  int // bytes of buf in use
	// tooBig is set by the socket layer to the size of the largest
	// datagram the kernel refused as larger than the interface's MTU
	// (EMSGSIZE), or 0.
	tooBig  int
	scratch txScratch
}

const (
	// txBatchLen is the number of datagrams in a large batch: 132 of an
	// Ethernet MTU make three full GSO sends (64 KiB each at most) in one
	// sendmmsg. Its storage takes 132 of them, or three of the largest
	// UDP payload.
	txBatchLen   = 132
	txBatchBytes = 3 * (maxPacketBufferSize + 1)
	// txSmallLen and txSmallBytes are those of a small batch: 32
	// datagrams of an Ethernet MTU.
	txSmallLen       = 32
	txSmallDatagram  = 1500
	txSmallBatchSize = txSmallLen * txSmallDatagram
)

var (
	txBatchPool = sync.Pool{New: func() any { return newTxBatch(txBatchLen, txBatchBytes) }}
	txSmallPool = sync.Pool{New: func() any { return newTxBatch(txSmallLen, txSmallBatchSize) }}
)

func newTxBatch(n, size int) *txBatch {
	return &txBatch{
		buf: make([]byte, size), off: make([]uint32, n), sizes: make([]uint16, n),
		ecn: make([]ackhandler.ECNMark, n), solo: make([]bool, n), large: n == txBatchLen,
		scratch: newTxScratch(n),
	}
}

// getTxBatch returns a small batch, or a large one if large is set or
// datagrams may be larger than a small one holds (maxDatagram bytes).
func getTxBatch(large bool, maxDatagram int) *txBatch {
	if large || maxDatagram > txSmallDatagram {
		return txBatchPool.Get().(*txBatch)
	}
	return txSmallPool.Get().(*txBatch)
}

func putTxBatch(b *txBatch) {
	b.reset()
	if b.large {
		txBatchPool.Put(b)
	} else {
		txSmallPool.Put(b)
	}
}

// reset empties b.
func (b *txBatch) reset() { b.n, b.used, b.tooBig = 0, 0, 0 }

// next returns empty space for the next datagram, with a capacity of
// room() bytes at most maxPacketBufferSize.
func (b *txBatch) next() []byte {
	return b.buf[b.used:b.used:min(len(b.buf), b.used+maxPacketBufferSize)]
}

// room returns the capacity of the space next returns, or 0 if b is full.
func (b *txBatch) room() int {
	if b.n == len(b.sizes) {
		return 0
	}
	return min(len(b.buf)-b.used, maxPacketBufferSize)
}

// commit records the datagram written into the space next returned (or
// copies d there); solo marks a path MTU probe.
func (b *txBatch) commit(d []byte, ecn ackhandler.ECNMark, solo bool) {
	off := b.used
	if len(d) > 0 && &d[0] != &b.buf[off] {
		copy(b.buf[off:], d)
	}
	b.off[b.n] = uint32(off)
	b.sizes[b.n] = uint16(len(d))
	b.ecn[b.n] = ecn
	b.solo[b.n] = solo
	b.n++
	b.used += len(d)
}

// packet returns datagram i.
func (b *txBatch) packet(i int) []byte {
	off := int(b.off[i])
	return b.buf[off : off+int(b.sizes[i])]
}

// sysConn is the socket layer under a Transport: batched reads and writes
// with whatever offloads the platform offers. readBatch is called by one
// goroutine; writeBatch and writeOne by any number at once.
type sysConn interface {
	// readBatch reads at least one datagram into ms, whose bufs are set,
	// and returns how many it read.
	readBatch(ms []rxMessage) (int, error)
	// writeBatch sends b's datagrams to addr (ap is its address, if addr
	// is a UDP address), from the local address src if it is valid.
	writeBatch(b *txBatch, addr net.Addr, ap netip.AddrPort, src netip.Addr) error
	// info reports the socket's buffers and features.
	info() SocketInfo
	// rxBufferSize is the size of the buffers readBatch needs.
	rxBufferSize() int
	// payloadLimits returns the largest UDP payload path MTU discovery
	// searches for by default over this socket, and the largest one
	// readBatch receives whole (the max_udp_payload_size transport
	// parameter).
	payloadLimits() (send, recv int)
	// readBatchLen is the number of messages readBatch can fill at once.
	readBatchLen() int
	// ecn reports whether outgoing packets can carry an ECN marking.
	ecn() bool
}

// newSysConn wraps pc: on Linux a *net.UDPConn gets the fast path, anything
// else the portable one.
func newSysConn(pc net.PacketConn, o socketOptions) sysConn {
	if u, ok := pc.(*net.UDPConn); ok {
		if c, err := newOptimizedConn(u, o); err == nil {
			return c
		}
		setBuffers(u, o.bufferSize)
		return &basicConn{pc: pc, udp: u}
	}
	setBuffers(pc, o.bufferSize)
	return &basicConn{pc: pc}
}

// setBuffers raises the socket's buffers to size. The kernel caps the
// request (net.core.rmem_max and wmem_max on Linux); a failure is not
// fatal, only slower.
func setBuffers(pc net.PacketConn, size int) {
	type bufferSetter interface {
		SetReadBuffer(int) error
		SetWriteBuffer(int) error
	}
	if s, ok := pc.(bufferSetter); ok {
		s.SetReadBuffer(size)
		s.SetWriteBuffer(size)
	}
}

// basicConn is the portable socket layer: one datagram per system call.
type basicConn struct {
	pc  net.PacketConn
	udp *net.UDPConn // pc, if it is a UDP socket: no allocation per datagram
}

func (c *basicConn) readBatch(ms []rxMessage) (int, error) {
	m := &ms[0]
	m.segSize, m.ecn, m.dst, m.from, m.addr = 0, ackhandler.NotECT, netip.Addr{}, nil, netip.AddrPort{}
	var err error
	if c.udp != nil {
		m.n, m.addr, err = c.udp.ReadFromUDPAddrPort(*m.buf)
	} else {
		m.n, m.from, err = c.pc.ReadFrom(*m.buf)
	}
	if err != nil {
		return 0, err
	}
	return 1, nil
}

func (c *basicConn) writeBatch(b *txBatch, addr net.Addr, ap netip.AddrPort, _ netip.Addr) error {
	var first error
	for i := 0; i < b.n; i++ {
		var err error
		if c.udp != nil && ap.IsValid() {
			_, err = c.udp.WriteToUDPAddrPort(b.packet(i), ap)
		} else {
			_, err = c.pc.WriteTo(b.packet(i), addr)
		}
		if err != nil && isMsgTooBig(err) {
			b.tooBig = max(b.tooBig, int(b.sizes[i]))
		}
		if first == nil {
			first = err
		}
	}
	return first
}

func (c *basicConn) info() SocketInfo {
	var si SocketInfo
	si.ReceiveBuffer, si.SendBuffer = socketBufferSizes(c.pc)
	return si
}

func (c *basicConn) rxBufferSize() int { return packetBufferSize }

// payloadLimits: datagrams larger than an Ethernet MTU would be found
// too large by losing probes, several per size.
func (c *basicConn) payloadLimits() (send, recv int) {
	return defaultMaxPacketSize, packetBufferSize
}
func (c *basicConn) readBatchLen() int { return 1 }
func (c *basicConn) ecn() bool         { return false }

// transientSocketErrors are the errors a read or write reports for one
// datagram, or for the ICMP error one provoked, not for the socket: on a
// connected UDP socket an ICMP port or host unreachable shows up as
// ECONNREFUSED or EHOSTUNREACH on the next read; ENOBUFS and EMSGSIZE
// concern one send. The datagram is lost and loss recovery copes; the
// Transport goes on.
var transientSocketErrors = []syscall.Errno{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EHOSTUNREACH, syscall.ENETUNREACH,
	syscall.EHOSTDOWN, syscall.ENETDOWN, syscall.ENOBUFS, syscall.EMSGSIZE,
}

// isTimeout reports whether err is a timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isTransientSocketError reports whether err concerns a datagram rather
// than the socket (transientSocketErrors).
func isTransientSocketError(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	for _, e := range transientSocketErrors {
		if errno == e {
			return true
		}
	}
	return false
}

// IPv6 scoped addresses (link-local ones, fe80::/10) are only meaningful
// with the interface they belong to: the socket layer reports the
// interface of a received datagram's source (sin6_scope_id) and
// destination (IPV6_PKTINFO), and needs it to send back. Addresses carry
// it as their zone, always the interface index in decimal, so that
// addresses compare equal whichever way they were learnt; a zone by name
// (as a user dials fe80::1%eth0) is turned into its index (numericZone).

// zoneNames holds the zones of the first interface indexes, so that
// naming the zone of a received datagram allocates nothing.
var zoneNames = func() (z [256]string) {
	for i := range z {
		z[i] = strconv.Itoa(i)
	}
	return z
}()

// withZoneIndex returns a with the zone of interface index, if a is a
// scoped (link-local) IPv6 address and index is not 0.
func withZoneIndex(a netip.Addr, index uint32) netip.Addr {
	if index == 0 || !a.Is6() || !(a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast()) {
		return a
	}
	if index < uint32(len(zoneNames)) {
		return a.WithZone(zoneNames[index])
	}
	return a.WithZone(strconv.FormatUint(uint64(index), 10))
}

// zoneIndex returns the interface index of a zone: a number, or the name
// of an interface (0 if there is none of that name).
func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	ifi, err := net.InterfaceByName(zone)
	if err != nil {
		return 0
	}
	return uint32(ifi.Index)
}

// numericZone returns ap with its zone, if named, as the interface index.
func numericZone(ap netip.AddrPort) netip.AddrPort {
	z := ap.Addr().Zone()
	if z == "" {
		return ap
	}
	if _, err := strconv.ParseUint(z, 10, 32); err == nil {
		return ap
	}
	return netip.AddrPortFrom(withZoneIndex(ap.Addr().WithZone(""), zoneIndex(z)), ap.Port())
}
