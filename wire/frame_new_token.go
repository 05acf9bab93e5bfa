package wire

// NewTokenFrame is a NEW_TOKEN frame (type 0x07, RFC 9000, Section 19.7),
// by which a server gives the client a token for the Initial packets of a
// future connection.
type NewTokenFrame struct {
	// Token is the opaque token; it must not be empty. A parsed frame's
	// Token is a sub-slice of the parser's input, not a copy.
	Token []byte
}

// ParseNewTokenFrame parses the NEW_TOKEN frame at the start of b
// (RFC 9000, Section 19.7) and returns it and the number of bytes it takes.
// Token is a sub-slice of b. A truncated frame, a Token Length beyond the
// end of b and an empty token are FRAME_ENCODING_ERROR. ("Clients MUST NOT
// send NEW_TOKEN frames"; that PROTOCOL_VIOLATION depends on the role and is
// checked by the connection.)
func ParseNewTokenFrame(b []byte) (NewTokenFrame, int, error) {
	n, err := simpleExpectType(b, FrameTypeNewToken)
	if err != nil {
		return NewTokenFrame{}, 0, err
	}
	r := newReader(b)
	r.off = n
	token := r.bytes(r.varint())
	if !r.ok {
		return NewTokenFrame{}, 0, encodingError(FrameTypeNewToken, "truncated NEW_TOKEN frame")
	}
	// RFC 9000, Section 19.7: "The token MUST NOT be empty. A client MUST
	// treat receipt of a NEW_TOKEN frame with an empty Token field as a
	// connection error of type FRAME_ENCODING_ERROR."
	if len(token) == 0 {
		return NewTokenFrame{}, 0, encodingError(FrameTypeNewToken, "empty token")
	}
	return NewTokenFrame{Token: token}, r.off, nil
}

// Append appends the NEW_TOKEN frame (RFC 9000, Section 19.7). It does not
// check that Token is non-empty; sending an empty one is a protocol error.
func (f NewTokenFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeNewToken))
	b = AppendVarint(b, uint64(len(f.Token)))
	return append(b, f.Token...)
}

// EncodedLen returns the number of bytes Append writes.
func (f NewTokenFrame) EncodedLen() int {
	return 1 + VarintLen(uint64(len(f.Token))) + len(f.Token)
}
