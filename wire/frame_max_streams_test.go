package wire

import "testing"

func TestMaxStreamsFrame(t *testing.T) {
	var frames []MaxStreamsFrame
	for _, v := range append(controlEdgeValues[:len(controlEdgeValues)-1:len(controlEdgeValues)-1], MaxStreamCount-1, MaxStreamCount) {
		frames = append(frames, MaxStreamsFrame{Bidi: true, MaximumStreams: v}, MaxStreamsFrame{Bidi: false, MaximumStreams: v})
	}
	controlCheckFrames(t, ParseMaxStreamsFrame, frames...)

	controlCheckHex(t, ParseMaxStreamsFrame, MaxStreamsFrame{Bidi: true, MaximumStreams: 100}, "12 4064")
	controlCheckHex(t, ParseMaxStreamsFrame, MaxStreamsFrame{Bidi: false, MaximumStreams: 3}, "13 03")
	controlCheckHex(t, ParseMaxStreamsFrame, MaxStreamsFrame{Bidi: false, MaximumStreams: MaxStreamCount}, "13 d000000000000000")

	// RFC 9000, Section 19.11: "This value cannot exceed 2^60 ... Receipt
	// of a frame that permits opening of a stream larger than this limit
	// MUST be treated as a connection error of type FRAME_ENCODING_ERROR."
	controlCheckInvalid(t, ParseMaxStreamsFrame, "12 d000000000000001", FrameEncodingError, FrameTypeMaxStreamsBidi)
	controlCheckInvalid(t, ParseMaxStreamsFrame, "13 d000000000000001", FrameEncodingError, FrameTypeMaxStreamsUni)
	controlCheckInvalid(t, ParseMaxStreamsFrame, "13 ffffffffffffffff", FrameEncodingError, FrameTypeMaxStreamsUni)
	// Neighbouring types are not MAX_STREAMS.
	controlCheckInvalid(t, ParseMaxStreamsFrame, "11 00 00", FrameEncodingError, FrameTypeMaxStreamData)
	controlCheckInvalid(t, ParseMaxStreamsFrame, "14 00", FrameEncodingError, FrameTypeDataBlocked)

	if MaxStreamCount != 1<<60 || NthStreamID(RoleServer, false, MaxStreamCount) != MaxStreamID {
		t.Errorf("the %d-th stream is not the last one", uint64(MaxStreamCount))
	}
	// The encoder writes what it is given.
	if got := (MaxStreamsFrame{Bidi: true, MaximumStreams: MaxVarint}).Append(nil); len(got) != 9 {
		t.Errorf("Append of 2^62-1 streams = %x", got)
	}

	controlCheckAllocs(t, ParseMaxStreamsFrame, MaxStreamsFrame{Bidi: false, MaximumStreams: 1000})
}
