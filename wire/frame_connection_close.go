package wire

// ConnectionCloseFrame is a CONNECTION_CLOSE frame (types 0x1c and 0x1d,
// RFC 9000, Section 19.19).
type ConnectionCloseFrame struct {
	// IsApplication selects type 0x1d, which carries an application
	// protocol error code (Section 20.2); otherwise the frame is of type
	// 0x1c and carries a transport error code (Section 20.1).
	IsApplication bool
	// ErrorCode is the Error Code field, a TransportErrorCode for type
	// 0x1c or an application protocol code for type 0x1d.
	ErrorCode uint64
	// FrameType is the type of the frame that triggered the error, 0
	// (PADDING) if unknown. Only type 0x1c carries it; Append ignores it
	// for type 0x1d and ParseConnectionCloseFrame sets it to 0.
	FrameType FrameType
	// Reason is the Reason Phrase, which "SHOULD be a UTF-8 encoded string"
	// and may be empty. A parsed frame's Reason is a sub-slice of the
	// parser's input, not a copy.
	Reason []byte
}

// ParseConnectionCloseFrame parses the CONNECTION_CLOSE frame of either type
// at the start of b (RFC 9000, Section 19.19) and returns it and the number
// of bytes it takes. The Frame Type field of type 0x1c is read as a
// varint and not otherwise checked. Reason is a sub-slice of b. A truncated
// frame and a Reason Phrase Length beyond the end of b are
// FRAME_ENCODING_ERROR.
func ParseConnectionCloseFrame(b []byte) (ConnectionCloseFrame, int, error) {
	if len(b) == 0 || (b[0] != byte(FrameTypeConnectionClose) && b[0] != byte(FrameTypeConnectionCloseApp)) {
		return ConnectionCloseFrame{}, 0, simpleTypeError(b, FrameTypeConnectionClose)
	}
	t := FrameType(b[0])
	r := newReader(b)
	r.off = 1
	var f ConnectionCloseFrame
	f.IsApplication = t == FrameTypeConnectionCloseApp
	f.ErrorCode = r.varint()
	if !f.IsApplication {
		// "Frame Type: A variable-length integer encoding the type of frame
		// that triggered the error. ... The application-specific variant of
		// CONNECTION_CLOSE (type 0x1d) does not include this field."
		f.FrameType = FrameType(r.varint())
	}
	f.Reason = r.bytes(r.varint())
	if !r.ok {
		return ConnectionCloseFrame{}, 0, encodingError(t, "truncated CONNECTION_CLOSE frame")
	}
	return f, r.off, nil
}

// Append appends the CONNECTION_CLOSE frame (RFC 9000, Section 19.19). It
// panics if ErrorCode or FrameType is above 2^62-1. A CONNECTION_CLOSE
// frame cannot be split between packets, so the caller truncates Reason to
// fit if need be.
func (f ConnectionCloseFrame) Append(b []byte) []byte {
	if f.IsApplication {
		b = append(b, byte(FrameTypeConnectionCloseApp))
		b = AppendVarint(b, f.ErrorCode)
	} else {
		b = append(b, byte(FrameTypeConnectionClose))
		b = AppendVarint(b, f.ErrorCode)
		b = AppendVarint(b, uint64(f.FrameType))
	}
	b = AppendVarint(b, uint64(len(f.Reason)))
	return append(b, f.Reason...)
}

// EncodedLen returns the number of bytes Append writes.
func (f ConnectionCloseFrame) EncodedLen() int {
	n := 1 + VarintLen(f.ErrorCode) + VarintLen(uint64(len(f.Reason))) + len(f.Reason)
	if !f.IsApplication {
		n += VarintLen(uint64(f.FrameType))
	}
	return n
}
