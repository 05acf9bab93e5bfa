package wire

// A NewConnectionIDFrame is a NEW_CONNECTION_ID frame (type 0x18), which
// gives the peer an alternative connection ID and its stateless reset token
// (RFC 9000, Section 19.15).
//
// The parser checks the encoding: a connection ID length of 1 to 20 bytes
// and a RetirePriorTo not above SequenceNumber. Rules that need connection
// state are the connection's job: "An endpoint that is sending packets with
// a zero-length Destination Connection ID MUST treat receipt of a
// NEW_CONNECTION_ID frame as a connection error of type
// PROTOCOL_VIOLATION", repeated connection IDs with a different token or
// sequence number, the active_connection_id_limit (RFC 9000, Section 5.1.1)
// and retiring what Retire Prior To names (RFC 9000, Section 5.1.2).
type NewConnectionIDFrame struct {
	// SequenceNumber is the sequence number the sender assigned to the
	// connection ID (RFC 9000, Section 5.1.1).
	SequenceNumber uint64
	// RetirePriorTo asks the receiver to retire the connection IDs with
	// smaller sequence numbers (RFC 9000, Section 5.1.2). It is at most
	// SequenceNumber.
	RetirePriorTo uint64
	// ConnectionID is the new connection ID, 1 to 20 bytes long.
	ConnectionID ConnectionID
	// StatelessResetToken is the token for a stateless reset when
	// ConnectionID is in use (RFC 9000, Section 10.3).
	StatelessResetToken StatelessResetToken
}

// ParseNewConnectionIDFrame parses the NEW_CONNECTION_ID frame at the start
// of b, which begins with the frame type, and returns it with the number of
// bytes it takes (RFC 9000, Section 19.15). The connection ID and token are
// copied into the returned value. A truncated frame, a frame type other than
// 0x18, a connection ID length outside 1..20 and a Retire Prior To greater
// than the Sequence Number are FRAME_ENCODING_ERRORs.
func ParseNewConnectionIDFrame(b []byte) (NewConnectionIDFrame, int, error) {
	_, n, err := controlReadType(b, FrameTypeNewConnectionID, FrameTypeNewConnectionID)
	if err != nil {
		return NewConnectionIDFrame{}, 0, err
	}
	r := controlReader(b, n)
	seq := r.varint()
	retire := r.varint()
	cidLen := r.byte1()
	if !r.ok {
		return NewConnectionIDFrame{}, 0, encodingError(FrameTypeNewConnectionID, controlReasonTruncated)
	}
	// RFC 9000, Section 19.15: "Values less than 1 and greater than 20 are
	// invalid and MUST be treated as a connection error of type
	// FRAME_ENCODING_ERROR."
	if cidLen < 1 || cidLen > MaxConnectionIDLen {
		return NewConnectionIDFrame{}, 0, encodingError(FrameTypeNewConnectionID, "connection ID length not in 1..20")
	}
	cid := r.bytes(uint64(cidLen))
	token := r.bytes(StatelessResetTokenLen)
	if !r.ok {
		return NewConnectionIDFrame{}, 0, encodingError(FrameTypeNewConnectionID, controlReasonTruncated)
	}
	// RFC 9000, Section 19.15: "Receiving a value in the Retire Prior To
	// field that is greater than that in the Sequence Number field MUST be
	// treated as a connection error of type FRAME_ENCODING_ERROR."
	if retire > seq {
		return NewConnectionIDFrame{}, 0, encodingError(FrameTypeNewConnectionID, "retire prior to greater than sequence number")
	}
	f := NewConnectionIDFrame{
		SequenceNumber: seq,
		RetirePriorTo:  retire,
		ConnectionID:   NewConnectionID(cid),
	}
	copy(f.StatelessResetToken[:], token)
	return f, r.off, nil
}

// Append appends the encoding of the frame, type included, to b and returns
// the extended slice (RFC 9000, Section 19.15). It writes the fields as
// given, even an empty connection ID or a RetirePriorTo above
// SequenceNumber, which the peer rejects; it panics if a sequence number
// exceeds 2^62-1.
func (f NewConnectionIDFrame) Append(b []byte) []byte {
	b = append(b, byte(FrameTypeNewConnectionID))
	b = AppendVarint(b, f.SequenceNumber)
	b = AppendVarint(b, f.RetirePriorTo)
	b = appendConnectionIDWithLen(b, f.ConnectionID)
	return append(b, f.StatelessResetToken[:]...)
}

// EncodedLen returns the number of bytes Append writes (RFC 9000, Section 19.15).
func (f NewConnectionIDFrame) EncodedLen() int {
	return 1 + VarintLen(f.SequenceNumber) + VarintLen(f.RetirePriorTo) +
		1 + f.ConnectionID.Len() + StatelessResetTokenLen
}
