package wire

// A ResetStreamFrame is a RESET_STREAM frame (type 0x04), which abruptly
// terminates the sending part of a stream (RFC 9000, Section 19.4).
//
// The parser checks only the encoding. Rules that need connection state are
// the connection's job: "An endpoint that receives a RESET_STREAM frame for
// a send-only stream MUST terminate the connection with error
// STREAM_STATE_ERROR" (RFC 9000, Section 19.4), and the final size and flow
// control checks of RFC 9000, Sections 4.5 and 19.9.
type ResetStreamFrame struct {
	// StreamID is the stream being terminated.
	StreamID StreamID
	// ErrorCode is the application protocol error code that says why the
	// stream is being closed (RFC 9000, Section 20.2).
	ErrorCode uint64
	// FinalSize is the final size of the stream in bytes
	// (RFC 9000, Section 4.5).
	FinalSize uint64
}

// ParseResetStreamFrame parses the RESET_STREAM frame at the start of b,
// which begins with the frame type, and returns it with the number of bytes
// it takes (RFC 9000, Section 19.4). A truncated frame is a
// FRAME_ENCODING_ERROR; so is a frame type other than 0x04.
func ParseResetStreamFrame(b []byte) (ResetStreamFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeResetStream, FrameTypeResetStream)
	if err != nil {
		return ResetStreamFrame{}, 0, err
	}
	r := controlReader(b, n)
	id := r.varint()
	code := r.varint()
	size := r.varint()
	if !r.ok {
		return ResetStreamFrame{}, 0, encodingError(FrameTypeResetStream, controlReasonTruncated)
	}
	return ResetStreamFrame{StreamID: StreamID(id), ErrorCode: code, FinalSize: size}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.4). It panics if StreamID is
// negative or a field exceeds 2^62-1.
func (f ResetStreamFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeResetStream))
	b = AppendVarint(b, uint64(f.StreamID))
	b = AppendVarint(b, f.ErrorCode)
	return AppendVarint(b, f.FinalSize)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.4).
func (f ResetStreamFrame) EncodedLen() int {
	return 1 + VarintLen(uint64(f.StreamID)) + VarintLen(f.ErrorCode) + VarintLen(f.FinalSize)
}
