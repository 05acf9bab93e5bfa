package wire

import "testing"

func TestMaxDataFrame(t *testing.T) {
	var frames []MaxDataFrame
	for _, v := range controlEdgeValues {
		frames = append(frames, MaxDataFrame{MaximumData: v})
	}
	controlCheckFrames(t, ParseMaxDataFrame, frames...)

	controlCheckHex(t, ParseMaxDataFrame, MaxDataFrame{MaximumData: 0}, "10 00")
	controlCheckHex(t, ParseMaxDataFrame, MaxDataFrame{MaximumData: 1 << 30}, "10 c000000040000000")

	controlCheckAllocs(t, ParseMaxDataFrame, MaxDataFrame{MaximumData: 1 << 20})
}
