package qpack

import (
	"errors"
	"strconv"
)

// ErrorCode is an HTTP/3 error code defined by QPACK (RFC 9204, Section 6).
// An HTTP/3 layer closes the connection with it (RFC 9114, Section 8.1).
//
// ErrorCode implements error so that errors.Is(err, ErrDecompressionFailed)
// tells which code a returned *Error carries.
type ErrorCode uint64

// QPACK error codes (RFC 9204, Section 6 and Section 8.3).
const (
	// ErrDecompressionFailed is QPACK_DECOMPRESSION_FAILED (0x0200): "The
	// decoder failed to interpret an encoded field section and is not able
	// to continue decoding that field section."
	ErrDecompressionFailed ErrorCode = 0x0200
	// ErrEncoderStream is QPACK_ENCODER_STREAM_ERROR (0x0201): "The decoder
	// failed to interpret an encoder instruction received on the encoder
	// stream."
	ErrEncoderStream ErrorCode = 0x0201
	// ErrDecoderStream is QPACK_DECODER_STREAM_ERROR (0x0202): "The encoder
	// failed to interpret a decoder instruction received on the decoder
	// stream."
	ErrDecoderStream ErrorCode = 0x0202
)

// String returns the RFC 9204, Section 6 name of the code, or its
// hexadecimal value if it is not a QPACK code.
func (c ErrorCode) String() string {
	switch c {
	case ErrDecompressionFailed:
		return "QPACK_DECOMPRESSION_FAILED"
	case ErrEncoderStream:
		return "QPACK_ENCODER_STREAM_ERROR"
	case ErrDecoderStream:
		return "QPACK_DECODER_STREAM_ERROR"
	}
	return "0x" + strconv.FormatUint(uint64(c), 16)
}

// Error implements error; it returns the same text as String, the name of
// RFC 9204, Section 6.
func (c ErrorCode) Error() string { return c.String() }

// Error is a QPACK failure that the HTTP/3 layer must turn into a connection
// error carrying Code (RFC 9204, Section 6: "the decoder MUST treat this as a
// connection error of type ..."). Reason is a human-readable detail, suitable
// for the reason phrase of a CONNECTION_CLOSE frame.
//
// errors.Is(err, code) reports whether err is an *Error with that Code.
type Error struct {
	Code   ErrorCode
	Reason string
}

// Error implements error: the code's RFC 9204, Section 6 name and the
// reason.
func (e *Error) Error() string {
	if e.Reason == "" {
		return "qpack: " + e.Code.String()
	}
	return "qpack: " + e.Code.String() + ": " + e.Reason
}

// Is reports whether target is the ErrorCode e carries (RFC 9204, Section
// 6), so that errors.Is(err, ErrEncoderStream) works.
func (e *Error) Is(target error) bool {
	c, ok := target.(ErrorCode)
	return ok && c == e.Code
}

// ErrBlocked is returned by Decoder.DecodeFieldSection when the field
// section's Required Insert Count exceeds the decoder's Insert Count: the
// stream is blocked (RFC 9204, Section 2.2.1). It is not a failure. The
// caller keeps the encoded field section (it "SHOULD remain in the blocked
// stream's flow-control window") and decodes it again once
// Decoder.AppendUnblocked reports the stream.
var ErrBlocked = errors.New("qpack: stream blocked on dynamic table updates")

// ErrFieldSectionTooLarge is returned by Decoder.DecodeFieldSection when the
// decoded field section is larger than DecoderConfig.MaxFieldSectionSize
// (sizes are counted as in RFC 9114, Section 4.2.2: name and value lengths
// plus 32 for each field line). It is a stream-level condition, not a QPACK
// connection error: the section has been fully processed and acknowledged,
// so the dynamic table state stays in step, and the HTTP/3 layer may answer
// with status 431 or reset the stream.
var ErrFieldSectionTooLarge = errors.New("qpack: field section exceeds the maximum size")

func decompressionFailed(reason string) error {
	return &Error{Code: ErrDecompressionFailed, Reason: reason}
}

func encoderStreamError(reason string) error {
	return &Error{Code: ErrEncoderStream, Reason: reason}
}

func decoderStreamError(reason string) error {
	return &Error{Code: ErrDecoderStream, Reason: reason}
}
