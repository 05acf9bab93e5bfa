package wire

import "testing"

func TestAckFrequencyFrame(t *testing.T) {
	// The largest valid Requested Max Ack Delay, just under 2^14 ms.
	const maxDelay = 1<<14*1000 - 1
	var frames []AckFrequencyFrame
	for _, v := range controlEdgeValues {
		frames = append(frames,
			AckFrequencyFrame{SequenceNumber: v, AckElicitingThreshold: v, RequestedMaxAckDelay: min(v, maxDelay), ReorderingThreshold: v},
			AckFrequencyFrame{SequenceNumber: MaxVarint - v, AckElicitingThreshold: 0, RequestedMaxAckDelay: maxDelay, ReorderingThreshold: MaxVarint - v},
		)
	}
	controlCheckFrames(t, ParseAckFrequencyFrame, frames...)

	// Type 0xaf as a two-byte varint (0x40af), sequence number 1, threshold
	// 10, delay 25000 us (4 bytes), reordering threshold 0.
	controlCheckHex(t, ParseAckFrequencyFrame,
		AckFrequencyFrame{SequenceNumber: 1, AckElicitingThreshold: 10, RequestedMaxAckDelay: 25000, ReorderingThreshold: 0},
		"40af 01 0a 800061a8 00")
	controlCheckHex(t, ParseAckFrequencyFrame,
		AckFrequencyFrame{RequestedMaxAckDelay: maxDelay},
		"40af 00 00 80f9ffff 00")

	// draft-ietf-quic-ack-frequency, Section 4: "Note that values of 2^14
	// milliseconds or greater are invalid for max_ack_delay ... Receipt of
	// an invalid value MUST be treated as a connection error of type
	// PROTOCOL_VIOLATION."
	controlCheckInvalid(t, ParseAckFrequencyFrame, "40af 00 00 80fa0000 00", ProtocolViolation, FrameTypeAckFrequency)
	controlCheckInvalid(t, ParseAckFrequencyFrame, "40af 00 00 ffffffffffffffff 00", ProtocolViolation, FrameTypeAckFrequency)
	// A lone byte 0xaf is not the frame type: its top bits 0b10 start a
	// four-byte varint, here 0x2f000000, which is some other type.
	controlCheckInvalid(t, ParseAckFrequencyFrame, "af 00 00 00 00", FrameEncodingError, 0x2f000000)

	// The encoder writes what it is given.
	if got := (AckFrequencyFrame{RequestedMaxAckDelay: 1 << 14 * 1000}).Append(nil); len(got) != 9 {
		t.Errorf("Append with a delay of 2^14 ms = %x", got)
	}

	controlCheckAllocs(t, ParseAckFrequencyFrame, AckFrequencyFrame{SequenceNumber: 7, AckElicitingThreshold: 1, RequestedMaxAckDelay: 25000, ReorderingThreshold: 1})
}
