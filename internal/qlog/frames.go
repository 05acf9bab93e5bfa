package qlog

import (
	"strconv"
	"time"

	"github.com/quicstack/quic/wire"
)

// A StreamSet notices streams that frames mention for the first time.
// Stream IDs of each type are used in order (RFC 9000, Section 2.1), so
// it keeps the next new ID of each of the four types.
type StreamSet struct {
	next [4]uint64       // by the two low bits of the ID: the next ID number not seen
	New  []wire.StreamID // IDs seen for the first time by the last AppendFrames
}

func (ss *StreamSet) see(id wire.StreamID) {
	t, n := uint64(id)&3, uint64(id)>>2
	if n >= ss.next[t] {
		ss.next[t] = n + 1
		ss.New = append(ss.New, id)
	}
}

// AppendFrames appends "frames":[...] with the frames of a decrypted
// payload, as QuicBaseFrames (draft-ietf-quic-qlog-quic-events,
// Section 8.13), using f as scratch. Consecutive PADDING bytes are one
// frame whose raw.payload_length is their count (Section 8.13.1). A
// payload that does not parse ends with an "unknown" frame. If ss is not
// nil, it records the streams mentioned for the first time.
func AppendFrames(b []byte, payload []byte, f *wire.Frame, ss *StreamSet) []byte {
	if ss != nil {
		ss.New = ss.New[:0]
	}
	b = Open(b, `"frames":`, true)
	for len(payload) > 0 {
		n, err := wire.ParseFrame(payload, f, 0)
		if err != nil {
			t, _, _ := wire.ParseFrameType(payload)
			b = append(b, `{"frame_type":"unknown",`...)
			b = Uint(b, `"frame_type_bytes":`, uint64(t))
			b = Close(b, false)
			break
		}
		b = appendFrame(b, f, n)
		if ss != nil {
			switch {
			case f.Type.IsStream():
				ss.see(f.Stream.StreamID)
			case f.Type == wire.FrameTypeResetStream:
				ss.see(f.ResetStream.StreamID)
			case f.Type == wire.FrameTypeStopSending:
				ss.see(f.StopSending.StreamID)
			case f.Type == wire.FrameTypeMaxStreamData:
				ss.see(f.MaxStreamData.StreamID)
			case f.Type == wire.FrameTypeStreamDataBlocked:
				ss.see(f.StreamDataBlocked.StreamID)
			}
		}
		payload = payload[n:]
	}
	return Close(b, true)
}

