package wire

// A DataBlockedFrame is a DATA_BLOCKED frame (type 0x14), which a sender
// sends when connection-level flow control keeps it from sending data
// (RFC 9000, Section 19.12).
type DataBlockedFrame struct {
	// MaximumData is the connection-level limit at which blocking
	// occurred.
	MaximumData uint64
}

// ParseDataBlockedFrame parses the DATA_BLOCKED frame at the start of b,
// which begins with the frame type, and returns it with the number of bytes
// it takes (RFC 9000, Section 19.12). A truncated frame is a
// FRAME_ENCODING_ERROR; so is a frame type other than 0x14.
func ParseDataBlockedFrame(b []byte) (DataBlockedFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeDataBlocked, FrameTypeDataBlocked)
	if err != nil {
		return DataBlockedFrame{}, 0, err
	}
	r := controlReader(b, n)
	limit := r.varint()
	if !r.ok {
		return DataBlockedFrame{}, 0, encodingError(FrameTypeDataBlocked, controlReasonTruncated)
	}
	return DataBlockedFrame{MaximumData: limit}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.12). It panics if MaximumData
// exceeds 2^62-1.
func (f DataBlockedFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeDataBlocked))
	return AppendVarint(b, f.MaximumData)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.12).
func (f DataBlockedFrame) EncodedLen() int { return 1 + VarintLen(f.MaximumData) }
