package wire

import "testing"

func TestStreamDataBlockedFrame(t *testing.T) {
	var frames []StreamDataBlockedFrame
	for _, v := range controlEdgeValues {
		frames = append(frames,
			StreamDataBlockedFrame{StreamID: StreamID(v), MaximumStreamData: v},
			StreamDataBlockedFrame{StreamID: StreamID(v), MaximumStreamData: MaxVarint - v},
		)
	}
	controlCheckFrames(t, ParseStreamDataBlockedFrame, frames...)

	// Type 0x15, Stream ID 7, maximum 2^30 (8 bytes).
	controlCheckHex(t, ParseStreamDataBlockedFrame,
		StreamDataBlockedFrame{StreamID: 7, MaximumStreamData: 1 << 30},
		"15 07 c000000040000000")

	controlCheckAllocs(t, ParseStreamDataBlockedFrame, StreamDataBlockedFrame{StreamID: 7, MaximumStreamData: 100})
}
