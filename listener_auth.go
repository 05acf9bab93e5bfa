package quic

import (
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// initialAuthentic reports whether the first packet of datagram d, an
// Initial packet with header hdr whose Packet Number field starts at
// pnOff, passes packet protection with the Initial keys derived from its
// Destination Connection ID (RFC 9001, Section 5.2). The listener checks
// this before it creates any state for a new connection, answers with a
// Retry or judges the token: everything it would keep from the header
// (the client's Source Connection ID above all, which becomes the
// connection's Destination Connection ID, RFC 9000, Section 7.2) must
// come from an authenticated packet. A datagram corrupted in transit
// would otherwise start a connection that talks to a connection ID the
// client never chose, and a second one when the client retransmits
// ("If the packet is an Initial packet fully conforming with the
// specification, the server proceeds with the handshake", RFC 9000,
// Section 5.2.2). The packet is opened in a copy, so d is unchanged.
func initialAuthentic(d []byte, hdr wire.LongHeader, pnOff int) bool {
	end := pnOff + int(hdr.Length)
	if hdr.Length > uint64(len(d)) || end > len(d) || end > maxUDPPayloadSize {
		return false
	}
	var buf [packetBufferSize]byte
	p := buf[:0]
	if end > len(buf) {
		p = make([]byte, 0, end) // a jumbo Initial: rare
	}
	p = append(p, d[:end]...)
	_, open := handshake.NewInitialKeys(hdr.Version, hdr.DstConnID.Bytes(), false)
	pnLen, err := open.RemoveHeaderProtection(p, pnOff)
	if err != nil {
		return false
	}
	var pn wire.PacketNumber
	for _, b := range p[pnOff : pnOff+pnLen] {
		pn = pn<<8 | wire.PacketNumber(b)
	}
	_, err = open.Open(p, pnOff, pnLen, pn)
	return err == nil
}
