package wire

// A ResetStreamAtFrame is a RESET_STREAM_AT frame (type 0x24): a
// RESET_STREAM frame that also asks the receiver to deliver the first
// ReliableSize bytes of the stream to the application
// (draft-ietf-quic-reliable-stream-reset, Section 4).
//
// The parser checks only the encoding, including that ReliableSize does not
// exceed FinalSize. Rules that need connection state are the connection's
// job: whether the reset_stream_at transport parameter was negotiated, the
// stream's direction and state, flow control ("If an endpoint receives a
// RESET_STREAM_AT frame that violates either flow control limit, it MUST
// close the connection with an error of type FLOW_CONTROL_ERROR") and the
// final size rules of RFC 9000, Section 4.5.
type ResetStreamAtFrame struct {
	// StreamID is the stream being terminated.
	StreamID StreamID
	// ErrorCode is the application protocol error code that says why the
	// stream is being closed (RFC 9000, Section 20.2).
	ErrorCode uint64
	// FinalSize is the final size of the stream in bytes
	// (RFC 9000, Section 4.5).
	FinalSize uint64
	// ReliableSize is the number of bytes from the start of the stream
	// that are delivered to the application despite the reset. It is at
	// most FinalSize.
	ReliableSize uint64
}

// ParseResetStreamAtFrame parses the RESET_STREAM_AT frame at the start of
// b, which begins with the frame type, and returns it with the number of
// bytes it takes (draft-ietf-quic-reliable-stream-reset, Section 4). A
// truncated frame, a frame type other than 0x24 and a Reliable Size larger
// than the Final Size are FRAME_ENCODING_ERRORs.
func ParseResetStreamAtFrame(b []byte) (ResetStreamAtFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeResetStreamAt, FrameTypeResetStreamAt)
	if err != nil {
		return ResetStreamAtFrame{}, 0, err
	}
	r := controlReader(b, n)
	id := r.varint()
	code := r.varint()
	size := r.varint()
	reliable := r.varint()
	if !r.ok {
		return ResetStreamAtFrame{}, 0, encodingError(FrameTypeResetStreamAt, controlReasonTruncated)
	}
	// draft-ietf-quic-reliable-stream-reset, Section 4: "If the Reliable
	// Size is larger than the Final Size, the receiver MUST close the
	// connection with a connection error of type FRAME_ENCODING_ERROR."
	if reliable > size {
		return ResetStreamAtFrame{}, 0, encodingError(FrameTypeResetStreamAt, "reliable size larger than final size")
	}
	return ResetStreamAtFrame{StreamID: StreamID(id), ErrorCode: code, FinalSize: size, ReliableSize: reliable}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (draft-ietf-quic-reliable-stream-reset, Section 4). It
// writes the fields as given, even a ReliableSize above FinalSize, and
// panics if StreamID is negative or a field exceeds 2^62-1.
func (f ResetStreamAtFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeResetStreamAt))
	b = AppendVarint(b, uint64(f.StreamID))
	b = AppendVarint(b, f.ErrorCode)
	b = AppendVarint(b, f.FinalSize)
	return AppendVarint(b, f.ReliableSize)
}

// EncodedLen returns the number of bytes Append writes
// (draft-ietf-quic-reliable-stream-reset, Section 4).
func (f ResetStreamAtFrame) EncodedLen() int {
	return 1 + VarintLen(uint64(f.StreamID)) + VarintLen(f.ErrorCode) +
		VarintLen(f.FinalSize) + VarintLen(f.ReliableSize)
}
