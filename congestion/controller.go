package congestion

import "time"

// A Controller is a congestion controller: it decides how many bytes a
// connection may have in flight and how fast it sends them. It is the
// extension point for custom algorithms: implement it and return it from a
// ControllerFactory in the connection's configuration.
//
// The connection's loss detection (package ackhandler) calls the methods
// from the connection's goroutine only, never concurrently, and in this
// order for each received ACK frame: OnCongestionEvent if packets were
// declared lost or the peer reported new ECN-CE marks, then OnAck for the
// newly acknowledged packets, as RFC 9002, Appendix A.7 does ("lost_packets
// = DetectAndRemoveLostPackets(pn_space); if (!lost_packets.empty()):
// OnPacketsLost(lost_packets); OnPacketsAcked(newly_acked_packets)"): the
// ACK that starts a recovery period must not first grow the window that
// the period cuts. Only packets that count toward bytes in flight
// (ack-eliciting or padded, RFC 9002, Section 2) are reported.
// Events are passed by pointer to structures the caller owns and reuses:
// a Controller must not keep them, or their slices, after returning.
//
// Methods must not allocate in the steady state, and must not read the
// clock: time comes in as now.
type Controller interface {
	// OnPacketSent is called when a packet that counts toward bytes in
	// flight is sent; bytesInFlight includes it.
	OnPacketSent(now time.Time, pn int64, bytes int, bytesInFlight int)
	// OnAck is called with the packets a received ACK frame newly
	// acknowledged, after the RTT estimate took its sample.
	OnAck(now time.Time, ev *AckEvent)
	// OnCongestionEvent is called when packets were declared lost or the
	// ECN-CE count increased (RFC 9002, Section 7.1).
	OnCongestionEvent(now time.Time, ev *CongestionEvent)
	// OnAppLimited is called when the connection had nothing to send
	// although the window and the pacer allowed it, for want of
	// application data or because flow control held it back: growth
	// based on an under-used window must stop (RFC 9002, Section 7.8)
	// until a packet sent fills the window. The connection calls it each
	// time it finds nothing to send in that state.
	OnAppLimited(now time.Time, bytesInFlight int)
	// SetMaxDatagramSize is called when the path's maximum datagram size
	// changes (path MTU discovery, RFC 9000, Section 14).
	SetMaxDatagramSize(n int)
	// CongestionWindow returns the congestion window in bytes.
	CongestionWindow() int
	// PacingRate returns the rate, in bytes per second, at which the
	// pacer releases packets. Window-based controllers return a rate
	// derived from the window and the smoothed RTT (RFC 9002,
	// Section 7.7).
	PacingRate() uint64
	// State describes the controller for statistics and qlog.
	State() State
}

// A ControllerFactory makes the controller of one connection. The
// connection configuration holds one; nil means NewCubic.
type ControllerFactory func(ControllerConfig) Controller

// ControllerConfig is what a ControllerFactory gets to build a controller.
type ControllerConfig struct {
	// RTT is the connection's RTT estimator, updated before each OnAck.
	RTT *RTTStats
	// MaxDatagramSize is the initial maximum datagram size in bytes,
	// at least 1200.
	MaxDatagramSize int
	// Seed seeds any randomness the controller uses (BBR randomises the
	// time between bandwidth probes), so that runs are reproducible and
	// flows sharing a bottleneck do not probe in lockstep. Connections set
	// it from their own randomness; 0 means a fixed default.
	Seed uint64
	// InitialWindowPackets is the initial window in packets; 0 means 10
	// ("the initial congestion window SHOULD be ten times the maximum
	// datagram size", RFC 9002, Section 7.2, capped at 14720 bytes).
	InitialWindowPackets int
}

