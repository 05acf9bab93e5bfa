package wire

import "slices"

// This file holds the frames without a body: PADDING, PING, HANDSHAKE_DONE
// and IMMEDIATE_ACK, plus the frame type check shared by the parsers of
// frame_ack.go, frame_stream.go, frame_crypto.go, frame_new_token.go,
// frame_datagram.go and frame_connection_close.go.

// PaddingFrame is a run of consecutive PADDING frames (type 0x00,
// RFC 9000, Section 19.1). "A PADDING frame consists of the single byte that
// identifies the frame as a PADDING frame", so a run of padding is handled as
// one value that counts its bytes.
type PaddingFrame struct {
	// Len is the number of 0x00 bytes in the run; at least 1 in a parsed
	// frame.
	Len int
}

// ParsePaddingFrame reads the run of PADDING frames at the start of b
// (RFC 9000, Section 19.1). It consumes every consecutive 0x00 byte, so the
// returned Len and byte count are equal and at least 1. It returns an error
// if b is empty or does not start with a PADDING frame.
func ParsePaddingFrame(b []byte) (PaddingFrame, int, error) {
	n := 0
	for n < len(b) && b[n] == 0 {
		n++
	}
	if n == 0 {
		return PaddingFrame{}, 0, simpleTypeError(b, FrameTypePadding)
	}
	return PaddingFrame{Len: n}, n, nil
}

// Append appends f.Len zero bytes, that is f.Len PADDING frames
// (RFC 9000, Section 19.1). It appends nothing if f.Len <= 0.
func (f PaddingFrame) Append(b []byte) []byte {
	if f.Len <= 0 {
		return b
	}
	n := len(b)
	b = slices.Grow(b, f.Len)[:n+f.Len]
	clear(b[n:])
	return b
}

// EncodedLen returns the number of bytes Append writes: f.Len, or 0 if
// f.Len <= 0.
func (f PaddingFrame) EncodedLen() int { return max(f.Len, 0) }

// PingFrame is a PING frame (type 0x01, RFC 9000, Section 19.2). It has no
// content; "the receiver of a PING frame simply needs to acknowledge the
// packet containing this frame."
type PingFrame struct{}

// ParsePingFrame reads the PING frame at the start of b
// (RFC 9000, Section 19.2) and returns the number of bytes it takes (1).
func ParsePingFrame(b []byte) (PingFrame, int, error) {
	n, err := simpleExpectType(b, FrameTypePing)
	return PingFrame{}, n, err
}

// Append appends the PING frame, the single byte 0x01 (RFC 9000, Section 19.2).
func (PingFrame) Append(b []byte) []byte { return append(b, byte(FrameTypePing)) }

// EncodedLen returns 1, the size of a PING frame.
func (PingFrame) EncodedLen() int { return 1 }

// HandshakeDoneFrame is a HANDSHAKE_DONE frame (type 0x1e,
// RFC 9000, Section 19.20), which the server sends to confirm the
// handshake. It has no content. "A server MUST treat receipt of a
// HANDSHAKE_DONE frame as a connection error of type PROTOCOL_VIOLATION";
// that check needs the role and belongs to the connection, not to the parser.
type HandshakeDoneFrame struct{}

// ParseHandshakeDoneFrame reads the HANDSHAKE_DONE frame at the start of b
// (RFC 9000, Section 19.20) and returns the number of bytes it takes (1).
func ParseHandshakeDoneFrame(b []byte) (HandshakeDoneFrame, int, error) {
	n, err := simpleExpectType(b, FrameTypeHandshakeDone)
	return HandshakeDoneFrame{}, n, err
}

// Append appends the HANDSHAKE_DONE frame, the single byte 0x1e
// (RFC 9000, Section 19.20).
func (HandshakeDoneFrame) Append(b []byte) []byte {
	return append(b, byte(FrameTypeHandshakeDone))
}

// EncodedLen returns 1, the size of a HANDSHAKE_DONE frame.
func (HandshakeDoneFrame) EncodedLen() int { return 1 }

// ImmediateAckFrame is an IMMEDIATE_ACK frame (type 0x1f,
// draft-ietf-quic-ack-frequency, Section 5). It has no content; "an
// endpoint SHOULD send a packet containing an ACK frame immediately upon
// receiving an IMMEDIATE_ACK frame."
type ImmediateAckFrame struct{}

// ParseImmediateAckFrame reads the IMMEDIATE_ACK frame at the start of b
// (draft-ietf-quic-ack-frequency, Section 5) and returns the number of bytes
// it takes (1).
func ParseImmediateAckFrame(b []byte) (ImmediateAckFrame, int, error) {
	n, err := simpleExpectType(b, FrameTypeImmediateAck)
	return ImmediateAckFrame{}, n, err
}

// Append appends the IMMEDIATE_ACK frame, the single byte 0x1f
// (draft-ietf-quic-ack-frequency, Section 5).
func (ImmediateAckFrame) Append(b []byte) []byte {
	return append(b, byte(FrameTypeImmediateAck))
}

// EncodedLen returns 1, the size of an IMMEDIATE_ACK frame.
func (ImmediateAckFrame) EncodedLen() int { return 1 }

// simpleExpectType checks that b starts with the frame type want, which
// must be below 0x40 (a one-byte varint), and returns its length (1).
func simpleExpectType(b []byte, want FrameType) (int, error) {
	if len(b) > 0 && FrameType(b[0]) == want {
		return 1, nil
	}
	return 0, simpleTypeError(b, want)
}

// simpleTypeError returns the error for input b that does not start with a
// frame of type want (or of the family of want, such as the STREAM types):
// the error ParseFrameType gives for a truncated, non-minimally encoded
// (RFC 9000, Section 12.4: "a frame type MUST use the shortest possible
// encoding") or unknown type, else a FRAME_ENCODING_ERROR naming the type
// found. A frame dispatcher calls the right parser for the type it read, so
// the mismatch case only arises from a programming error.
func simpleTypeError(b []byte, want FrameType) error {
	t, _, err := ParseFrameType(b)
	if err != nil {
		return err
	}
	return encodingError(t, "frame type is not "+want.String())
}
