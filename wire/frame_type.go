package wire

import "strconv"

// A FrameType is the type of a QUIC frame (RFC 9000, Section 12.4).
type FrameType uint64

// Frame types of RFC 9000, Section 19, and of the extensions named.
const (
	FrameTypePadding            FrameType = 0x00
	FrameTypePing               FrameType = 0x01
	FrameTypeAck                FrameType = 0x02
	FrameTypeAckECN             FrameType = 0x03
	FrameTypeResetStream        FrameType = 0x04
	FrameTypeStopSending        FrameType = 0x05
	FrameTypeCrypto             FrameType = 0x06
	FrameTypeNewToken           FrameType = 0x07
	FrameTypeStream             FrameType = 0x08 // 0x08-0x0f: OFF=0x04, LEN=0x02, FIN=0x01
	FrameTypeMaxData            FrameType = 0x10
	FrameTypeMaxStreamData      FrameType = 0x11
	FrameTypeMaxStreamsBidi     FrameType = 0x12
	FrameTypeMaxStreamsUni      FrameType = 0x13
	FrameTypeDataBlocked        FrameType = 0x14
	FrameTypeStreamDataBlocked  FrameType = 0x15
	FrameTypeStreamsBlockedBidi FrameType = 0x16
	FrameTypeStreamsBlockedUni  FrameType = 0x17
	FrameTypeNewConnectionID    FrameType = 0x18
	FrameTypeRetireConnectionID FrameType = 0x19
	FrameTypePathChallenge      FrameType = 0x1a
	FrameTypePathResponse       FrameType = 0x1b
	FrameTypeConnectionClose    FrameType = 0x1c // transport error
	FrameTypeConnectionCloseApp FrameType = 0x1d // application error
	FrameTypeHandshakeDone      FrameType = 0x1e
	// FrameTypeImmediateAck is IMMEDIATE_ACK (draft-ietf-quic-ack-frequency, Section 5).
	FrameTypeImmediateAck FrameType = 0x1f
	// FrameTypeResetStreamAt is RESET_STREAM_AT
	// (draft-ietf-quic-reliable-stream-reset, Section 4).
	FrameTypeResetStreamAt FrameType = 0x24
	// FrameTypeDatagram is DATAGRAM without a Length field (RFC 9221, Section 4).
	FrameTypeDatagram FrameType = 0x30
	// FrameTypeDatagramWithLength is DATAGRAM with a Length field (RFC 9221, Section 4).
	FrameTypeDatagramWithLength FrameType = 0x31
	// FrameTypeAckFrequency is ACK_FREQUENCY (draft-ietf-quic-ack-frequency, Section 4).
	FrameTypeAckFrequency FrameType = 0xaf
)

// STREAM frame type flag bits (RFC 9000, Section 19.8).
const (
	streamFlagFin = 0x01
	streamFlagLen = 0x02
	streamFlagOff = 0x04
)

// IsStream reports whether t is one of the STREAM types 0x08-0x0f.
func (t FrameType) IsStream() bool { return t&^0x07 == FrameTypeStream }

// IsKnown reports whether this package can parse frames of type t.
func (t FrameType) IsKnown() bool {
	return t <= FrameTypeImmediateAck || t == FrameTypeResetStreamAt ||
		t == FrameTypeDatagram || t == FrameTypeDatagramWithLength || t == FrameTypeAckFrequency
}

// String returns the frame type's name as the RFC spells it, such as
// "STREAM" or "CONNECTION_CLOSE", or the type in hexadecimal if unknown.
func (t FrameType) String() string {
	if t.IsStream() {
		return "STREAM"
	}
	switch t {
	case FrameTypePadding:
		return "PADDING"
	case FrameTypePing:
		return "PING"
	case FrameTypeAck, FrameTypeAckECN:
		return "ACK"
	case FrameTypeResetStream:
		return "RESET_STREAM"
	case FrameTypeStopSending:
		return "STOP_SENDING"
	case FrameTypeCrypto:
		return "CRYPTO"
	case FrameTypeNewToken:
		return "NEW_TOKEN"
	case FrameTypeMaxData:
		return "MAX_DATA"
	case FrameTypeMaxStreamData:
		return "MAX_STREAM_DATA"
	case FrameTypeMaxStreamsBidi, FrameTypeMaxStreamsUni:
		return "MAX_STREAMS"
	case FrameTypeDataBlocked:
		return "DATA_BLOCKED"
	case FrameTypeStreamDataBlocked:
		return "STREAM_DATA_BLOCKED"
	case FrameTypeStreamsBlockedBidi, FrameTypeStreamsBlockedUni:
		return "STREAMS_BLOCKED"
	case FrameTypeNewConnectionID:
		return "NEW_CONNECTION_ID"
	case FrameTypeRetireConnectionID:
		return "RETIRE_CONNECTION_ID"
	case FrameTypePathChallenge:
		return "PATH_CHALLENGE"
	case FrameTypePathResponse:
		return "PATH_RESPONSE"
	case FrameTypeConnectionClose, FrameTypeConnectionCloseApp:
		return "CONNECTION_CLOSE"
	case FrameTypeHandshakeDone:
		return "HANDSHAKE_DONE"
	case FrameTypeImmediateAck:
		return "IMMEDIATE_ACK"
	case FrameTypeResetStreamAt:
		return "RESET_STREAM_AT"
	case FrameTypeDatagram, FrameTypeDatagramWithLength:
		return "DATAGRAM"
	case FrameTypeAckFrequency:
		return "ACK_FREQUENCY"
	}
	return "0x" + strconv.FormatUint(uint64(t), 16)
}

