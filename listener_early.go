package quic

import (
	"net"
	"net/netip"
	"time"

	"github.com/quicstack/quic/wire"
)

// Bounds on 0-RTT datagrams that arrive before the Initial that creates
// their connection (reordered on the way): "Servers MAY temporarily store
// 0-RTT packets that arrive before Initial packets" (RFC 9001,
// Section 4.6.2; RFC 9000, Section 5.2.2).
const (
	earlyBufferLen      = 32
	earlyBufferLifetime = time.Second
)

// earlyDatagram is a 0-RTT datagram waiting for its connection.
type earlyDatagram struct {
	dcid wire.ConnectionID
	from netip.AddrPort
	data []byte
	bp   *[]byte
	at   time.Time
}

// bufferEarly keeps a 0-RTT datagram for a connection that does not exist
// yet, evicting expired entries and, when full, the oldest. It reports
// whether it took the buffer. It runs on the read loop only.
func (l *Listener) bufferEarly(now time.Time, dcid wire.ConnectionID, addr net.Addr, d []byte, bp *[]byte) bool {
	from, ok := addrPortOf(addr)
	if !ok || !l.config.Allow0RTT {
		return false
	}
	keep := l.earlyDatagrams[:0]
	for _, e := range l.earlyDatagrams {
		if now.Sub(e.at) > earlyBufferLifetime {
			putPacketBuffer(e.bp)
			continue
		}
		keep = append(keep, e)
	}
	l.earlyDatagrams = keep
	if len(l.earlyDatagrams) >= earlyBufferLen {
		putPacketBuffer(l.earlyDatagrams[0].bp)
		l.earlyDatagrams = append(l.earlyDatagrams[:0], l.earlyDatagrams[1:]...)
	}
	l.earlyDatagrams = append(l.earlyDatagrams, earlyDatagram{dcid: dcid, from: from, data: d, bp: bp, at: now})
	return true
}

// deliverEarly hands c the buffered 0-RTT datagrams sent from addr to
// dcid, in arrival order, after its Initial.
func (l *Listener) deliverEarly(c *Conn, dcid wire.ConnectionID, addr net.Addr) {
	from, ok := addrPortOf(addr)
	if !ok || len(l.earlyDatagrams) == 0 {
		return
	}
	keep := l.earlyDatagrams[:0]
	for _, e := range l.earlyDatagrams {
		if e.dcid != dcid || e.from != from {
			keep = append(keep, e)
			continue
		}
		if !c.enqueue(inboundDatagram{data: e.data, buf: e.bp}) {
			putPacketBuffer(e.bp)
		}
	}
	l.earlyDatagrams = keep
}
