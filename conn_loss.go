package quic

import (
	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// What happens to the frames of sent packets once they are acknowledged
// or lost (RFC 9002, Section 6; RFC 9000, Section 13.3, "Retransmission of
// Information"). Detecting the loss is ackhandler/loss_pto.go.

// connFrameHandler learns from the loss detector which frames of sent
// packets were acknowledged or lost (ackhandler.FrameHandler). Lost frames
// are not resent as they were: their owner is marked as needing to send,
// and the next packet carries current values ("the latest MAX_DATA, not
// the old one"; RFC 9000, Section 13.3).
//
// FrameRecord fields by frame type:
//   - ACK: Offset = Largest Acknowledged of the frame sent.
//   - CRYPTO: Offset, Length.
//   - STREAM: StreamID, Offset, Length, Extra = 1 with FIN.
//   - MAX_DATA, DATA_BLOCKED: Offset = the limit sent.
//   - MAX_STREAM_DATA, STREAM_DATA_BLOCKED: StreamID, Offset = limit.
//   - MAX_STREAMS, STREAMS_BLOCKED: Extra = 1 for bidirectional.
//   - RESET_STREAM, STOP_SENDING: StreamID.
//   - ACK_FREQUENCY: Offset = Sequence Number.
type connFrameHandler struct {
	c *connState
	// streamAck merges acknowledged STREAM frames that continue each
	// other (in a bulk transfer, every frame of an ACK frame's packets)
	// into one range, applied to its stream in one go by flushAcks: a
	// stream lock per acknowledged packet showed in profiles.
	streamAck    ackhandler.FrameRecord
	hasStreamAck bool
}

func (h *connFrameHandler) OnFrameAcked(space ackhandler.Space, f *ackhandler.FrameRecord) {
	c := h.c
	if f.Type == wire.FrameTypeStream {
		p := &h.streamAck
		if h.hasStreamAck && p.StreamID == f.StreamID && p.Offset+p.Length == f.Offset && p.Extra == 0 {
			p.Length += f.Length
			p.Extra = f.Extra
			return
		}
		h.flushAcks()
		h.streamAck, h.hasStreamAck = *f, true
		return
	}
	switch {
	case f.Type == wire.FrameTypeAck:
		c.spaces[space].recv.IgnoreBelow(wire.PacketNumber(f.Offset) + 1)
	case f.Type == wire.FrameTypeCrypto:
		if cs := c.spaces[space].crypto; cs != nil {
			cs.send.onAcked(f.Offset, int(f.Length), false)
			// CRYPTO data is rare after the handshake (session
			// tickets): do not keep a ring for it on idle connections.
			cs.send.shrink()
		}
	case f.Type.IsStream(), f.Type == wire.FrameTypeResetStream, f.Type == wire.FrameTypeResetStreamAt, f.Type == wire.FrameTypeStopSending:
		c.streams.onFrameAcked(f)
	case f.Type == wire.FrameTypeNewConnectionID:
		c.localIDs.onFrameAcked(f.Extra)
	case f.Type == wire.FrameTypeRetireConnectionID:
		c.peerIDs.onFrameAcked(f.Extra)
	case f.Type == wire.FrameTypePing && f.Extra == pmtuProbeMarker:
		c.pmtuOnProbeAcked(int(f.Length), wire.PacketNumber(f.Offset))
	case f.Type == wire.FrameTypeAckFrequency:
		c.onAckFrequencyAcked(f.Offset)
	}
}

// flushAcks applies the merged STREAM acknowledgments. It runs before
// any loss is handled and when an ACK frame was processed.
func (h *connFrameHandler) flushAcks() {
	if h.hasStreamAck {
		h.hasStreamAck = false
		h.c.streams.onFrameAcked(&h.streamAck)
	}
}

func (h *connFrameHandler) OnFrameLost(space ackhandler.Space, f *ackhandler.FrameRecord) {
	h.flushAcks()
	c := h.c
	c.countRetransmission(f)
	switch {
	case f.Type == wire.FrameTypeCrypto:
		if cs := c.spaces[space].crypto; cs != nil {
			cs.send.onLost(f.Offset, int(f.Length), false)
		}
	case f.Type == wire.FrameTypeHandshakeDone:
		c.handshakeDoneToSend = true
	case f.Type == wire.FrameTypeNewToken:
		c.newTokenToSend = true
	case f.Type == wire.FrameTypeMaxData:
		c.connRecv.OnUpdateLost(f.Offset)
	case f.Type == wire.FrameTypeDataBlocked:
		c.connSend.OnBlockedLost(f.Offset)
	case f.Type == wire.FrameTypeNewConnectionID:
		c.localIDs.onFrameLost(f.Extra)
	case f.Type == wire.FrameTypeRetireConnectionID:
		c.peerIDs.onFrameLost(f.Extra)
	case f.Type == wire.FrameTypePing:
		if f.Extra == pmtuProbeMarker {
			c.pmtuOnProbeLost(int(f.Length), wire.PacketNumber(f.Offset))
		}
	case f.Type == wire.FrameTypeAckFrequency:
		c.onAckFrequencyLost(f.Offset)
	case f.Type == wire.FrameTypeImmediateAck:
		// Not sent again: it asked for an ACK of a probe long gone.
	default:
		c.streams.onFrameLost(f)
	}
}