// AllowedIn reports whether a frame of type t may appear in a packet of type
// pt (RFC 9000, Section 12.4, Table 3; RFC 9221, Section 4;
// draft-ietf-quic-ack-frequency, Section 3; draft-ietf-quic-reliable-stream-reset,
// Section 4). "An endpoint MUST treat receipt of a frame in a packet type
// that is not permitted as a connection error of type PROTOCOL_VIOLATION."
// Unknown frame types are allowed nowhere.
func (t FrameType) AllowedIn(pt PacketType) bool {
	switch pt {
	case PacketTypeInitial, PacketTypeHandshake:
		// IH: PADDING, PING, ACK, CRYPTO, and only CONNECTION_CLOSE of type 0x1c.
		switch t {
		case FrameTypePadding, FrameTypePing, FrameTypeAck, FrameTypeAckECN,
			FrameTypeCrypto, FrameTypeConnectionClose:
			return true
		}
		return false
	case PacketType0RTT:
		// 0: everything but ACK, CRYPTO, NEW_TOKEN, PATH_RESPONSE and
		// HANDSHAKE_DONE. ACK_FREQUENCY and IMMEDIATE_ACK "cannot be sent in
		// 0-RTT packets" (draft-ietf-quic-ack-frequency, Section 3).
		switch t {
		case FrameTypeAck, FrameTypeAckECN, FrameTypeCrypto, FrameTypeNewToken,
			FrameTypePathResponse, FrameTypeHandshakeDone,
			FrameTypeAckFrequency, FrameTypeImmediateAck:
			return false
		}
		return t.IsKnown()
	case PacketType1RTT:
		// "Note that all frames can appear in 1-RTT packets."
		return t.IsKnown()
	}
	return false
}

// IsAckEliciting reports whether a frame of type t makes the packet that
// carries it ack-eliciting: every frame except ACK, PADDING and
// CONNECTION_CLOSE (RFC 9000, Section 13.2 and Table 3 "N").
func (t FrameType) IsAckEliciting() bool {
	switch t {
	case FrameTypeAck, FrameTypeAckECN, FrameTypePadding,
		FrameTypeConnectionClose, FrameTypeConnectionCloseApp:
		return false
	}
	return true
}

// IsProbing reports whether t is a probing frame: PATH_CHALLENGE,
// PATH_RESPONSE, NEW_CONNECTION_ID or PADDING. A packet holding only probing
// frames does not migrate the connection (RFC 9000, Section 9.1 and Table 3 "P").
func (t FrameType) IsProbing() bool {
	switch t {
	case FrameTypePathChallenge, FrameTypePathResponse, FrameTypeNewConnectionID, FrameTypePadding:
		return true
	}
	return false
}

// IsCongestionControlled reports whether a packet holding a frame of type t
// counts toward bytes in flight: every frame except ACK and PADDING
// (RFC 9000, Table 3 "C"; RFC 9002, Section 2).
func (t FrameType) IsCongestionControlled() bool {
	switch t {
	case FrameTypeAck, FrameTypeAckECN, FrameTypePadding:
		return false
	}
	return true
}

// ParseFrameType reads the frame type at the start of b. "The Frame Type
// field uses a variable-length integer encoding ... with one exception. To
// ensure simple and efficient implementations of frame parsing, a frame type
// MUST use the shortest possible encoding." (RFC 9000, Section 12.4); a
// longer encoding is a PROTOCOL_VIOLATION. An unknown type is a
// FRAME_ENCODING_ERROR ("An endpoint MUST treat the receipt of a frame of
// unknown type as a connection error of type FRAME_ENCODING_ERROR").
func ParseFrameType(b []byte) (FrameType, int, error) {
	v, n := ParseVarint(b)
	if n == 0 {
		return 0, 0, errTruncatedFrameType
	}
	t := FrameType(v)
	if n != VarintLen(v) {
		return t, 0, frameError(ProtocolViolation, t, "frame type not minimally encoded")
	}
	if !t.IsKnown() {
		return t, 0, encodingError(t, "unknown frame type")
	}
	return t, n, nil
}

var errTruncatedFrameType = &TransportError{Code: FrameEncodingError, Reason: "truncated frame type"}

// AppendFrameType appends the shortest encoding of t.
func AppendFrameType(b []byte, t FrameType) []byte { return AppendVarint(b, uint64(t)) }
