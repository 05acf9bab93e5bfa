package wire

// A Frame holds one frame of any type, for code that handles frames
// generically: a connection's receive loop, qlog, tests. Type says which of
// the typed fields is meaningful; the others keep whatever they last held.
// A Frame is large (a few hundred bytes); reuse one rather than copying it,
// which also lets ParseFrame reuse Ack.Ranges's storage.
type Frame struct {
	Type FrameType

	Padding            PaddingFrame
	Ack                AckFrame
	ResetStream        ResetStreamFrame
	ResetStreamAt      ResetStreamAtFrame
	StopSending        StopSendingFrame
	Crypto             CryptoFrame
	NewToken           NewTokenFrame
	Stream             StreamFrame
	MaxData            MaxDataFrame
	MaxStreamData      MaxStreamDataFrame
	MaxStreams         MaxStreamsFrame
	DataBlocked        DataBlockedFrame
	StreamDataBlocked  StreamDataBlockedFrame
	StreamsBlocked     StreamsBlockedFrame
	NewConnectionID    NewConnectionIDFrame
	RetireConnectionID RetireConnectionIDFrame
	PathChallenge      PathChallengeFrame
	PathResponse       PathResponseFrame
	ConnectionClose    ConnectionCloseFrame
	Datagram           DatagramFrame
	AckFrequency       AckFrequencyFrame
}

