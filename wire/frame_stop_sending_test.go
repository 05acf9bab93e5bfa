package wire

import "testing"

func TestStopSendingFrame(t *testing.T) {
	var frames []StopSendingFrame
	for _, v := range controlEdgeValues {
		frames = append(frames,
			StopSendingFrame{StreamID: StreamID(v), ErrorCode: v},
			StopSendingFrame{StreamID: StreamID(v), ErrorCode: MaxVarint - v},
		)
	}
	controlCheckFrames(t, ParseStopSendingFrame, frames...)

	// Type 0x05, Stream ID 2^62-1 (8 bytes), error code 0.
	controlCheckHex(t, ParseStopSendingFrame,
		StopSendingFrame{StreamID: MaxStreamID, ErrorCode: 0},
		"05 ffffffffffffffff 00")

	controlCheckAllocs(t, ParseStopSendingFrame, StopSendingFrame{StreamID: 3, ErrorCode: 0x10c})
}
