// Package ccsim runs congestion-control scenarios on the deterministic
// network simulator (internal/netsim): bulk senders built from the real
// loss-recovery machinery (ackhandler.SentPacketHandler), a congestion
// controller (congestion.Controller) and the pacer (congestion.Pacer),
// sending to receivers that acknowledge with real ACK frames
// (ackhandler.ReceivedPackets, wire.AckFrame), over a bottleneck link with
// a drop-tail queue and optional random loss, reordering and ECN marking.
//
// It is how the properties of the controllers are checked: link
// utilisation, queueing delay, fairness between flows and goodput under
// loss, measured over simulated minutes in a fraction of a second of CPU
// time, identically on every run with the same seed.
//
// # Pieces
//
//   - Sender (sender.go): one bulk flow. It sends full-size datagrams
//     whenever the congestion window has room and the pacer allows,
//     retransmits the stream ranges declared lost, sends the probes the
//     probe timeout asks for, and records every packet with the
//     SentPacketHandler, one FrameRecord per STREAM frame.
//   - Receiver (receiver.go): acknowledges the sender's packets with ACK
//     frames at the times ReceivedPackets.AckDeadline says, echoing the
//     ECN codepoints it saw. One ACK datagram in ReceiverPingEvery
//     carries a PING; the sender acknowledges it in an ACK-only packet,
//     and the receiver then stops acknowledging what that ACK covered,
//     as a QUIC connection does (RFC 9000, Section 13.2.4).
//   - Packet format (packet.go): a test format without encryption. Every
//     datagram starts with an 8-byte packet number; then come frames: a
//     STREAM-like frame, PING, or a real ACK frame (wire.AckFrame).
//   - Scenario and Run (scenario.go, run.go): a link, flows and a
//     duration; Run builds the network, runs it and returns a Result.
//     Presets (presets.go) are the scenarios of the issue, which the
//     property tests check and example/ccsim tabulates.
//   - Result (result.go): per-flow goodput over time windows, link
//     utilisation and queueing delay over a measurement window, minimum
//     RTT, loss and retransmission counts, and Jain's fairness index
//     (JainIndex).
//
// # Topology
//
// All senders sit on host 1 and all receivers on host 2. The link from 1
// to 2 is the bottleneck: Bandwidth, a one-way delay of RTT/2, the queue
// limit, and the impairments. The link back carries the ACKs with the
// same bandwidth and delay and only ReverseLossProb as impairment. The
// bottleneck's rate may change during the run (Scenario.BandwidthChanges).
// Both links count 28 bytes of IPv4 and UDP overhead per datagram, so
// utilisation is measured in wire bytes and goodput in stream bytes.
// With Scenario.Jitter, each sender's datagrams pass through a relay on
// a third host that holds them for a random time (jitter.go).
//
// Nothing here reads the clock or starts a goroutine; a Run is
// single-threaded and deterministic. Distinct Runs may proceed in
// parallel.
package ccsim
