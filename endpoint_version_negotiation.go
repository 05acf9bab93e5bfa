package quic

// Version Negotiation from the server's side (RFC 9000, Section 6.1):
// the endpoint's answer to a packet of a version the listener does not
// speak. The client's side is connState.handleVersionNegotiation
// (conn_recv.go) and compatible version negotiation (RFC 9368) is in
// conn_version_negotiation.go; the packet format is in
// wire/header_version_negotiation.go.

import "github.com/quicstack/quic/wire"

// versionNegotiation answers a long-header packet of an unknown version
// (RFC 9000, Section 6.1): "A server sends a Version Negotiation packet in
// response to each packet that might initiate a new connection". Only
// datagrams of at least 1200 bytes get one, since only those can start a
// connection, which keeps the answer from amplifying an attack. It
// returns nil when there is nothing to send.
func (e *endpoint) versionNegotiation(d []byte, hdr wire.InvariantHeader, versions []wire.Version, out []byte) []byte {
	if len(d) < minInitialPacketSize || hdr.Version == wire.VersionNegotiationVersion {
		return nil
	}
	var r [5]byte
	e.random(r[:])
	list := make([]wire.Version, 0, len(versions)+1)
	for _, v := range versions {
		if v.IsSupported() {
			list = append(list, v)
		}
	}
	list = append(list, greaseVersion(r[1:], hdr.Version))
	e.stats.versionNegotiationsSent.Add(1)
	return wire.AppendVersionNegotiation(out[:0], 0x40|r[0], hdr.SrcConnID, hdr.DstConnID, list)
}

// greaseVersion returns a reserved version (0x?a?a?a?a) made of random
// bytes, for Version Negotiation packets: "Endpoints MAY add reserved
// versions to any field where unknown or unsupported versions are
// ignored to test that a peer correctly ignores the value." (RFC 9000,
// Section 15). It is never the client's version: a client "MUST discard a
// Version Negotiation packet that lists the QUIC version selected by the
// client" (Section 6.2), so a fixed value would make a client offering it
// (to solicit Version Negotiation, Section 6.3) ignore the answer.
func greaseVersion(random []byte, client wire.Version) wire.Version {
	v := wire.Version(uint32(random[0])<<24|uint32(random[1])<<16|uint32(random[2])<<8|uint32(random[3]))&0xf0f0f0f0 | 0x0a0a0a0a
	if v == client {
		v ^= 0x10000000
	}
	return v
}
