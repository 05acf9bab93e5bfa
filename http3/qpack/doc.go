// Package qpack implements QPACK, the field compression format of HTTP/3
// (RFC 9204), with the Huffman code and integer and string primitives of
// HPACK (RFC 7541, Sections 5.1, 5.2 and Appendix B).
//
// An HTTP/3 connection owns one Encoder, which compresses the field sections
// it sends and writes the encoder stream, and one Decoder, which
// decompresses the field sections it receives, reads the peer's encoder
// stream and writes the decoder stream (RFC 9204, Section 4.2).
//
// # Byte-slice interface
//
// The package does no I/O. Stream data is handed over as byte slices in
// whatever chunks the transport delivers:
//
//   - Decoder.HandleEncoderStream and Encoder.HandleDecoderStream take
//     arbitrary chunks of the peer's unidirectional streams and keep an
//     incomplete trailing instruction until the rest arrives.
//   - Encoder.AppendEncoderStream and Decoder.AppendDecoderStream append the
//     instructions produced so far to a buffer for the caller to write to
//     the local encoder or decoder stream.
//   - Encoder.EncodeFieldSection appends an encoded field section (the
//     payload of a HEADERS frame) and Decoder.DecodeFieldSection decodes one
//     into a caller-provided []HeaderField.
//
// The stream types and the SETTINGS values (SETTINGS_QPACK_MAX_TABLE_CAPACITY
// 0x01 and SETTINGS_QPACK_BLOCKED_STREAMS 0x07, RFC 9204, Section 5) belong
// to the HTTP/3 layer, which passes the values in DecoderConfig and
// Encoder.SetPeerSettings.
//
// # Errors
//
// Every QPACK failure is an *Error whose Code is the HTTP/3 error code to
// close the connection with (RFC 9204, Section 6). ErrBlocked and
// ErrFieldSectionTooLarge are the two outcomes of DecodeFieldSection that
// concern only one stream.
//
// # Concurrency
//
// An Encoder or Decoder is not safe for concurrent use; the connection's
// goroutine owns both.
package qpack

// HeaderField is one field line of a header or trailer section (RFC 9204,
// Section 1.1). Names are used as given: HTTP/3 requires them in lowercase
// (RFC 9114, Section 4.2), which is for the HTTP/3 layer to enforce.
type HeaderField struct {
	Name  string
	Value string
	// NeverIndex marks a sensitive field line. The encoder sends it as a
	// literal with the 'N' bit set and never enters it in the dynamic table;
	// the decoder reports the 'N' bit here so that an intermediary can keep
	// it: "When the 'N' bit is set, the encoded field line MUST always be
	// encoded with a literal representation." (RFC 9204, Section 4.5.4)
	NeverIndex bool
}

// Size returns the size of the field line as counted against
// SETTINGS_MAX_FIELD_SECTION_SIZE (RFC 9114, Section 4.2.2): the length of
// the name and the value plus 32, the same as a dynamic table entry's size
// (RFC 9204, Section 3.2.1).
func (f HeaderField) Size() uint64 { return entrySize(f.Name, f.Value) }
