package quic

import (
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// authenticInitial checks that the first packet of datagram d, an Initial
// packet with header hdr whose Packet Number field starts at pnOff, passes
// packet protection with the Initial keys derived from its Destination
// Connection ID (RFC 9001, Section 5.2), and returns those keys (the
// server's), or nil ones if it fails. The listener checks this before it
// creates any state for a new connection, answers with a Retry or judges
// the token: everything it would keep from the header (the client's
// Source Connection ID above all, which becomes the connection's
// Destination Connection ID, RFC 9000, Section 7.2) must come from an
// authenticated packet. A datagram corrupted in transit would otherwise
// start a connection that talks to a connection ID the client never
// chose, and a second one when the client retransmits ("If the packet is
// an Initial packet fully conforming with the specification, the server
// proceeds with the handshake", RFC 9000, Section 5.2.2). The packet is
// opened in a copy, so d is unchanged; the connection the listener starts
// takes over the keys rather than deriving them again.
func authenticInitial(d []byte, hdr wire.LongHeader, pnOff int) (*handshake.Sealer, *handshake.Opener) {
	end := pnOff + int(hdr.Length)
	if hdr.Length > uint64(len(d)) || end > len(d) || end > maxUDPPayloadSize {
		return nil, nil
	}
	// The copy is opened in a pooled buffer: AEAD interfaces make an
	// array on the stack escape.
	var p []byte
	if end <= packetBufferSize {
		bp := getPacketBuffer()
		defer putPacketBuffer(bp)
		p = (*bp)[:0]
	} else {
		p = make([]byte, 0, end) // a jumbo Initial: rare
	}
	p = append(p, d[:end]...)
	seal, open := handshake.NewInitialKeys(hdr.Version, hdr.DstConnID.Bytes(), false)
	pnLen, err := open.RemoveHeaderProtection(p, pnOff)
	if err != nil {
		return nil, nil
	}
	var pn wire.PacketNumber
	for _, b := range p[pnOff : pnOff+pnLen] {
		pn = pn<<8 | wire.PacketNumber(b)
	}
	if _, err = open.Open(p, pnOff, pnLen, pn); err != nil {
		return nil, nil
	}
	return seal, open
}