func appendFrame(b []byte, f *wire.Frame, n int) []byte {
	b = append(b, '{')
	t := f.Type
	switch {
	case t == wire.FrameTypePadding:
		b = Str(b, `"frame_type":`, "padding")
		b = Open(b, `"raw":`, false)
		b = Uint(b, `"length":`, uint64(n))
		b = Uint(b, `"payload_length":`, uint64(n))
		b = Close(b, false)
	case t == wire.FrameTypePing:
		b = Str(b, `"frame_type":`, "ping")
	case t == wire.FrameTypeAck || t == wire.FrameTypeAckECN:
		a := &f.Ack
		b = Str(b, `"frame_type":`, "ack")
		// The ACK Delay is in units of 2^ack_delay_exponent microseconds;
		// the exponent is the sender's transport parameter, which is
		// almost always the default of 3 (RFC 9000, Section 18.2).
		b = Ms(b, `"ack_delay":`, time.Duration(a.Delay<<3)*time.Microsecond)
		b = Open(b, `"acked_ranges":`, true)
		for _, r := range a.Ranges {
			b = append(b, '[')
			b = appendUint(b, uint64(r.Smallest))
			if r.Largest != r.Smallest {
				b = append(b, ',')
				b = appendUint(b, uint64(r.Largest))
			}
			b = append(b, ']', ',')
		}
		b = Close(b, true)
		if a.HasECN {
			b = Uint(b, `"ect0":`, a.ECN.ECT0)
			b = Uint(b, `"ect1":`, a.ECN.ECT1)
			b = Uint(b, `"ce":`, a.ECN.CE)
		}
	case t == wire.FrameTypeResetStream:
		r := &f.ResetStream
		b = Str(b, `"frame_type":`, "reset_stream")
		b = Uint(b, `"stream_id":`, uint64(r.StreamID))
		b = Str(b, `"error":`, "unknown")
		b = Uint(b, `"error_code":`, r.ErrorCode)
		b = Uint(b, `"final_size":`, r.FinalSize)
	case t == wire.FrameTypeResetStreamAt:
		r := &f.ResetStreamAt
		b = Str(b, `"frame_type":`, "reset_stream_at")
		b = Uint(b, `"stream_id":`, uint64(r.StreamID))
		b = Str(b, `"error":`, "unknown")
		b = Uint(b, `"error_code":`, r.ErrorCode)
		b = Uint(b, `"final_size":`, r.FinalSize)
		b = Uint(b, `"reliable_size":`, r.ReliableSize)
	case t == wire.FrameTypeStopSending:
		s := &f.StopSending
		b = Str(b, `"frame_type":`, "stop_sending")
		b = Uint(b, `"stream_id":`, uint64(s.StreamID))
		b = Str(b, `"error":`, "unknown")
		b = Uint(b, `"error_code":`, s.ErrorCode)
	case t == wire.FrameTypeCrypto:
		b = Str(b, `"frame_type":`, "crypto")
		b = Uint(b, `"offset":`, f.Crypto.Offset)
		b = appendRawLength(b, n, len(f.Crypto.Data))
	case t == wire.FrameTypeNewToken:
		b = Str(b, `"frame_type":`, "new_token")
		b = Open(b, `"token":`, false)
		b = Str(b, `"type":`, "resumption")
		b = Open(b, `"raw":`, false)
		b = Uint(b, `"length":`, uint64(len(f.NewToken.Token)))
		b = Close(b, false)
		b = Close(b, false)
	case t.IsStream():
		s := &f.Stream
		b = Str(b, `"frame_type":`, "stream")
		b = Uint(b, `"stream_id":`, uint64(s.StreamID))
		b = Uint(b, `"offset":`, s.Offset)
		if s.Fin {
			b = Bool(b, `"fin":`, true)
		}
		b = appendRawLength(b, n, len(s.Data))
	case t == wire.FrameTypeMaxData:
		b = Str(b, `"frame_type":`, "max_data")
		b = Uint(b, `"maximum":`, f.MaxData.MaximumData)
	case t == wire.FrameTypeMaxStreamData:
		b = Str(b, `"frame_type":`, "max_stream_data")
		b = Uint(b, `"stream_id":`, uint64(f.MaxStreamData.StreamID))
		b = Uint(b, `"maximum":`, f.MaxStreamData.MaximumStreamData)
	case t == wire.FrameTypeMaxStreamsBidi || t == wire.FrameTypeMaxStreamsUni:
		b = Str(b, `"frame_type":`, "max_streams")
		b = Str(b, `"stream_type":`, streamType(f.MaxStreams.Bidi))
		b = Uint(b, `"maximum":`, f.MaxStreams.MaximumStreams)
	case t == wire.FrameTypeDataBlocked:
		b = Str(b, `"frame_type":`, "data_blocked")
		b = Uint(b, `"limit":`, f.DataBlocked.MaximumData)
	case t == wire.FrameTypeStreamDataBlocked:
		b = Str(b, `"frame_type":`, "stream_data_blocked")
		b = Uint(b, `"stream_id":`, uint64(f.StreamDataBlocked.StreamID))
		b = Uint(b, `"limit":`, f.StreamDataBlocked.MaximumStreamData)
	case t == wire.FrameTypeStreamsBlockedBidi || t == wire.FrameTypeStreamsBlockedUni:
		b = Str(b, `"frame_type":`, "streams_blocked")
		b = Str(b, `"stream_type":`, streamType(f.StreamsBlocked.Bidi))
		b = Uint(b, `"limit":`, f.StreamsBlocked.MaximumStreams)
	case t == wire.FrameTypeNewConnectionID:
		c := &f.NewConnectionID
		b = Str(b, `"frame_type":`, "new_connection_id")
		b = Uint(b, `"sequence_number":`, c.SequenceNumber)
		b = Uint(b, `"retire_prior_to":`, c.RetirePriorTo)
		b = Uint(b, `"connection_id_length":`, uint64(c.ConnectionID.Len()))
		b = Hex(b, `"connection_id":`, c.ConnectionID.Bytes())
		b = Hex(b, `"stateless_reset_token":`, c.StatelessResetToken[:])
	case t == wire.FrameTypeRetireConnectionID:
		b = Str(b, `"frame_type":`, "retire_connection_id")
		b = Uint(b, `"sequence_number":`, f.RetireConnectionID.SequenceNumber)
	case t == wire.FrameTypePathChallenge:
		b = Str(b, `"frame_type":`, "path_challenge")
		b = Hex(b, `"data":`, f.PathChallenge.Data[:])
	case t == wire.FrameTypePathResponse:
		b = Str(b, `"frame_type":`, "path_response")
		b = Hex(b, `"data":`, f.PathResponse.Data[:])
	case t == wire.FrameTypeConnectionClose || t == wire.FrameTypeConnectionCloseApp:
		c := &f.ConnectionClose
		b = Str(b, `"frame_type":`, "connection_close")
		if c.IsApplication {
			b = Str(b, `"error_space":`, "application")
			b = Str(b, `"error":`, "unknown")
			b = Uint(b, `"error_code":`, c.ErrorCode)
		} else {
			b = Str(b, `"error_space":`, "transport")
			b = appendTransportError(b, `"error":`, c.ErrorCode)
			b = Uint(b, `"trigger_frame_type":`, uint64(c.FrameType))
		}
		b = Str(b, `"reason":`, string(c.Reason))
	case t == wire.FrameTypeHandshakeDone:
		b = Str(b, `"frame_type":`, "handshake_done")
	case t == wire.FrameTypeDatagram || t == wire.FrameTypeDatagramWithLength:
		b = Str(b, `"frame_type":`, "datagram")
		b = appendRawLength(b, n, len(f.Datagram.Data))
	default:
		// Extension frames without a qlog definition here (ACK_FREQUENCY,
		// IMMEDIATE_ACK).
		b = Str(b, `"frame_type":`, "unknown")
		b = Uint(b, `"frame_type_bytes":`, uint64(t))
		b = appendRawLength(b, n, 0)
	}
	return Close(b, false)
}

