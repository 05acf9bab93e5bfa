package wire

import "testing"

func TestResetStreamAtFrame(t *testing.T) {
	var frames []ResetStreamAtFrame
	for _, v := range controlEdgeValues {
		frames = append(frames,
			ResetStreamAtFrame{StreamID: StreamID(v), ErrorCode: v, FinalSize: v, ReliableSize: v},
			ResetStreamAtFrame{StreamID: StreamID(MaxVarint - v), ErrorCode: MaxVarint - v, FinalSize: v, ReliableSize: 0},
			ResetStreamAtFrame{FinalSize: MaxVarint, ReliableSize: v},
		)
	}
	controlCheckFrames(t, ParseResetStreamAtFrame, frames...)

	// Type 0x24, Stream ID 4, error code 0x10c, final size 1000, reliable
	// size 63.
	controlCheckHex(t, ParseResetStreamAtFrame,
		ResetStreamAtFrame{StreamID: 4, ErrorCode: 0x10c, FinalSize: 1000, ReliableSize: 63},
		"24 04 410c 43e8 3f")

	// draft-ietf-quic-reliable-stream-reset, Section 4: "If the Reliable
	// Size is larger than the Final Size, the receiver MUST close the
	// connection with a connection error of type FRAME_ENCODING_ERROR."
	controlCheckInvalid(t, ParseResetStreamAtFrame, "24 04 00 05 06", FrameEncodingError, FrameTypeResetStreamAt)
	controlCheckInvalid(t, ParseResetStreamAtFrame, "24 00 00 00 01", FrameEncodingError, FrameTypeResetStreamAt)
	controlCheckInvalid(t, ParseResetStreamAtFrame, "24 00 00 bfffffff ffffffffffffffff", FrameEncodingError, FrameTypeResetStreamAt)
	// Equal sizes are allowed.
	controlCheckHex(t, ParseResetStreamAtFrame, ResetStreamAtFrame{FinalSize: 5, ReliableSize: 5}, "24 00 00 05 05")
	// The encoder writes what it is given.
	if b := (ResetStreamAtFrame{FinalSize: 1, ReliableSize: 2}).Append(nil); string(b) != "\x24\x00\x00\x01\x02" {
		t.Errorf("Append of reliable size > final size = %x", b)
	}

	controlCheckAllocs(t, ParseResetStreamAtFrame, ResetStreamAtFrame{StreamID: 9, ErrorCode: 3, FinalSize: 1 << 40, ReliableSize: 1 << 20})
}
