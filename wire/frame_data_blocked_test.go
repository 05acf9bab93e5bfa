package wire

import "testing"

func TestDataBlockedFrame(t *testing.T) {
	var frames []DataBlockedFrame
	for _, v := range controlEdgeValues {
		frames = append(frames, DataBlockedFrame{MaximumData: v})
	}
	controlCheckFrames(t, ParseDataBlockedFrame, frames...)

	controlCheckHex(t, ParseDataBlockedFrame, DataBlockedFrame{MaximumData: 63}, "14 3f")
	controlCheckHex(t, ParseDataBlockedFrame, DataBlockedFrame{MaximumData: 64}, "14 4040")

	controlCheckAllocs(t, ParseDataBlockedFrame, DataBlockedFrame{MaximumData: 1 << 35})
}
