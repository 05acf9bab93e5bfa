// Package ackhandler holds the per-packet reliability machinery of a QUIC
// connection: tracking received packets and generating ACK frames
// (RFC 9000, Section 13.2, and draft-ietf-quic-ack-frequency), recording
// sent packets compactly, loss detection and the probe timeout (RFC 9002,
// Section 6 and Appendix A), persistent congestion (RFC 9002,
// Section 7.6), the optimistic-ACK defence of RFC 9000, Section 21.4, and
// ECN validation (RFC 9000, Section 13.4.2 and Appendix A.4).
//
// There are two halves:
//
//   - ReceivedPackets, one per packet number space, records the packet
//     numbers this endpoint received, detects duplicates, decides when an
//     ACK frame is due (AckDeadline) and writes it (AppendAck).
//   - SentPacketHandler, one per connection, records the packets this
//     endpoint sent in all three packet number spaces, processes the
//     peer's ACK frames, declares packets lost, runs the loss detection
//     and PTO timer, validates ECN, and reports acknowledged and lost
//     packets to a congestion.Controller and acknowledged and lost frames
//     to a FrameHandler.
//
// Nothing here reads the clock, arms a timer or starts a goroutine: every
// method that depends on time takes now, and the connection asks for the
// next deadline (AckDeadline, LossDetectionDeadline) and calls back when
// it passes. The types are owned by one connection goroutine and are not
// safe for concurrent use. Their per-packet methods allocate nothing once
// their buffers have grown to the connection's working size.
package ackhandler
