package wire

// StreamFrame is a STREAM frame (types 0x08-0x0f, RFC 9000, Section 19.8),
// which carries stream data.
//
// The three low bits of the type are derived from the fields: the OFF bit
// (0x04) is written if and only if Offset != 0, the LEN bit (0x02) iff
// HasLength and the FIN bit (0x01) iff Fin.
type StreamFrame struct {
	// StreamID is the Stream ID field (RFC 9000, Section 2.1).
	StreamID StreamID
	// Offset is the byte offset in the stream of the first byte of Data;
	// 0 when the frame has no Offset field.
	Offset uint64
	// Data is the Stream Data field. A parsed frame's Data is a sub-slice
	// of the parser's input, not a copy.
	Data []byte
	// Fin reports whether the frame marks the end of the stream: "The
	// final size of the stream is the sum of the offset and the length of
	// this frame."
	Fin bool
	// HasLength reports whether the frame has a Length field. Without one,
	// "the Stream Data field consumes all the remaining bytes in the
	// packet", so only the last frame of a packet may omit it.
	HasLength bool
}

// ParseStreamFrame parses the STREAM frame at the start of b
// (RFC 9000, Section 19.8) and returns it and the number of bytes it takes.
// All eight types 0x08-0x0f are accepted. A frame without a Length field
// takes the rest of b, which must therefore end where the packet payload
// ends. Data is a sub-slice of b.
//
// A truncated frame, a Length beyond the end of b, and an offset plus
// length above 2^62-1 are FRAME_ENCODING_ERROR.
func ParseStreamFrame(b []byte) (StreamFrame, int, error) {
	if len(b) == 0 || !FrameType(b[0]).IsStream() {
		return StreamFrame{}, 0, simpleTypeError(b, FrameTypeStream)
	}
	t := FrameType(b[0])
	r := newReader(b)
	r.off = 1
	id := r.varint()
	var off uint64
	if t&streamFlagOff != 0 {
		off = r.varint()
	}
	var data []byte
	if t&streamFlagLen != 0 {
		data = r.bytes(r.varint())
	} else {
		// "When the LEN bit is set to 0, the Stream Data field consumes
		// all the remaining bytes in the packet." (Section 19.8)
		data = r.rest()
	}
	if !r.ok {
		return StreamFrame{}, 0, encodingError(t, "truncated STREAM frame")
	}
	// RFC 9000, Section 19.8: "The largest offset delivered on a stream --
	// the sum of the offset and data length -- cannot exceed 2^62-1 ...
	// Receipt of a frame that exceeds this limit MUST be treated as a
	// connection error of type FRAME_ENCODING_ERROR or FLOW_CONTROL_ERROR."
	if off+uint64(len(data)) > MaxVarint {
		return StreamFrame{}, 0, encodingError(t, "STREAM offset plus length exceeds 2^62-1")
	}
	return StreamFrame{
		StreamID:  StreamID(id),
		Offset:    off,
		Data:      data,
		Fin:       t&streamFlagFin != 0,
		HasLength: t&streamFlagLen != 0,
	}, r.off, nil
}

// Append appends the STREAM frame (RFC 9000, Section 19.8). It panics if
// StreamID is negative or above 2^62-1 or Offset is above 2^62-1.
func (f StreamFrame) Append(b []byte) []byte {
	return append(f.AppendHeader(b, len(f.Data)), f.Data...)
}

// AppendHeader appends what Append writes before the Stream Data field,
// for a frame whose n bytes of data the caller appends next (f.Data is
// ignored): a sender can copy the data straight from its buffers into the
// packet. It panics where Append does.
func (f StreamFrame) AppendHeader(b []byte, n int) []byte {
	t := FrameTypeStream
	if f.Offset != 0 {
		t |= streamFlagOff
	}
	if f.HasLength {
		t |= streamFlagLen
	}
	if f.Fin {
		t |= streamFlagFin
	}
	b = append(b, byte(t))
	b = AppendVarint(b, uint64(f.StreamID))
	if f.Offset != 0 {
		b = AppendVarint(b, f.Offset)
	}
	if f.HasLength {
		b = AppendVarint(b, uint64(n))
	}
	return b
}

// HeaderLen returns the number of bytes Append writes before Data: the
// type, Stream ID, Offset (if not 0) and Length (if HasLength, sized for
// len(f.Data)) fields. See MaxDataLen to size Data for the room left in a
// packet.
func (f StreamFrame) HeaderLen() int {
	n := 1 + VarintLen(uint64(f.StreamID))
	if f.Offset != 0 {
		n += VarintLen(f.Offset)
	}
	if f.HasLength {
		n += VarintLen(uint64(len(f.Data)))
	}
	return n
}

// EncodedLen returns the number of bytes Append writes.
func (f StreamFrame) EncodedLen() int { return f.HeaderLen() + len(f.Data) }

// MaxDataLen returns the largest data length n for which the frame, with
// its current StreamID, Offset and HasLength but n bytes of Data, encodes
// in at most room bytes. When HasLength is set it accounts for the Length
// field growing with n (so a few bytes of room may stay unused at the
// varint size boundaries). The result is also capped so that Offset + n
// does not exceed 2^62-1 (RFC 9000, Section 19.8). It returns 0 if not even
// the frame without data fits; a packer then checks that HeaderLen of the
// empty frame fits before sending an empty frame (for example one carrying
// only FIN).
func (f StreamFrame) MaxDataLen(room int) int {
	fixed := 1 + VarintLen(uint64(f.StreamID))
	if f.Offset != 0 {
		fixed += VarintLen(f.Offset)
	}
	return streamCapDataLen(streamFitData(room-fixed, f.HasLength), f.Offset)
}

// streamFitData returns the largest n such that n bytes of data, preceded
// by a Length varint for n if withLen, take at most avail bytes, or -1 if
// not even zero bytes of data fit.
func streamFitData(avail int, withLen bool) int {
	switch {
	case !withLen:
		if avail < 0 {
			return -1
		}
		return avail
	case avail < 1:
		return -1
	case avail <= 1+63:
		return avail - 1
	case avail <= 2+16383:
		// At avail == 65 the answer is still 63 with a 1-byte length:
		// 64 needs a 2-byte length and would take 66 bytes.
		return max(avail-2, 63)
	case avail <= 4+1073741823:
		return max(avail-4, 16383)
	}
	return max(avail-8, 1073741823)
}

// streamCapDataLen clips a data length n from streamFitData to
// [0, 2^62-1-offset], so that offset+n stays within 2^62-1
// (RFC 9000, Sections 19.6 and 19.8).
func streamCapDataLen(n int, offset uint64) int {
	if n < 0 {
		return 0
	}
	limit := uint64(MaxVarint)
	if offset < limit {
		limit -= offset
	} else {
		limit = 0
	}
	if uint64(n) > limit {
		return int(limit)
	}
	return n
}
