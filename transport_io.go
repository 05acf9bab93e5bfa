package quic

import (
	"github.com/quicstack/quic/internal/freelist"
	"net"
	"net/netip"

	"github.com/quicstack/quic/wire"
)

// The Transport's side of the socket layer: the read loop that routes
// batches of datagrams, and the writes of packets that belong to no
// connection.

// maxPacketBufferSize is the largest datagram this package sends.
const maxPacketBufferSize = maxUDPPayloadSize

// packetBufferSize is the size of the pooled receive buffers of sockets
// without GRO, and the max_udp_payload_size they advertise; a larger
// datagram shows up as too long (truncated) and is dropped.
const packetBufferSize = 2048

// groBufferSize holds the largest run of datagrams GRO coalesces (64 KiB
// of UDP payload), or the largest single datagram.
const groBufferSize = 1 << 16

// socketBufferSize is the default of Transport.SocketBufferSize.
const socketBufferSize = 7 << 20

var (
	// Free lists rather than sync.Pools, as for stream chunks
	// (stream_buffer_chunks.go): they survive garbage collections.
	// Bounds: 8 MiB and 16 MiB.
	packetBufferPool = freelist.New(4096, func() *[]byte { b := make([]byte, packetBufferSize); return &b })
	groBufferPool    = freelist.New(256, func() *[]byte { b := make([]byte, groBufferSize); return &b })
)

func getPacketBuffer() *[]byte { return packetBufferPool.Get() }

// getRxBuffer returns a pooled receive buffer of size packetBufferSize or
// groBufferSize.
func getRxBuffer(size int) *[]byte {
	if size > packetBufferSize {
		return groBufferPool.Get()
	}
	return getPacketBuffer()
}

// putPacketBuffer returns a buffer from getPacketBuffer or getRxBuffer.
func putPacketBuffer(b *[]byte) {
	if cap(*b) > packetBufferSize {
		groBufferPool.Put(b)
		return
	}
	packetBufferPool.Put(b)
}

// SocketInfo reports the socket's achieved buffer sizes and the features
// in use. It starts the Transport if needed.
func (t *Transport) SocketInfo() SocketInfo {
	if t.init() != nil {
		return SocketInfo{}
	}
	return t.sock.info()
}

// readLoop reads batches of datagrams from sock and routes them until the
// socket fails or the Transport closes. The failure of the primary
// loop's socket (t.Conn) closes the Transport, that of another socket
// only ends its loop. It reads no clock: the endpoint, on the slow path,
// is handed the time (Transport.handleUnrouted).
func (t *Transport) readLoop(sock sysConn, primary bool) {
	defer t.wg.Done()
	ms := make([]rxMessage, sock.readBatchLen())
	size := sock.rxBufferSize()
	defer func() {
		for i := range ms {
			if ms[i].buf != nil {
				putPacketBuffer(ms[i].buf)
			}
		}
	}()
	for {
		for i := range ms {
			if ms[i].buf == nil {
				ms[i].buf = getRxBuffer(size)
			}
		}
		n, err := sock.readBatch(ms)
		if err != nil {
			select {
			case <-t.closing:
				return
			default:
			}
			if isTimeout(err) {
				continue
			}
			if isTransientSocketError(err) {
				// An ICMP error for a datagram sent earlier: not the
				// socket's failure.
				t.stats.readErrors.Add(1)
				continue
			}
			if !primary {
				return
			}
			// The socket failed: close everything (Close would wait
			// for this loop); closed connections cannot answer.
			t.shutdown(0)
			return
		}
		for i := 0; i < n; i++ {
			t.deliver(&ms[i])
		}
	}
}

