package wire

// NextPacket splits the first QUIC packet off a UDP datagram that may hold
// several coalesced packets (RFC 9000, Section 12.2). It returns that
// packet and the rest of the datagram, both sub-slices of datagram.
//
// An Initial, 0-RTT or Handshake packet of version 1 or 2 ends at its
// Packet Number offset plus its Length field. A packet with a short header,
// a Retry or Version Negotiation packet, and a long header of an unknown
// version have no Length the receiver can read, so they take the rest of
// the datagram: "A packet with a short header does not include a length,
// so it can only be the last packet included in a UDP datagram." A short
// header must be at least 1+shortConnIDLen bytes long (shortConnIDLen is
// 0 to 20, the length of the connection IDs the receiver issues).
//
// The caller loops until rest is empty, processing each packet on its own:
// "The receiver of coalesced QUIC packets MUST individually process each
// QUIC packet". An error means the datagram cannot be split any further, and
// the caller drops what remains; a malformed or undecryptable later packet
// does not invalidate the packets returned before it. Bytes after the last
// long-header packet (padding some senders add) come back as one more
// packet that fails to decrypt. Receivers "SHOULD ignore any subsequent
// packets with a different Destination Connection ID than the first packet
// in the datagram"; NextPacket leaves that check to the caller.
//
// NextPacket never allocates. Its errors are PROTOCOL_VIOLATION
// *TransportErrors, as from ParseLongHeader; it never returns
// ErrUnsupportedVersion, since such packets are returned whole.
func NextPacket(datagram []byte, shortConnIDLen int) (packet, rest []byte, err error) {
	if len(datagram) == 0 {
		return nil, nil, hdrErrEmpty
	}
	if !IsLongHeader(datagram[0]) {
		if shortConnIDLen < 0 || shortConnIDLen > MaxConnectionIDLen {
			return nil, nil, hdrErrBadConnIDLen
		}
		if len(datagram) < 1+shortConnIDLen {
			return nil, nil, hdrErrTruncated
		}
		return datagram, datagram[len(datagram):], nil
	}
	t, err := PacketTypeOf(datagram)
	// RFC 9000, Section 12.2: "Retry packets (Section 17.2.5), Version
	// Negotiation packets (Section 17.2.1), and packets with a short header
	// (Section 17.3) do not contain a Length field and so cannot be followed
	// by other packets in the same UDP datagram." The Length of an unknown
	// version cannot be read at all.
	switch {
	case err == ErrUnsupportedVersion,
		t == PacketTypeRetry,
		t == PacketTypeVersionNegotiation:
		return datagram, datagram[len(datagram):], nil
	case err != nil:
		return nil, nil, err
	}
	h, pnOff, err := ParseLongHeader(datagram)
	if err != nil {
		return nil, nil, err
	}
	// ParseLongHeader checked that Length fits in the datagram.
	end := pnOff + int(h.Length)
	return datagram[:end:end], datagram[end:], nil
}
