package wire

// MaxStreamCount is the largest number of streams of one type that a
// MAX_STREAMS or STREAMS_BLOCKED frame, or an initial_max_streams_bidi or
// initial_max_streams_uni transport parameter, can carry: 2^60. "This value
// cannot exceed 2^60, as it is not possible to encode stream IDs larger than
// 2^62-1." (RFC 9000, Sections 4.6, 19.11 and 19.14).
const MaxStreamCount = 1 << 60

// A MaxStreamsFrame is a MAX_STREAMS frame (type 0x12 for bidirectional
// streams, 0x13 for unidirectional streams), which tells the peer the
// cumulative number of streams of a type it may open
// (RFC 9000, Section 19.11).
//
// The parser checks that the count is at most MaxStreamCount. Rules that
// need connection state are the connection's job: "MAX_STREAMS frames that
// do not increase the stream limit MUST be ignored." (RFC 9000,
// Section 19.11).
type MaxStreamsFrame struct {
	// Bidi is true for bidirectional streams (type 0x12) and false for
	// unidirectional streams (type 0x13).
	Bidi bool
	// MaximumStreams is the cumulative number of streams of the type that
	// can be opened over the lifetime of the connection, at most
	// MaxStreamCount.
	MaximumStreams uint64
}

// ParseMaxStreamsFrame parses the MAX_STREAMS frame of either type (0x12 or
// 0x13) at the start of b, which begins with the frame type, and returns it
// with the number of bytes it takes (RFC 9000, Section 19.11). A truncated
// frame, another frame type and a count above MaxStreamCount are
// FRAME_ENCODING_ERRORs.
func ParseMaxStreamsFrame(b []byte) (MaxStreamsFrame, int, error) {
	t, n, err := controlReadType(b, FrameTypeMaxStreamsBidi, FrameTypeMaxStreamsUni)
	if err != nil {
		return MaxStreamsFrame{}, 0, err
	}
	r := controlReader(b, n)
	limit := r.varint()
	if !r.ok {
		return MaxStreamsFrame{}, 0, encodingError(t, controlReasonTruncated)
	}
	// RFC 9000, Section 19.11: "This value cannot exceed 2^60 ... Receipt
	// of a frame that permits opening of a stream larger than this limit
	// MUST be treated as a connection error of type FRAME_ENCODING_ERROR."
	if limit > MaxStreamCount {
		return MaxStreamsFrame{}, 0, encodingError(t, "maximum streams exceeds 2^60")
	}
	return MaxStreamsFrame{Bidi: t == FrameTypeMaxStreamsBidi, MaximumStreams: limit}, r.off, nil
}

// FrameType returns the frame's type: FrameTypeMaxStreamsBidi or
// FrameTypeMaxStreamsUni (RFC 9000, Section 19.11).
func (f MaxStreamsFrame) FrameType() FrameType {
	if f.Bidi {
		return FrameTypeMaxStreamsBidi
	}
	return FrameTypeMaxStreamsUni
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.11). It writes MaximumStreams as
// given, even above MaxStreamCount, and panics if it exceeds 2^62-1.
func (f MaxStreamsFrame) Append(b []byte) []byte {
	b = append(b, byte(f.FrameType()))
	return AppendVarint(b, f.MaximumStreams)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.11).
func (f MaxStreamsFrame) EncodedLen() int { return 1 + VarintLen(f.MaximumStreams) }
