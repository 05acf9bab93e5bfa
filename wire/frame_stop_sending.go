package wire

// A StopSendingFrame is a STOP_SENDING frame (type 0x05), which asks the
// peer to stop sending on a stream because incoming data is being discarded
// (RFC 9000, Section 19.5).
//
// The parser checks only the encoding. Rules that need connection state are
// the connection's job: "Receiving a STOP_SENDING frame for a locally
// initiated stream that has not yet been created MUST be treated as a
// connection error of type STREAM_STATE_ERROR. An endpoint that receives a
// STOP_SENDING frame for a receive-only stream MUST terminate the
// connection with error STREAM_STATE_ERROR." (RFC 9000, Section 19.5).
type StopSendingFrame struct {
	// StreamID is the stream being ignored.
	StreamID StreamID
	// ErrorCode is the application protocol error code that says why the
	// sender is ignoring the stream (RFC 9000, Section 20.2).
	ErrorCode uint64
}

// ParseStopSendingFrame parses the STOP_SENDING frame at the start of b,
// which begins with the frame type, and returns it with the number of bytes
// it takes (RFC 9000, Section 19.5). A truncated frame is a
// FRAME_ENCODING_ERROR; so is a frame type other than 0x05.
func ParseStopSendingFrame(b []byte) (StopSendingFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeStopSending, FrameTypeStopSending)
	if err != nil {
		return StopSendingFrame{}, 0, err
	}
	r := controlReader(b, n)
	id := r.varint()
	code := r.varint()
	if !r.ok {
		return StopSendingFrame{}, 0, encodingError(FrameTypeStopSending, controlReasonTruncated)
	}
	return StopSendingFrame{StreamID: StreamID(id), ErrorCode: code}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.5). It panics if StreamID is
// negative or a field exceeds 2^62-1.
func (f StopSendingFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeStopSending))
	b = AppendVarint(b, uint64(f.StreamID))
	return AppendVarint(b, f.ErrorCode)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.5).
func (f StopSendingFrame) EncodedLen() int {
	return 1 + VarintLen(uint64(f.StreamID)) + VarintLen(f.ErrorCode)
}
