package wire

// A RetireConnectionIDFrame is a RETIRE_CONNECTION_ID frame (type 0x19),
// with which an endpoint says it will no longer use a connection ID that the
// peer issued (RFC 9000, Section 19.16).
//
// The parser checks only the encoding. Rules that need connection state are
// the connection's job: "Receipt of a RETIRE_CONNECTION_ID frame containing
// a sequence number greater than any previously sent to the peer MUST be
// treated as a connection error of type PROTOCOL_VIOLATION", a sequence
// number that names the packet's own Destination Connection ID, and "An
// endpoint that provides a zero-length connection ID MUST treat receipt of a
// RETIRE_CONNECTION_ID frame as a connection error of type
// PROTOCOL_VIOLATION." (RFC 9000, Section 19.16).
type RetireConnectionIDFrame struct {
	// SequenceNumber is the sequence number of the connection ID being
	// retired (RFC 9000, Section 5.1.2).
	SequenceNumber uint64
}

// ParseRetireConnectionIDFrame parses the RETIRE_CONNECTION_ID frame at the
// start of b, which begins with the frame type, and returns it with the
// number of bytes it takes (RFC 9000, Section 19.16). A truncated frame is a
// FRAME_ENCODING_ERROR; so is a frame type other than 0x19.
func ParseRetireConnectionIDFrame(b []byte) (RetireConnectionIDFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeRetireConnectionID, FrameTypeRetireConnectionID)
	if err != nil {
		return RetireConnectionIDFrame{}, 0, err
	}
	r := controlReader(b, n)
	seq := r.varint()
	if !r.ok {
		return RetireConnectionIDFrame{}, 0, encodingError(FrameTypeRetireConnectionID, controlReasonTruncated)
	}
	return RetireConnectionIDFrame{SequenceNumber: seq}, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.16). It panics if SequenceNumber
// exceeds 2^62-1.
func (f RetireConnectionIDFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeRetireConnectionID))
	return AppendVarint(b, f.SequenceNumber)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.16).
func (f RetireConnectionIDFrame) EncodedLen() int { return 1 + VarintLen(f.SequenceNumber) }