// appendRawLength appends "raw":{"length":n,"payload_length":p}.
func appendRawLength(b []byte, n, payload int) []byte {
	b = Open(b, `"raw":`, false)
	b = Uint(b, `"length":`, uint64(n))
	b = Uint(b, `"payload_length":`, uint64(payload))
	return Close(b, false)
}

func streamType(bidi bool) string {
	if bidi {
		return "bidirectional"
	}
	return "unidirectional"
}

// appendTransportError appends a transport error code as the qlog
// $TransportError or CryptoError name (Sections 8.13.24, 8.13.26), with
// error_code for unknown codes.
func appendTransportError(b []byte, key string, code uint64) []byte {
	c := wire.TransportErrorCode(code)
	if c.IsCryptoError() {
		b = append(b, key...)
		b = append(b, `"crypto_error_0x`...)
		b = strconv.AppendUint(b, code, 16)
		return append(b, '"', ',')
	}
	if name, ok := transportErrorNames[c]; ok {
		return Str(b, key, name)
	}
	b = Str(b, key, "unknown")
	return Uint(b, `"error_code":`, code)
}

var transportErrorNames = map[wire.TransportErrorCode]string{
	wire.NoError: "no_error", wire.InternalError: "internal_error", wire.ConnectionRefused: "connection_refused",
	wire.FlowControlError: "flow_control_error", wire.StreamLimitError: "stream_limit_error",
	wire.StreamStateError: "stream_state_error", wire.FinalSizeError: "final_size_error",
	wire.FrameEncodingError: "frame_encoding_error", wire.TransportParameterError: "transport_parameter_error",
	wire.ConnectionIDLimitError: "connection_id_limit_error", wire.ProtocolViolation: "protocol_violation",
	wire.InvalidToken: "invalid_token", wire.ApplicationError: "application_error",
	wire.CryptoBufferExceeded: "crypto_buffer_exceeded", wire.KeyUpdateError: "key_update_error",
	wire.AEADLimitReached: "aead_limit_reached", wire.NoViablePath: "no_viable_path",
}
