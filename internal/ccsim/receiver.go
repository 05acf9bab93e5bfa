package ccsim

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// ReceiverPingEvery is how often a Receiver makes an ACK datagram
// ack-eliciting by adding a PING: one in this many. RFC 9000, Section
// 13.2.4: "an endpoint SHOULD ... occasionally send a PING or other small
// ack-eliciting frame, such as once per round trip, to elicit an ACK from
// the peer"; the acknowledgment of an ACK frame lets the receiver forget
// the ranges it covered.
const ReceiverPingEvery = 16

// receiverSentRing is the number of its own packets a Receiver remembers
// the Largest Acknowledged of.
const receiverSentRing = 1024

// ReceiverStats counts what a Receiver did.
type ReceiverStats struct {
	Packets    int64 // packets received, duplicates excluded
	Bytes      int64 // their UDP payload bytes
	Duplicates int64 // packets received again, or below the tracked range
	Malformed  int64 // packets that failed to parse (a bug)
	CE         int64 // packets that arrived marked CE
	AcksSent   int64 // ACK frames sent
	PingsSent  int64 // of them, with a PING
}

// A Receiver is a netsim.Endpoint that acknowledges a Sender's packets:
// it records them with an ackhandler.ReceivedPackets (default ACK policy:
// an ACK for every second ack-eliciting packet, immediately on
// reordering or a CE mark, and otherwise within max_ack_delay, 25 ms) and
// sends each ACK frame, with the ECN counts of the codepoints it saw, in
// a datagram of its own to the address the last packet came from. One
// ACK datagram in ReceiverPingEvery also carries a PING; when the sender
// acknowledges it, the receiver stops acknowledging the packets that
// ACK frame covered (ReceivedPackets.IgnoreBelow, RFC 9000, Section
// 13.2.4), which keeps its ACK frames small.
//
// A Receiver is used by one netsim.Network; its methods are not safe for
// concurrent use and do not allocate once its buffers have grown.
type Receiver struct {
	rp      *ackhandler.ReceivedPackets
	peer    netsim.Addr
	hasPeer bool
	nextPN  wire.PacketNumber
	ack     wire.AckFrame // the ACK frame being sent
	peerAck wire.AckFrame // the sender's ACK frame being parsed
	buf     []byte
	// sent holds, for its own recent packets, the Largest Acknowledged
	// of the ACK frame each carried, indexed by packet number modulo
	// receiverSentRing.
	sent  [receiverSentRing]receiverSent
	stats ReceiverStats
}

type receiverSent struct {
	pn, largest wire.PacketNumber
}

// NewReceiver returns a Receiver.
func NewReceiver() *Receiver {
	r := &Receiver{
		rp:  ackhandler.NewReceivedPackets(ackhandler.SpaceApplication),
		buf: make([]byte, 0, 1500),
	}
	for i := range r.sent {
		r.sent[i].pn = wire.InvalidPacketNumber
	}
	return r
}

// Stats returns the receiver's counters.
func (r *Receiver) Stats() ReceiverStats { return r.stats }

// HandleDatagram records a packet from the sender.
func (r *Receiver) HandleDatagram(now time.Time, d *netsim.Datagram) {
	pn, ok := readHeader(d.Payload)
	if !ok {
		r.stats.Malformed++
		return
	}
	if r.rp.IsDuplicate(pn) {
		r.stats.Duplicates++
		return
	}
	pf, ok := parseFrames(d.Payload[HeaderLen:], &r.peerAck, maxAckRanges)
	if !ok {
		r.stats.Malformed++
		return
	}
	ecn := ackhandler.ECNMark(d.ECN)
	r.rp.OnPacket(now, pn, pf.ackEliciting, ecn)
	r.stats.Packets++
	r.stats.Bytes += int64(len(d.Payload))
	if ecn == ackhandler.CE {
		r.stats.CE++
	}
	r.peer, r.hasPeer = d.Src, true
	if pf.hasAck {
		// "When a packet containing an ACK frame is acknowledged, the
		// receiver can stop acknowledging packets less than or equal to
		// the Largest Acknowledged field in the sent ACK frame"
		// (RFC 9000, Section 13.2.4).
		largest := r.peerAck.Ranges[0].Largest
		if s := &r.sent[largest%receiverSentRing]; s.pn == largest {
			r.rp.IgnoreBelow(s.largest + 1)
		}
	}
}

// HandleTimeout does nothing: an ACK that is due goes out in the
// PollTransmit that follows.
func (r *Receiver) HandleTimeout(now time.Time) {}

// PollTransmit sends an ACK frame when one is due.
func (r *Receiver) PollTransmit(now time.Time, out *netsim.Outbox) {
	dl := r.rp.AckDeadline()
	if dl.IsZero() || dl.After(now) || !r.hasPeer {
		return
	}
	if !r.rp.AppendAck(now, &r.ack, ackDelayExponent) {
		return
	}
	pn := r.nextPN
	r.nextPN++
	b := r.buf[:HeaderLen]
	putHeader(b, pn)
	b = r.ack.Append(b)
	r.stats.AcksSent++
	if r.stats.AcksSent%ReceiverPingEvery == 0 {
		b = append(b, pingFrameType)
		r.stats.PingsSent++
	}
	r.sent[pn%receiverSentRing] = receiverSent{pn: pn, largest: r.ack.Ranges[0].Largest}
	out.Send(r.peer, b, netsim.NotECT)
	r.buf = b[:0]
	r.rp.OnAckSent()
}

// NextDeadline returns when the next ACK frame is due.
func (r *Receiver) NextDeadline() time.Time { return r.rp.AckDeadline() }
