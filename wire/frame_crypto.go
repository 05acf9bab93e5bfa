package wire

// CryptoFrame is a CRYPTO frame (type 0x06, RFC 9000, Section 19.6), which
// carries TLS handshake data at one encryption level. It always has a
// Length field.
type CryptoFrame struct {
	// Offset is the byte offset of Data in the encryption level's stream
	// of handshake data.
	Offset uint64
	// Data is the Crypto Data field. A parsed frame's Data is a sub-slice
	// of the parser's input, not a copy.
	Data []byte
}

// ParseCryptoFrame parses the CRYPTO frame at the start of b
// (RFC 9000, Section 19.6) and returns it and the number of bytes it takes.
// Data is a sub-slice of b. A truncated frame, a Length beyond the end of b,
// and an offset plus length above 2^62-1 are FRAME_ENCODING_ERROR.
func ParseCryptoFrame(b []byte) (CryptoFrame, int, error) {
	n, err := simpleExpectType(b, FrameTypeCrypto)
	if err != nil {
		return CryptoFrame{}, 0, err
	}
	r := newReader(b)
	r.off = n
	off := r.varint()
	data := r.bytes(r.varint())
	if !r.ok {
		return CryptoFrame{}, 0, encodingError(FrameTypeCrypto, "truncated CRYPTO frame")
	}
	// RFC 9000, Section 19.6: "The largest offset delivered on a stream --
	// the sum of the offset and data length -- cannot exceed 2^62-1.
	// Receipt of a frame that exceeds this limit MUST be treated as a
	// connection error of type FRAME_ENCODING_ERROR or
	// CRYPTO_BUFFER_EXCEEDED."
	if off+uint64(len(data)) > MaxVarint {
		return CryptoFrame{}, 0, encodingError(FrameTypeCrypto, "CRYPTO offset plus length exceeds 2^62-1")
	}
	return CryptoFrame{Offset: off, Data: data}, r.off, nil
}

// Append appends the CRYPTO frame (RFC 9000, Section 19.6). It panics if
// Offset is above 2^62-1.
func (f CryptoFrame) Append(b []byte) []byte {
	return append(f.AppendHeader(b, len(f.Data)), f.Data...)
}

// AppendHeader appends what Append writes before the Crypto Data field,
// for a frame whose n bytes of data the caller appends next (f.Data is
// ignored). It panics where Append does.
func (f CryptoFrame) AppendHeader(b []byte, n int) []byte {
	b = append(b, byte(FrameTypeCrypto))
	b = AppendVarint(b, f.Offset)
	return AppendVarint(b, uint64(n))
}

// HeaderLen returns the number of bytes Append writes before Data.
func (f CryptoFrame) HeaderLen() int {
	return 1 + VarintLen(f.Offset) + VarintLen(uint64(len(f.Data)))
}

// EncodedLen returns the number of bytes Append writes.
func (f CryptoFrame) EncodedLen() int { return f.HeaderLen() + len(f.Data) }

// MaxDataLen returns the largest data length n for which the frame, with
// its current Offset but n bytes of Data, encodes in at most room bytes,
// accounting for the Length field growing with n. The result is capped so
// that Offset + n does not exceed 2^62-1 (RFC 9000, Section 19.6). It
// returns 0 if not even the frame without data fits.
func (f CryptoFrame) MaxDataLen(room int) int {
	return streamCapDataLen(streamFitData(room-1-VarintLen(f.Offset), true), f.Offset)
}