// An IdleReleaser is a Controller that can give back memory while its
// connection is quiet. A connection that has neither sent nor received
// for a while (and so has nothing in flight) calls ReleaseIdle before it
// parks; the controller's behaviour must not change, and what it frees it
// makes again when the connection sends. BBR's delivery-rate sampler
// releases its ring of per-packet records (4.6 KB at least, up to
// 4.7 MB after a large window).
type IdleReleaser interface {
	ReleaseIdle()
}

// An AckedPacket is a packet newly acknowledged by an ACK frame.
type AckedPacket struct {
	PacketNumber int64
	Bytes        int
	SentTime     time.Time
}

// An AckEvent reports the packets one ACK frame newly acknowledged.
type AckEvent struct {
	// Acked lists the newly acknowledged packets in ascending packet
	// number order.
	Acked []AckedPacket
	// AckedBytes is the sum of Acked[i].Bytes.
	AckedBytes int
	// PriorInFlight and BytesInFlight are the bytes in flight before and
	// after removing the acknowledged packets (the packets the same ACK
	// frame made lost are already removed from both).
	PriorInFlight, BytesInFlight int
	// RTT is the connection's estimator, already updated with this ACK's
	// sample if it gave one.
	RTT *RTTStats
}

// A LostPacket is a packet declared lost (RFC 9002, Section 6.1).
type LostPacket struct {
	PacketNumber int64
	Bytes        int
	SentTime     time.Time
}

// A CongestionEvent reports lost packets or new ECN-CE marks.
type CongestionEvent struct {
	// Lost lists the packets declared lost, in ascending packet number
	// order; empty for a congestion event signalled only by ECN.
	Lost []LostPacket
	// LostBytes is the sum of Lost[i].Bytes.
	LostBytes int
	// ECN reports that the peer's ECN-CE count increased
	// (RFC 9002, Section 7.1).
	ECN bool
	// SentTime is the send time of the most recent packet that triggered
	// the event (the largest lost, or the largest acknowledged for ECN):
	// a controller in recovery since after it does not react again
	// (RFC 9002, Section 7.3.2).
	SentTime time.Time
	// PersistentCongestion reports persistent congestion
	// (RFC 9002, Section 7.6): the window collapses to its minimum.
	PersistentCongestion bool
	// PriorInFlight and BytesInFlight are the bytes in flight before and
	// after removing the lost packets; the packets the same ACK frame
	// acknowledges still count in both (OnAck follows).
	PriorInFlight, BytesInFlight int
}

// State describes a controller at a point in time.
type State struct {
	// Name is the algorithm, such as "cubic", "bbr" or "newreno".
	Name string
	// Phase is the algorithm's current phase for qlog's
	// congestion_state_updated, such as "slow_start",
	// "congestion_avoidance", "recovery", "application_limited", or BBR's
	// "startup", "drain", "probe_bw_down", "probe_rtt".
	Phase string
	// InSlowStart and InRecovery report the RFC 9002 states.
	InSlowStart, InRecovery bool
	// AppLimited reports that the last OnAppLimited has not been followed
	// by a window-limited send.
	AppLimited bool
}

// Window-related constants of RFC 9002, Section 7.2 and Appendix B.1.
const (
	// MinWindowPackets is kMinimumWindow in packets: "The RECOMMENDED
	// value is 2 * max_datagram_size."
	MinWindowPackets = 2
	// LossReductionFactor is kLossReductionFactor of NewReno: 0.5.
	LossReductionFactor = 0.5
	// PersistentCongestionThreshold is kPersistentCongestionThreshold: 3.
	PersistentCongestionThreshold = 3
)

// InitialWindow returns the initial congestion window of RFC 9002,
// Section 7.2 for a maximum datagram size: "ten times the maximum datagram
// size, while limiting the window to the larger of 14,720 bytes or twice
// the maximum datagram size", or packets times the size when packets > 0.
func InitialWindow(maxDatagramSize, packets int) int {
	if packets > 0 {
		return packets * maxDatagramSize
	}
	return min(10*maxDatagramSize, max(14720, 2*maxDatagramSize))
}