// ParseFrame parses the frame at the start of b into f and returns the
// number of bytes it takes. Of an ACK frame with more than maxAckRanges
// ranges, the highest maxAckRanges are kept in f.Ack.Ranges and the others
// counted in f.Ack.IgnoredRanges (maxAckRanges <= 0 means
// DefaultMaxAckRanges; see ParseAckFrame). On error, the
// *TransportError says what the RFC requires the connection to close with
// (RFC 9000, Section 12.4): FRAME_ENCODING_ERROR for unknown or malformed
// frames, PROTOCOL_VIOLATION for a non-minimal frame type. Whether the frame
// may appear in the packet it came in is a separate check: see
// CheckFrameAllowed. ParseFrame does not allocate once f.Ack.Ranges has
// grown to the largest ACK seen.
func ParseFrame(b []byte, f *Frame, maxAckRanges int) (int, error) {
	t, _, err := ParseFrameType(b)
	if err != nil {
		return 0, err
	}
	f.Type = t
	var n int
	switch {
	case t == FrameTypePadding:
		f.Padding, n, err = ParsePaddingFrame(b)
	case t == FrameTypePing:
		_, n, err = ParsePingFrame(b)
	case t == FrameTypeAck || t == FrameTypeAckECN:
		n, err = ParseAckFrame(b, &f.Ack, maxAckRanges)
	case t == FrameTypeResetStream:
		f.ResetStream, n, err = ParseResetStreamFrame(b)
	case t == FrameTypeStopSending:
		f.StopSending, n, err = ParseStopSendingFrame(b)
	case t == FrameTypeCrypto:
		f.Crypto, n, err = ParseCryptoFrame(b)
	case t == FrameTypeNewToken:
		f.NewToken, n, err = ParseNewTokenFrame(b)
	case t.IsStream():
		f.Stream, n, err = ParseStreamFrame(b)
	case t == FrameTypeMaxData:
		f.MaxData, n, err = ParseMaxDataFrame(b)
	case t == FrameTypeMaxStreamData:
		f.MaxStreamData, n, err = ParseMaxStreamDataFrame(b)
	case t == FrameTypeMaxStreamsBidi || t == FrameTypeMaxStreamsUni:
		f.MaxStreams, n, err = ParseMaxStreamsFrame(b)
	case t == FrameTypeDataBlocked:
		f.DataBlocked, n, err = ParseDataBlockedFrame(b)
	case t == FrameTypeStreamDataBlocked:
		f.StreamDataBlocked, n, err = ParseStreamDataBlockedFrame(b)
	case t == FrameTypeStreamsBlockedBidi || t == FrameTypeStreamsBlockedUni:
		f.StreamsBlocked, n, err = ParseStreamsBlockedFrame(b)
	case t == FrameTypeNewConnectionID:
		f.NewConnectionID, n, err = ParseNewConnectionIDFrame(b)
	case t == FrameTypeRetireConnectionID:
		f.RetireConnectionID, n, err = ParseRetireConnectionIDFrame(b)
	case t == FrameTypePathChallenge:
		f.PathChallenge, n, err = ParsePathChallengeFrame(b)
	case t == FrameTypePathResponse:
		f.PathResponse, n, err = ParsePathResponseFrame(b)
	case t == FrameTypeConnectionClose || t == FrameTypeConnectionCloseApp:
		f.ConnectionClose, n, err = ParseConnectionCloseFrame(b)
	case t == FrameTypeHandshakeDone:
		_, n, err = ParseHandshakeDoneFrame(b)
	case t == FrameTypeImmediateAck:
		_, n, err = ParseImmediateAckFrame(b)
	case t == FrameTypeResetStreamAt:
		f.ResetStreamAt, n, err = ParseResetStreamAtFrame(b)
	case t == FrameTypeDatagram || t == FrameTypeDatagramWithLength:
		f.Datagram, n, err = ParseDatagramFrame(b)
	case t == FrameTypeAckFrequency:
		f.AckFrequency, n, err = ParseAckFrequencyFrame(b)
	default:
		// ParseFrameType accepts only known types; this is unreachable
		// unless the two lists disagree.
		return 0, encodingError(t, "unknown frame type")
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Append appends the frame f.Type selects.
func (f *Frame) Append(b []byte) []byte {
	t := f.Type
	switch {
	case t == FrameTypePadding:
		return f.Padding.Append(b)
	case t == FrameTypePing:
		return PingFrame{}.Append(b)
	case t == FrameTypeAck || t == FrameTypeAckECN:
		return f.Ack.Append(b)
	case t == FrameTypeResetStream:
		return f.ResetStream.Append(b)
	case t == FrameTypeStopSending:
		return f.StopSending.Append(b)
	case t == FrameTypeCrypto:
		return f.Crypto.Append(b)
	case t == FrameTypeNewToken:
		return f.NewToken.Append(b)
	case t.IsStream():
		return f.Stream.Append(b)
	case t == FrameTypeMaxData:
		return f.MaxData.Append(b)
	case t == FrameTypeMaxStreamData:
		return f.MaxStreamData.Append(b)
	case t == FrameTypeMaxStreamsBidi || t == FrameTypeMaxStreamsUni:
		return f.MaxStreams.Append(b)
	case t == FrameTypeDataBlocked:
		return f.DataBlocked.Append(b)
	case t == FrameTypeStreamDataBlocked:
		return f.StreamDataBlocked.Append(b)
	case t == FrameTypeStreamsBlockedBidi || t == FrameTypeStreamsBlockedUni:
		return f.StreamsBlocked.Append(b)
	case t == FrameTypeNewConnectionID:
		return f.NewConnectionID.Append(b)
	case t == FrameTypeRetireConnectionID:
		return f.RetireConnectionID.Append(b)
	case t == FrameTypePathChallenge:
		return f.PathChallenge.Append(b)
	case t == FrameTypePathResponse:
		return f.PathResponse.Append(b)
	case t == FrameTypeConnectionClose || t == FrameTypeConnectionCloseApp:
		return f.ConnectionClose.Append(b)
	case t == FrameTypeHandshakeDone:
		return HandshakeDoneFrame{}.Append(b)
	case t == FrameTypeImmediateAck:
		return ImmediateAckFrame{}.Append(b)
	case t == FrameTypeResetStreamAt:
		return f.ResetStreamAt.Append(b)
	case t == FrameTypeDatagram || t == FrameTypeDatagramWithLength:
		return f.Datagram.Append(b)
	case t == FrameTypeAckFrequency:
		return f.AckFrequency.Append(b)
	}
	panic("wire: Append of unknown frame type " + t.String())
}

// CheckFrameAllowed returns a PROTOCOL_VIOLATION *TransportError if a frame
// of type t may not appear in a packet of type pt: "An endpoint MUST treat
// receipt of a frame in a packet type that is not permitted as a connection
// error of type PROTOCOL_VIOLATION." (RFC 9000, Section 12.4). See
// FrameType.AllowedIn for the table.
func CheckFrameAllowed(t FrameType, pt PacketType) error {
	if t.AllowedIn(pt) {
		return nil
	}
	return frameError(ProtocolViolation, t, "frame not allowed in "+pt.String()+" packet")
}

// errEmptyPayload is returned for a packet without frames: "An endpoint MUST
// treat receipt of a packet containing no frames as a connection error of
// type PROTOCOL_VIOLATION." (RFC 9000, Section 12.4)
var errEmptyPayload = &TransportError{Code: ProtocolViolation, Reason: "packet contains no frames"}

// CheckPayloadNotEmpty returns a PROTOCOL_VIOLATION error if a decrypted
// packet payload holds no frames (RFC 9000, Section 12.4).
func CheckPayloadNotEmpty(payload []byte) error {
	if len(payload) == 0 {
		return errEmptyPayload
	}
	return nil
}
