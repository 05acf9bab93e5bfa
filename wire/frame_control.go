package wire

// Helpers shared by the parsers of the control frames (RESET_STREAM,
// STOP_SENDING, flow-control and stream-limit frames, connection ID
// management, path validation, RESET_STREAM_AT and ACK_FREQUENCY).

// Reasons used by the control-frame parsers in *TransportError values.
const (
	controlReasonTruncated = "truncated frame"
	controlReasonWrongType = "wrong frame type for this parser"
)

// controlReadType reads the frame type at the start of b for a parser that
// accepts the types lo through hi (lo == hi for most frames), and returns
// the type and its length. A type outside lo..hi is a FRAME_ENCODING_ERROR
// naming the type found; an empty or truncated type is a FRAME_ENCODING_ERROR
// naming lo.
func controlReadType(b []byte, lo, hi FrameType) (FrameType, int, error) {
	// Fast path: every type below 64 is a single byte (0b00 prefix).
	if len(b) > 0 && hi <= 63 {
		if t := FrameType(b[0]); t >= lo && t <= hi {
			return t, 1, nil
		}
	}
	v, n := ParseVarint(b)
	if n == 0 {
		return lo, 0, encodingError(lo, controlReasonTruncated)
	}
	t := FrameType(v)
	if t < lo || t > hi {
		return t, 0, encodingError(t, controlReasonWrongType)
	}
	// RFC 9000, Section 12.4: "a frame type MUST use the shortest possible
	// encoding ... An endpoint MAY treat the receipt of a frame type that
	// uses a longer encoding than necessary as a connection error of type
	// PROTOCOL_VIOLATION." ParseFrameType does the same.
	if n != VarintLen(v) {
		return t, 0, frameError(ProtocolViolation, t, "frame type not minimally encoded")
	}
	return t, n, nil
}

// controlReader returns a reader positioned after the frame type, which
// controlReadType found to take n bytes.
func controlReader(b []byte, n int) reader {
	r := newReader(b)
	r.off = n
	return r
}
