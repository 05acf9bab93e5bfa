package wire

// pathDataLen is the length of the Data field of PATH_CHALLENGE and
// PATH_RESPONSE frames: 64 bits (RFC 9000, Sections 19.17 and 19.18).
const pathDataLen = 8

// A PathChallengeFrame is a PATH_CHALLENGE frame (type 0x1a), used to check
// reachability of the peer and to validate a path
// (RFC 9000, Section 19.17). "The recipient of this frame MUST generate a
// PATH_RESPONSE frame (Section 19.18) containing the same Data value."
type PathChallengeFrame struct {
	// Data is 8 bytes of arbitrary data. "Including 64 bits of entropy in
	// a PATH_CHALLENGE frame ensures that it is easier to receive the
	// packet than it is to guess the value correctly."
	Data [8]byte
}

// ParsePathChallengeFrame parses the PATH_CHALLENGE frame at the start of
// b, which begins with the frame type, and returns it with the number of
// bytes it takes, always 9 (RFC 9000, Section 19.17). A truncated frame is
// a FRAME_ENCODING_ERROR; so is a frame type other than 0x1a.
func ParsePathChallengeFrame(b []byte) (PathChallengeFrame, int, error) {
	var f PathChallengeFrame
	n, err := pathParse(b, FrameTypePathChallenge, &f.Data)
	if err != nil {
		return PathChallengeFrame{}, 0, err
	}
	return f, n, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.17).
func (f PathChallengeFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypePathChallenge))
	return append(b, f.Data[:]...)
}

// EncodedLen returns the number of bytes Append writes, always 9 (RFC 9000, Section 19.17).
func (f PathChallengeFrame) EncodedLen() int { return 1 + pathDataLen }

// A PathResponseFrame is a PATH_RESPONSE frame (type 0x1b), sent in
// response to a PATH_CHALLENGE frame with the same Data
// (RFC 9000, Section 19.18).
//
// The parser checks only the encoding. Matching the Data against the
// challenges sent is the connection's job: "If the content of a
// PATH_RESPONSE frame does not match the content of a PATH_CHALLENGE frame
// previously sent by the endpoint, the endpoint MAY generate a connection
// error of type PROTOCOL_VIOLATION." (RFC 9000, Section 19.18).
type PathResponseFrame struct {
	// Data is the Data of the PATH_CHALLENGE frame being answered.
	Data [8]byte
}

// ParsePathResponseFrame parses the PATH_RESPONSE frame at the start of b,
// which begins with the frame type, and returns it with the number of bytes
// it takes, always 9 (RFC 9000, Section 19.18). A truncated frame is a
// FRAME_ENCODING_ERROR; so is a frame type other than 0x1b.
func ParsePathResponseFrame(b []byte) (PathResponseFrame, int, error) {
	var f PathResponseFrame
	n, err := pathParse(b, FrameTypePathResponse, &f.Data)
	if err != nil {
		return PathResponseFrame{}, 0, err
	}
	return f, n, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.18).
func (f PathResponseFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypePathResponse))
	return append(b, f.Data[:]...)
}

// EncodedLen returns the number of bytes Append writes, always 9 (RFC 9000, Section 19.18).
func (f PathResponseFrame) EncodedLen() int { return 1 + pathDataLen }

// pathParse reads a PATH_CHALLENGE or PATH_RESPONSE frame of type t into
// data, the two having the same format (RFC 9000, Section 19.18).
func pathParse(b []byte, t FrameType, data *[8]byte) (int, error) {
	_, n, err := controlReadType(b, t, t)
	if err != nil {
		return 0, err
	}
	r := controlReader(b, n)
	d := r.bytes(pathDataLen)
	if !r.ok {
		return 0, encodingError(t, controlReasonTruncated)
	}
	copy(data[:], d)
	return r.off, nil
}