// deliver routes the datagrams of one received message; it sets m.buf to
// nil if a connection took the buffer.
func (t *Transport) deliver(m *rxMessage) {
	d := (*m.buf)[:min(m.n, len(*m.buf))]
	seg := m.segSize
	if seg <= 0 || seg >= len(d) {
		if m.n > maxUDPPayloadSize || m.n > len(*m.buf) {
			t.stats.countDrop(DropTooLarge)
			return // larger than we allow, or truncated: drop
		}
		if cap(*m.buf) > packetBufferSize && len(d) <= packetBufferSize {
			// A lone datagram in a GRO-sized buffer: copy it out so that
			// queues hold small buffers, and keep the large one for the
			// next read. A larger one keeps its buffer.
			bp := getPacketBuffer()
			n := copy(*bp, d)
			if !t.route((*bp)[:n], bp, 0, m) {
				putPacketBuffer(bp)
			}
			return
		}
		if t.route(d, m.buf, 0, m) {
			m.buf = nil
		}
		return
	}
	if seg > maxUDPPayloadSize {
		t.stats.countDrop(DropTooLarge)
		return
	}
	// GRO: the kernel coalesced datagrams of one flow, seg bytes each (the
	// last may be shorter). They nearly always belong to one connection
	// ID: hand the run over whole. A datagram with another ID (a new
	// connection ID, or two connections behind one address) is copied
	// out and routed alone.
	cidLen := t.ConnectionIDGenerator.ConnectionIDLen()
	first, err := wire.ParseDestConnectionID(d, cidLen)
	same := err == nil && !wire.IsLongHeader(d[0])
	for off := seg; same && off < len(d); off += seg {
		cid, err := wire.ParseDestConnectionID(d[off:], cidLen)
		same = err == nil && cid == first
	}
	if same {
		if t.route(d, m.buf, seg, m) {
			m.buf = nil
		}
		return
	}
	for off := 0; off < len(d); off += seg {
		bp := getRxBuffer(seg)
		n := copy(*bp, d[off:min(off+seg, len(d))])
		if !t.route((*bp)[:n], bp, 0, m) {
			putPacketBuffer(bp)
		}
	}
}

// inbound makes the inboundDatagram of d, a datagram the read loop is
// routing, with how it arrived.
func (t *Transport) inbound(d []byte, bp *[]byte) inboundDatagram {
	if m := t.rxCur; m != nil {
		return t.inboundFor(d, bp, 0, m)
	}
	return inboundDatagram{data: d, buf: bp}
}

// inboundFor makes the inboundDatagram of d (segSize-byte datagrams after
// GRO, or one if 0), received as m describes, with the path addresses
// connections compare (conn_path.go). It allocates nothing for UDP
// sockets.
func (t *Transport) inboundFor(d []byte, bp *[]byte, segSize int, m *rxMessage) inboundDatagram {
	in := inboundDatagram{data: d, buf: bp, ecn: m.ecn, segSize: uint16(segSize), addr: m.addr, dst: m.dst}
	if m.addr.IsValid() {
		in.addrs = pathAddrs{local: t.localAddr, remote: netip.AddrPortFrom(m.addr.Addr().Unmap(), m.addr.Port())}
	} else {
		in.addrs = t.pathAddrsFor(m.from)
	}
	return in
}

// writeTo sends one datagram that belongs to no connection (Version
// Negotiation, Retry, stateless reset) from the read loop, from the local
// address the datagram it answers was sent to.
func (t *Transport) writeTo(b []byte, addr net.Addr) {
	var src netip.Addr
	if m := t.rxCur; m != nil {
		src = m.dst
	}
	ap, _ := addrPortOf(addr)
	t.writeFrom(b, addr, ap, src)
}

// writeFrom sends one datagram to addr (ap, if valid, is its address)
// from the local address src (if valid, on a wildcard socket).
func (t *Transport) writeFrom(b []byte, addr net.Addr, ap netip.AddrPort, src netip.Addr) {
	tb := getTxBatch(false, len(b))
	tb.commit(append(tb.next(), b...), 0, false)
	t.sock.writeBatch(tb, addr, ap, src) // UDP send errors are transient; loss recovery copes
	putTxBatch(tb)
}
