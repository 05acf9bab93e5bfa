package wire

// A StreamsBlockedFrame is a STREAMS_BLOCKED frame (type 0x16 for
// bidirectional streams, 0x17 for unidirectional streams), which a sender
// sends when the peer's stream limit keeps it from opening a stream
// (RFC 9000, Section 19.14).
//
// The parser checks that the count is at most MaxStreamCount.
type StreamsBlockedFrame struct {
	// Bidi is true for bidirectional streams (type 0x16) and false for
	// unidirectional streams (type 0x17).
	Bidi bool
	// MaximumStreams is the maximum number of streams of the type allowed
	// when the frame was sent, at most MaxStreamCount.
	MaximumStreams uint64
}

// ParseStreamsBlockedFrame parses the STREAMS_BLOCKED frame of either type
// (0x16 or 0x17) at the start of b, which begins with the frame type, and
// returns it with the number of bytes it takes (RFC 9000, Section 19.14). A
// truncated frame, another frame type and a count above MaxStreamCount are
// FRAME_ENCODING_ERRORs.
func ParseStreamsBlockedFrame(b []byte) (StreamsBlockedFrame, int, error) {
	t, n, err := controlReadType(b, FrameTypeStreamsBlockedBidi, FrameTypeStreamsBlockedUni)
	if err != nil {
		return StreamsBlockedFrame{}, 0, err
	}
	r := controlReader(b, n)
	limit := r.varint()
	if !r.ok {
		return StreamsBlockedFrame{}, 0, encodingError(t, controlReasonTruncated)
	}
	// RFC 9000, Section 19.14: "This value cannot exceed 2^60 ... Receipt
	// of a frame that encodes a larger stream ID MUST be treated as a
	// connection error of type STREAM_LIMIT_ERROR or FRAME_ENCODING_ERROR."
	// We choose FRAME_ENCODING_ERROR, as for MAX_STREAMS.
	if limit > MaxStreamCount {
		return StreamsBlockedFrame{}, 0, encodingError(t, "maximum streams exceeds 2^60")
	}
	return StreamsBlockedFrame{Bidi: t == FrameTypeStreamsBlockedBidi, MaximumStreams: limit}, r.off, nil
}

// FrameType returns the frame's type: FrameTypeStreamsBlockedBidi or
// FrameTypeStreamsBlockedUni (RFC 9000, Section 19.14).
func (f StreamsBlockedFrame) FrameType() FrameType {
	if f.Bidi {
		return FrameTypeStreamsBlockedBidi
	}
	return FrameTypeStreamsBlockedUni
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.14). It writes MaximumStreams as
// given, even above MaxStreamCount, and panics if it exceeds 2^62-1.
func (f StreamsBlockedFrame) Append(b []byte) []byte {
	b = append(b, byte(f.FrameType()))
	return AppendVarint(b, f.MaximumStreams)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.14).
func (f StreamsBlockedFrame) EncodedLen() int { return 1 + VarintLen(f.MaximumStreams) }
