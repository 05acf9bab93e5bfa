package wire

// A StreamDataBlockedFrame is a STREAM_DATA_BLOCKED frame (type 0x15),
// which a sender sends when stream-level flow control keeps it from sending
// data on a stream (RFC 9000, Section 19.13).
//
// The parser checks only the encoding. Rules that need connection state are
// the connection's job: "An endpoint that receives a STREAM_DATA_BLOCKED
// frame for a send-only stream MUST terminate the connection with error
// STREAM_STATE_ERROR." (RFC 9000, Section 19.13).
type StreamDataBlockedFrame struct {
	// StreamID is the stream that is blocked.
	StreamID StreamID
	// MaximumStreamData is the offset of the stream at which blocking
	// occurred.
	MaximumStreamData uint64
}

// ParseStreamDataBlockedFrame parses the STREAM_DATA_BLOCKED frame at the
// start of b, which begins with the frame type, and returns it with the
// number of bytes it takes (RFC 9000, Section 19.13). A truncated frame is a
// FRAME_ENCODING_ERROR; so is a frame type other than 0x15.
func ParseStreamDataBlockedFrame(b []byte) (StreamDataBlockedFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeStreamDataBlocked, FrameTypeStreamDataBlocked)
	if err != nil {
		return StreamDataBlockedFrame{}, 0, err
	}
	r := controlReader(b, n)
	id := r.varint()
	limit := r.varint()
	if !r.ok {
		return StreamDataBlockedFrame{}, 0, encodingError(FrameTypeStreamDataBlocked, controlReasonTruncated)
	}
	return StreamDataBlockedFrame{StreamID: StreamID(id), MaximumStreamData: limit}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.13). It panics if StreamID is
// negative or a field exceeds 2^62-1.
func (f StreamDataBlockedFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeStreamDataBlocked))
	b = AppendVarint(b, uint64(f.StreamID))
	return AppendVarint(b, f.MaximumStreamData)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.13).
func (f StreamDataBlockedFrame) EncodedLen() int {
	return 1 + VarintLen(uint64(f.StreamID)) + VarintLen(f.MaximumStreamData)
}
