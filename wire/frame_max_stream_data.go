package wire

// A MaxStreamDataFrame is a MAX_STREAM_DATA frame (type 0x11), which tells
// the peer how many bytes it may send on a stream
// (RFC 9000, Section 19.10).
//
// The parser checks only the encoding. Rules that need connection state are
// the connection's job: "Receiving a MAX_STREAM_DATA frame for a locally
// initiated stream that has not yet been created MUST be treated as a
// connection error of type STREAM_STATE_ERROR. An endpoint that receives a
// MAX_STREAM_DATA frame for a receive-only stream MUST terminate the
// connection with error STREAM_STATE_ERROR." (RFC 9000, Section 19.10).
type MaxStreamDataFrame struct {
	// StreamID is the stream the limit applies to.
	StreamID StreamID
	// MaximumStreamData is the maximum number of bytes that can be sent on
	// the stream.
	MaximumStreamData uint64
}

// ParseMaxStreamDataFrame parses the MAX_STREAM_DATA frame at the start of
// b, which begins with the frame type, and returns it with the number of
// bytes it takes (RFC 9000, Section 19.10). A truncated frame is a
// FRAME_ENCODING_ERROR; so is a frame type other than 0x11.
func ParseMaxStreamDataFrame(b []byte) (MaxStreamDataFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeMaxStreamData, FrameTypeMaxStreamData)
	if err != nil {
		return MaxStreamDataFrame{}, 0, err
	}
	r := controlReader(b, n)
	id := r.varint()
	limit := r.varint()
	if !r.ok {
		return MaxStreamDataFrame{}, 0, encodingError(FrameTypeMaxStreamData, controlReasonTruncated)
	}
	return MaxStreamDataFrame{StreamID: StreamID(id), MaximumStreamData: limit}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.10). It panics if StreamID is
// negative or a field exceeds 2^62-1.
func (f MaxStreamDataFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeMaxStreamData))
	b = AppendVarint(b, uint64(f.StreamID))
	return AppendVarint(b, f.MaximumStreamData)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.10).
func (f MaxStreamDataFrame) EncodedLen() int {
	return 1 + VarintLen(uint64(f.StreamID)) + VarintLen(f.MaximumStreamData)
}
