package ackhandler

import "github.com/quicstack/quic/wire"

// IgnoreRTTSamplesBefore makes the acknowledgment of application data
// packets numbered below pn give no RTT sample: the connection moved to
// another network path, and they were sent on the old one. "Packets sent
// on the old path MUST NOT contribute to congestion control or RTT
// estimation for the new path." (RFC 9000, Section 9.4) The connection
// keeps them out of its congestion controller itself.
func (h *SentPacketHandler) IgnoreRTTSamplesBefore(pn wire.PacketNumber) {
	h.rttFloor = max(h.rttFloor, pn)
}
