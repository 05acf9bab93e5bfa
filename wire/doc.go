// Package wire converts QUIC packet headers, frames and transport parameters
// between their wire encoding and Go values.
//
// The package holds no connection state and does no cryptography: header
// protection and packet protection belong to package handshake, which calls
// the parsers here before and after it removes protection.
//
// # Conventions
//
// Encoders append: b = AppendXxx(b, ...) returns the extended slice, and a
// matching length function (XxxLen or EncodedLen) tells a packer how many
// bytes the encoding takes before it writes anything.
//
// Parsers take the input starting at the first byte of the item and return
// the value, the number of bytes consumed and an error. Variable-size
// payloads (STREAM, CRYPTO and DATAGRAM data, tokens, reason phrases) are
// sub-slices of the input, not copies: they are valid only as long as the
// input buffer is.
//
// Parsing and appending a frame or header never allocates on the success
// path. Parsers never panic on any input; malformed input returns a
// *TransportError carrying the error code that RFC 9000 assigns to it
// (FRAME_ENCODING_ERROR, PROTOCOL_VIOLATION or TRANSPORT_PARAMETER_ERROR)
// and, for frames, the frame type.
//
// Encoders are given values that the caller built, so they panic on values
// that no encoding exists for (for example an integer at or above 2^62),
// which is a programming error rather than hostile input.
package wire
