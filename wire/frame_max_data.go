package wire

// A MaxDataFrame is a MAX_DATA frame (type 0x10), which tells the peer how
// many bytes it may send on the connection as a whole
// (RFC 9000, Section 19.9).
//
// The parser checks only the encoding. Whether a MAX_DATA frame raises the
// limit ("A sender MUST ignore any MAX_DATA or MAX_STREAM_DATA frames that
// do not increase flow control limits", RFC 9000, Section 4.1) is the
// connection's job.
type MaxDataFrame struct {
	// MaximumData is the maximum number of bytes that can be sent on the
	// entire connection.
	MaximumData uint64
}

// ParseMaxDataFrame parses the MAX_DATA frame at the start of b, which
// begins with the frame type, and returns it with the number of bytes it
// takes (RFC 9000, Section 19.9). A truncated frame is a
// FRAME_ENCODING_ERROR; so is a frame type other than 0x10.
func ParseMaxDataFrame(b []byte) (MaxDataFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeMaxData, FrameTypeMaxData)
	if err != nil {
		return MaxDataFrame{}, 0, err
	}
	r := controlReader(b, n)
	limit := r.varint()
	if !r.ok {
		return MaxDataFrame{}, 0, encodingError(FrameTypeMaxData, controlReasonTruncated)
	}
	return MaxDataFrame{MaximumData: limit}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.9). It panics if MaximumData
// exceeds 2^62-1.
func (f MaxDataFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeMaxData))
	return AppendVarint(b, f.MaximumData)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.9).
func (f MaxDataFrame) EncodedLen() int { return 1 + VarintLen(f.MaximumData) }
