package wire

import (
	"strconv"
)

// TransportErrorCode is a QUIC transport error code, carried in a
// CONNECTION_CLOSE frame of type 0x1c (RFC 9000, Section 20.1).
type TransportErrorCode uint64

// Transport error codes (RFC 9000, Section 20.1, and the extensions named).
const (
	NoError                 TransportErrorCode = 0x00
	InternalError           TransportErrorCode = 0x01
	ConnectionRefused       TransportErrorCode = 0x02
	FlowControlError        TransportErrorCode = 0x03
	StreamLimitError        TransportErrorCode = 0x04
	StreamStateError        TransportErrorCode = 0x05
	FinalSizeError          TransportErrorCode = 0x06
	FrameEncodingError      TransportErrorCode = 0x07
	TransportParameterError TransportErrorCode = 0x08
	ConnectionIDLimitError  TransportErrorCode = 0x09
	ProtocolViolation       TransportErrorCode = 0x0a
	InvalidToken            TransportErrorCode = 0x0b
	ApplicationError        TransportErrorCode = 0x0c
	CryptoBufferExceeded    TransportErrorCode = 0x0d
	KeyUpdateError          TransportErrorCode = 0x0e
	AEADLimitReached        TransportErrorCode = 0x0f
	NoViablePath            TransportErrorCode = 0x10
	// VersionNegotiationError is defined by RFC 9368, Section 10.2.
	VersionNegotiationError TransportErrorCode = 0x11

	// CryptoErrorBase is the first of the CRYPTO_ERROR codes 0x0100-0x01ff;
	// the low byte carries a TLS alert (RFC 9001, Section 4.8).
	CryptoErrorBase TransportErrorCode = 0x0100
)

var transportErrorNames = [...]string{
	NoError:                 "NO_ERROR",
	InternalError:           "INTERNAL_ERROR",
	ConnectionRefused:       "CONNECTION_REFUSED",
	FlowControlError:        "FLOW_CONTROL_ERROR",
	StreamLimitError:        "STREAM_LIMIT_ERROR",
	StreamStateError:        "STREAM_STATE_ERROR",
	FinalSizeError:          "FINAL_SIZE_ERROR",
	FrameEncodingError:      "FRAME_ENCODING_ERROR",
	TransportParameterError: "TRANSPORT_PARAMETER_ERROR",
	ConnectionIDLimitError:  "CONNECTION_ID_LIMIT_ERROR",
	ProtocolViolation:       "PROTOCOL_VIOLATION",
	InvalidToken:            "INVALID_TOKEN",
	ApplicationError:        "APPLICATION_ERROR",
	CryptoBufferExceeded:    "CRYPTO_BUFFER_EXCEEDED",
	KeyUpdateError:          "KEY_UPDATE_ERROR",
	AEADLimitReached:        "AEAD_LIMIT_REACHED",
	NoViablePath:            "NO_VIABLE_PATH",
	VersionNegotiationError: "VERSION_NEGOTIATION_ERROR",
}

// CryptoError returns the CRYPTO_ERROR code that carries the given TLS alert
// (RFC 9001, Section 4.8).
func CryptoError(alert uint8) TransportErrorCode {
	return CryptoErrorBase + TransportErrorCode(alert)
}

// IsCryptoError reports whether c is in the CRYPTO_ERROR range 0x0100-0x01ff.
func (c TransportErrorCode) IsCryptoError() bool {
	return c >= CryptoErrorBase && c <= CryptoErrorBase+0xff
}

// TLSAlert returns the TLS alert carried by a CRYPTO_ERROR code and whether
// c is one.
func (c TransportErrorCode) TLSAlert() (uint8, bool) {
	if !c.IsCryptoError() {
		return 0, false
	}
	return uint8(c - CryptoErrorBase), true
}

// String returns the RFC name of the code, such as "FRAME_ENCODING_ERROR",
// "CRYPTO_ERROR(0x12a)" for the CRYPTO_ERROR range, or the hexadecimal value
// for unknown codes.
func (c TransportErrorCode) String() string {
	if c < TransportErrorCode(len(transportErrorNames)) {
		return transportErrorNames[c]
	}
	if c.IsCryptoError() {
		return "CRYPTO_ERROR(0x" + strconv.FormatUint(uint64(c), 16) + ")"
	}
	return "0x" + strconv.FormatUint(uint64(c), 16)
}

// TransportError is a transport-level error: malformed input found by a
// parser in this package, or a connection error to be sent to the peer in a
// CONNECTION_CLOSE frame. Use errors.As to inspect the code.
type TransportError struct {
	// Code is the transport error code.
	Code TransportErrorCode
	// FrameType is the type of the frame that triggered the error, or 0
	// (PADDING) when no frame is involved, as in packet headers and
	// transport parameters (RFC 9000, Section 19.19).
	FrameType FrameType
	// Reason is a human-readable explanation, suitable for the reason
	// phrase of a CONNECTION_CLOSE frame.
	Reason string
}

// Error returns a description such as
// "FRAME_ENCODING_ERROR (frame STREAM): offset too large".
func (e *TransportError) Error() string {
	s := e.Code.String()
	if e.FrameType != 0 {
		s += " (frame " + e.FrameType.String() + ")"
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Is reports whether target is a *TransportError with the same code, so that
// errors.Is(err, &TransportError{Code: FrameEncodingError}) matches any
// FRAME_ENCODING_ERROR regardless of frame type and reason.
func (e *TransportError) Is(target error) bool {
	t, ok := target.(*TransportError)
	return ok && t.Code == e.Code && (t.FrameType == 0 || t.FrameType == e.FrameType) && t.Reason == ""
}

// frameError returns a *TransportError for a malformed frame of type t.
func frameError(code TransportErrorCode, t FrameType, reason string) error {
	return &TransportError{Code: code, FrameType: t, Reason: reason}
}

// encodingError returns a FRAME_ENCODING_ERROR for a frame of type t.
func encodingError(t FrameType, reason string) error {
	return frameError(FrameEncodingError, t, reason)
}
