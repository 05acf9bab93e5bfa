package quic

import (
	"math/bits"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// The ACK frequency extension (draft-ietf-quic-ack-frequency), the data
// sender's side: with a peer that sent min_ack_delay, a connection whose
// congestion window holds many packets asks the peer to acknowledge every
// few packets instead of every second one, which at 1,452-byte packets
// halves, or better, the ACK packets each side builds, sends, receives
// and processes. The data receiver's side is ackhandler.ReceivedPackets
// (SetAckFrequency, OnImmediateAck) and handleAckFrequencyFrame.

const (
	// localMinAckDelay is the min_ack_delay this endpoint advertises:
	// the timer granularity of RFC 9002 (kGranularity, 1 ms), below which
	// its run loop does not promise to wake up for a delayed ACK.
	localMinAckDelay = congestion.Granularity

	// ackFreqWindowFraction: the peer is asked to acknowledge at least
	// once per this fraction of the congestion window, so that the ACK
	// clock keeps ticking several times per round trip ("setting the
	// Ack-Eliciting Threshold to a value no larger than number of
	// maximum-sized packets that fit into the current congestion
	// window", draft-ietf-quic-ack-frequency, Section 8.1).
	ackFreqWindowFraction = 8
	// ackFreqMaxPackets bounds the packets per acknowledgment asked for.
	ackFreqMaxPackets = 32
	// ackFreqReorderingThreshold is the Reordering Threshold sent: "a
	// data sender can send a Reordering Threshold value that is the same
	// as the loss detection packet threshold" (Section 9), kPacketThreshold
	// of RFC 9002, Section 6.1.1.
	ackFreqReorderingThreshold = 3
	// ackFreqMinRTTFactor: fewer ACKs are asked for only on paths whose
	// smoothed RTT is at least this many times the shortest ACK delay
	// the peer can be asked for (wantedAckThreshold), and the delay asked
	// for is the smoothed RTT divided by it.
	ackFreqMinRTTFactor = 4
)

// ackFreqSender is the data sender's state of the extension.
type ackFreqSender struct {
	nextSeq   uint32 // Sequence Number of the next ACK_FREQUENCY frame
	threshold uint8  // the Ack-Eliciting Threshold in force (1 until one is sent)
	toSend    bool   // an ACK_FREQUENCY frame for threshold waits to be sent
	inFlight  bool   // the newest frame sent is neither acknowledged nor lost
}

// ackFrequencyNegotiated reports whether this endpoint sent the
// min_ack_delay transport parameter, which allows the peer to send
// ACK_FREQUENCY and IMMEDIATE_ACK frames ("The min_ack_delay transport
// parameter is a unilateral indication of support for receiving
// ACK_FREQUENCY frames", draft-ietf-quic-ack-frequency, Section 3).
func (c *connState) ackFrequencyNegotiated() bool { return !c.config.DisableAckFrequency }

// peerTakesAckFrequency reports whether this endpoint may send the peer
// ACK_FREQUENCY and IMMEDIATE_ACK frames: the peer sent min_ack_delay in
// this connection's transport parameters (which are never remembered for
// 0-RTT: "Endpoints MUST NOT remember the value of the min_ack_delay
// transport parameter they received for use in a subsequent connection",
// Section 3).
func (c *connState) peerTakesAckFrequency() bool {
	return !c.config.DisableAckFrequency && c.peerParams != nil && c.peerParams.HasMinAckDelay && c.oneRTT != nil
}

// wantedAckThreshold returns the Ack-Eliciting Threshold for the current
// congestion window: one less than the largest power of two of packets
// (at most ackFreqMaxPackets) not above an eighth of the window, and 1,
// RFC 9000's default of an ACK every second packet, for windows of fewer
// than 32 packets. Powers of two keep small changes of the window from
// sending a new frame.
//
// Paths whose smoothed RTT is below ackFreqMinRTTFactor times the
// shortest delay the peer can be asked for keep the default: "It is
// possible that the RTT is smaller than the receiver's timer granularity
// ... preventing the receiver from sending an acknowledgment every RTT in
// time unless packets are acknowledged immediately" (Section 8.1). There
// the peer's ACKs would come late rather than seldom: on loopback a
// receiver that acknowledges once per batch of datagrams read (Section
// 6.4) already sends one ACK per 100 or more packets, and a threshold
// above the batch only made it wait for its timer (the upload halved in
// A/B runs at 1,452-byte packets).
func (c *connState) wantedAckThreshold() uint8 {
	if c.rtt.Smoothed() < ackFreqMinRTTFactor*c.minRequestableAckDelay() {
		return 1
	}
	pkts := c.cc.CongestionWindow() / max(c.maxDatagramSize, 1) / ackFreqWindowFraction
	if pkts < 4 {
		return 1
	}
	pkts = min(pkts, ackFreqMaxPackets)
	return uint8(1<<(bits.Len(uint(pkts))-1) - 1)
}

// maybeUpdateAckFrequency, called when an ACK frame of the application
// data space was processed (the congestion window may have changed),
// schedules an ACK_FREQUENCY frame if the threshold the window calls for
// differs from the one in force. One frame at a time is in flight, so
// updates go at most once per round trip: "Usually, it is not necessary
// to send an ACK_FREQUENCY frame more than once per RTT" (Section 8.1).
func (c *connState) maybeUpdateAckFrequency() {
	a := &c.ackFreq
	if a.inFlight || !c.peerTakesAckFrequency() {
		return
	}
	if want := c.wantedAckThreshold(); want != max(a.threshold, 1) {
		a.threshold, a.toSend = want, true
	}
}

// requestedMaxAckDelay returns the Requested Max Ack Delay to send: a
// quarter of the smoothed RTT ("A data sender can set the Requested Max Ack Delay value
// to no more than the estimated round trip time ... it is usually better
// to use the Smoothed RTT", Section 8.1), at least kGranularity and the
// peer's min_ack_delay ("A value smaller than the min_ack_delay
// advertised by the peer is also invalid", Section 4), at most the peer's
// max_ack_delay. Never asking for more than the max_ack_delay the peer
// announced keeps the PTO computed with that one valid: "the endpoint
// MUST use the greater of the current max_ack_delay and the value that is
// in flight when computing the PTO period" (Section 7).
func (c *connState) requestedMaxAckDelay() time.Duration {
	d := min(max(c.rtt.Smoothed()/ackFreqMinRTTFactor, c.minRequestableAckDelay()), c.peerParams.MaxAckDelay)
	return max(d, c.peerParams.MinAckDelay)
}

// minRequestableAckDelay is the shortest Requested Max Ack Delay this
// endpoint asks for: the peer's min_ack_delay, and at least kGranularity.
func (c *connState) minRequestableAckDelay() time.Duration {
	return max(c.peerParams.MinAckDelay, congestion.Granularity)
}

// appendAckFrequencyFrame appends the scheduled ACK_FREQUENCY frame, if
// any and if it fits before end. "A sending endpoint MUST send
// monotonically increasing values in the Sequence Number field"
// (Section 4): a frame sent again after a loss takes a new number.
func (c *connState) appendAckFrequencyFrame(b []byte, end int) []byte {
	a := &c.ackFreq
	if !a.toSend || !c.peerTakesAckFrequency() {
		return b
	}
	f := wire.AckFrequencyFrame{
		SequenceNumber:        uint64(a.nextSeq),
		AckElicitingThreshold: uint64(a.threshold),
		RequestedMaxAckDelay:  uint64(c.requestedMaxAckDelay() / time.Microsecond),
		ReorderingThreshold:   ackFreqReorderingThreshold,
	}
	if end-len(b) < f.EncodedLen() {
		return b
	}
	b = f.Append(b)
	c.sent.AddFrame(ackhandler.SpaceApplication, ackhandler.FrameRecord{Type: wire.FrameTypeAckFrequency, Offset: uint64(a.nextSeq)})
	a.nextSeq++
	a.toSend, a.inFlight = false, true
	return b
}

// onAckFrequencyAcked and onAckFrequencyLost follow the fate of the
// ACK_FREQUENCY frame with sequence number seq. "When an ACK_FREQUENCY
// frame is lost, the sender is encouraged to send another ACK_FREQUENCY
// frame, unless an ACK_FREQUENCY frame with a larger Sequence Number value
// has already been sent" (Section 4).
func (c *connState) onAckFrequencyAcked(seq uint64) {
	if seq+1 == uint64(c.ackFreq.nextSeq) {
		c.ackFreq.inFlight = false
	}
}

func (c *connState) onAckFrequencyLost(seq uint64) {
	if seq+1 == uint64(c.ackFreq.nextSeq) {
		c.ackFreq.inFlight = false
		c.ackFreq.toSend = true
	}
}

// appendImmediateAck appends an IMMEDIATE_ACK frame to a probe packet when
// the peer takes it: "When sending PTO packets, one can include an
// IMMEDIATE_ACK frame to elicit an immediate acknowledgment. This avoids
// delaying acknowledgements of PTO packets by the acknowledgment delay"
// (Section 7). It reports whether it did.
func (c *connState) appendImmediateAck(b []byte, end int) ([]byte, bool) {
	if !c.peerTakesAckFrequency() || end-len(b) < 1 {
		return b, false
	}
	b = wire.AppendFrameType(b, wire.FrameTypeImmediateAck)
	c.sent.AddFrame(ackhandler.SpaceApplication, ackhandler.FrameRecord{Type: wire.FrameTypeImmediateAck})
	return b, true
}
