package wire

// ackFrequencyMaxAckDelayLimit is the smallest invalid Requested Max Ack
// Delay, in microseconds: 2^14 milliseconds (draft-ietf-quic-ack-frequency,
// Section 4; RFC 9000, Section 18.2).
const ackFrequencyMaxAckDelayLimit = 1 << 14 * 1000

// An AckFrequencyFrame is an ACK_FREQUENCY frame (type 0xaf, encoded in two
// bytes as 0x40af), with which a data sender tells the peer when it wants to
// receive ACK frames (draft-ietf-quic-ack-frequency, Section 4).
//
// The parser checks the encoding and that RequestedMaxAckDelay is below
// 2^14 milliseconds. Rules that need connection state are the connection's
// job: whether the min_ack_delay transport parameter was sent, a Requested
// Max Ack Delay below that min_ack_delay (also PROTOCOL_VIOLATION), the
// 0-RTT restriction (see FrameType.AllowedIn) and "A receiving endpoint
// MUST ignore a received ACK_FREQUENCY frame unless the Sequence Number
// value in the frame is greater than the largest processed value."
type AckFrequencyFrame struct {
	// SequenceNumber orders ACK_FREQUENCY frames so that receivers ignore
	// obsolete ones.
	SequenceNumber uint64
	// AckElicitingThreshold is the maximum number of ack-eliciting packets
	// the receiver receives without sending an acknowledgment. 0 asks for
	// an acknowledgment of every ack-eliciting packet; the default without
	// ACK_FREQUENCY frames corresponds to 1.
	AckElicitingThreshold uint64
	// RequestedMaxAckDelay is the max_ack_delay the receiver is asked to
	// use, in microseconds (unlike the max_ack_delay transport parameter,
	// which is in milliseconds). It is below 2^14 milliseconds,
	// 16384000 microseconds.
	RequestedMaxAckDelay uint64
	// ReorderingThreshold is the packet reordering that elicits an
	// immediate ACK (draft-ietf-quic-ack-frequency, Section 6.2). 0 means
	// out-of-order packets do not elicit an immediate ACK; the default
	// without ACK_FREQUENCY frames corresponds to 1.
	ReorderingThreshold uint64
}

// ParseAckFrequencyFrame parses the ACK_FREQUENCY frame at the start of b,
// which begins with the frame type, and returns it with the number of bytes
// it takes (draft-ietf-quic-ack-frequency, Section 4). A truncated frame and
// a frame type other than 0xaf are FRAME_ENCODING_ERRORs; a Requested Max
// Ack Delay of 2^14 milliseconds or more is a PROTOCOL_VIOLATION.
func ParseAckFrequencyFrame(b []byte) (AckFrequencyFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeAckFrequency, FrameTypeAckFrequency)
	if err != nil {
		return AckFrequencyFrame{}, 0, err
	}
	r := controlReader(b, n)
	seq := r.varint()
	threshold := r.varint()
	delay := r.varint()
	reordering := r.varint()
	if !r.ok {
		return AckFrequencyFrame{}, 0, encodingError(FrameTypeAckFrequency, controlReasonTruncated)
	}
	// draft-ietf-quic-ack-frequency, Section 4: "Note that values of 2^14
	// milliseconds or greater are invalid for max_ack_delay ... Receipt of
	// an invalid value MUST be treated as a connection error of type
	// PROTOCOL_VIOLATION." The other invalid values, those below the
	// min_ack_delay we advertised, need connection state.
	if delay >= ackFrequencyMaxAckDelayLimit {
		return AckFrequencyFrame{}, 0, frameError(ProtocolViolation, FrameTypeAckFrequency, "requested max ack delay of 2^14 ms or more")
	}
	return AckFrequencyFrame{
		SequenceNumber:        seq,
		AckElicitingThreshold: threshold,
		RequestedMaxAckDelay:  delay,
		ReorderingThreshold:   reordering,
	}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (draft-ietf-quic-ack-frequency, Section 4). It writes
// the fields as given, even a RequestedMaxAckDelay of 2^14 milliseconds or
// more, and panics if a field exceeds 2^62-1.
func (f AckFrequencyFrame) Append(b []byte) []byte {
	b = AppendFrameType(b, FrameTypeAckFrequency)
	b = AppendVarint(b, f.SequenceNumber)
	b = AppendVarint(b, f.AckElicitingThreshold)
	b = AppendVarint(b, f.RequestedMaxAckDelay)
	return AppendVarint(b, f.ReorderingThreshold)
}

// EncodedLen returns the number of bytes Append writes
// (draft-ietf-quic-ack-frequency, Section 4).
func (f AckFrequencyFrame) EncodedLen() int {
	return VarintLen(uint64(FrameTypeAckFrequency)) + VarintLen(f.SequenceNumber) +
		VarintLen(f.AckElicitingThreshold) + VarintLen(f.RequestedMaxAckDelay) +
		VarintLen(f.ReorderingThreshold)
}
