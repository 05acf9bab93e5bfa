package masque

// Context ID zero carries UDP payloads: "UDP packets are encoded using
// HTTP Datagrams with the Context ID field set to zero" (RFC 9298,
// Section 5).
const contextIDUDP = 0

// maxUDPPayload is the largest UDP payload: "endpoints MUST NOT send HTTP
// Datagrams with a UDP Proxying Payload field longer than 65527 using
// Context ID zero. An endpoint that receives an HTTP Datagram using
// Context ID zero whose UDP Proxying Payload field is longer than 65527
// MUST abort the corresponding stream." (Section 5)
const maxUDPPayload = 65527

// capsuleDatagram is the DATAGRAM capsule (RFC 9297, Section 3.5).
const capsuleDatagram = 0x00

// parsePayload splits an HTTP Datagram payload of a UDP proxying stream
// (Figure 7) into its Context ID and its UDP Proxying Payload; ok is
// false if the Context ID is truncated.
func parsePayload(b []byte) (contextID uint64, payload []byte, ok bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, nil, false
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, b[n:], true
}

// appendUDP appends the HTTP Datagram payload of a UDP packet: Context
// ID zero (one byte) and the packet.
func appendUDP(b, packet []byte) []byte {
	return append(append(b, contextIDUDP), packet...)
}
