package wire

import "testing"

func TestRetireConnectionIDFrame(t *testing.T) {
	var frames []RetireConnectionIDFrame
	for _, v := range controlEdgeValues {
		frames = append(frames, RetireConnectionIDFrame{SequenceNumber: v})
	}
	controlCheckFrames(t, ParseRetireConnectionIDFrame, frames...)

	controlCheckHex(t, ParseRetireConnectionIDFrame, RetireConnectionIDFrame{SequenceNumber: 2}, "19 02")
	controlCheckHex(t, ParseRetireConnectionIDFrame, RetireConnectionIDFrame{SequenceNumber: MaxVarint}, "19 ffffffffffffffff")

	controlCheckAllocs(t, ParseRetireConnectionIDFrame, RetireConnectionIDFrame{SequenceNumber: 300})
}
