package wire

import "testing"

func TestStreamsBlockedFrame(t *testing.T) {
	var frames []StreamsBlockedFrame
	for _, v := range append(controlEdgeValues[:len(controlEdgeValues)-1:len(controlEdgeValues)-1], MaxStreamCount-1, MaxStreamCount) {
		frames = append(frames, StreamsBlockedFrame{Bidi: true, MaximumStreams: v}, StreamsBlockedFrame{Bidi: false, MaximumStreams: v})
	}
	controlCheckFrames(t, ParseStreamsBlockedFrame, frames...)

	controlCheckHex(t, ParseStreamsBlockedFrame, StreamsBlockedFrame{Bidi: true, MaximumStreams: 16384}, "16 80004000")
	controlCheckHex(t, ParseStreamsBlockedFrame, StreamsBlockedFrame{Bidi: false, MaximumStreams: 0}, "17 00")

	// RFC 9000, Section 19.14: "This value cannot exceed 2^60 ... Receipt
	// of a frame that encodes a larger stream ID MUST be treated as a
	// connection error of type STREAM_LIMIT_ERROR or FRAME_ENCODING_ERROR."
	controlCheckInvalid(t, ParseStreamsBlockedFrame, "16 d000000000000001", FrameEncodingError, FrameTypeStreamsBlockedBidi)
	controlCheckInvalid(t, ParseStreamsBlockedFrame, "17 ffffffffffffffff", FrameEncodingError, FrameTypeStreamsBlockedUni)
	// Neighbouring types are not STREAMS_BLOCKED.
	controlCheckInvalid(t, ParseStreamsBlockedFrame, "15 00 00", FrameEncodingError, FrameTypeStreamDataBlocked)
	controlCheckInvalid(t, ParseStreamsBlockedFrame, "18 00", FrameEncodingError, FrameTypeNewConnectionID)

	controlCheckAllocs(t, ParseStreamsBlockedFrame, StreamsBlockedFrame{Bidi: true, MaximumStreams: 1 << 40})
}
