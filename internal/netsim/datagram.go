package netsim

import (
	"net/netip"
	"strconv"
)

// ECN is the Explicit Congestion Notification field of an IP header
// (RFC 3168, Section 5). The constants have the field's bit values.
type ECN uint8

// The four ECN codepoints.
const (
	NotECT ECN = 0b00 // not ECN-capable transport
	ECT1   ECN = 0b01 // ECN-capable transport, ECT(1)
	ECT0   ECN = 0b10 // ECN-capable transport, ECT(0)
	CE     ECN = 0b11 // congestion experienced
)

// IsECT reports whether e is ECT(0) or ECT(1): a codepoint a router may
// change to CE instead of dropping the packet.
func (e ECN) IsECT() bool { return e == ECT0 || e == ECT1 }

// String returns "Not-ECT", "ECT(1)", "ECT(0)" or "CE".
func (e ECN) String() string {
	switch e & 3 {
	case NotECT:
		return "Not-ECT"
	case ECT1:
		return "ECT(1)"
	case ECT0:
		return "ECT(0)"
	}
	return "CE"
}

// An Addr is a simulated transport address: a host and a UDP port. Hosts
// are small numbers chosen by the test; routes connect hosts. Addr is
// comparable and can be used as a map key.
type Addr struct {
	Host uint32
	Port uint16
}

// AddrPort returns the address as an IPv4 netip.AddrPort in 10.0.0.0/8
// (host h is 10.h>>16.h>>8.h, modulo 2^24), for code that works with real
// socket addresses.
func (a Addr) AddrPort() netip.AddrPort {
	ip := netip.AddrFrom4([4]byte{10, byte(a.Host >> 16), byte(a.Host >> 8), byte(a.Host)})
	return netip.AddrPortFrom(ip, a.Port)
}

// String returns the address as "host:port", for example "2:443".
func (a Addr) String() string {
	return strconv.FormatUint(uint64(a.Host), 10) + ":" + strconv.FormatUint(uint64(a.Port), 10)
}

// A Datagram is a UDP datagram travelling through the simulated network.
// Datagrams and their payload buffers belong to the Network and are
// recycled: an endpoint must not keep a *Datagram, or its Payload, after
// HandleDatagram returns (copy what it needs).
type Datagram struct {
	// Src and Dst are the source and destination addresses as they are
	// on the wire: a NAT may have rewritten them (see Network.SetNAT).
	Src, Dst Addr
	// ECN is the codepoint set by the sender, possibly changed to CE by
	// a link.
	ECN ECN
	// Payload is the UDP payload.
	Payload []byte
	// ID numbers the datagrams a Network sends, from 0; a duplicate made
	// by a link has the ID of its original.
	ID uint64

	buf  []byte // the whole pooled buffer; Payload is buf[:n]
	wire int    // bytes the current link counts: payload + Overhead
}

// simDatagramBufSize is the capacity of a new pooled payload buffer; a
// larger payload gets a larger buffer, which is then kept.
const simDatagramBufSize = 1500

// datagramPool recycles datagrams and their payload buffers. It is not
// safe for concurrent use (nothing in a Network is).
type datagramPool struct {
	free        []*Datagram
	outstanding int
}

// get returns a datagram holding a copy of payload.
func (p *datagramPool) get(payload []byte) *Datagram {
	var d *Datagram
	if n := len(p.free); n > 0 {
		d = p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	} else {
		d = &Datagram{buf: make([]byte, 0, max(simDatagramBufSize, len(payload)))}
	}
	d.buf = append(d.buf[:0], payload...)
	d.Payload = d.buf
	p.outstanding++
	return d
}

// clone returns a copy of d from the pool.
func (p *datagramPool) clone(d *Datagram) *Datagram {
	c := p.get(d.Payload)
	c.Src, c.Dst, c.ECN, c.ID = d.Src, d.Dst, d.ECN, d.ID
	return c
}

// put returns d to the pool.
func (p *datagramPool) put(d *Datagram) {
	d.Payload = nil
	d.buf = d.buf[:0]
	d.Src, d.Dst, d.ECN, d.ID = Addr{}, Addr{}, NotECT, 0
	p.free = append(p.free, d)
	p.outstanding--
}
