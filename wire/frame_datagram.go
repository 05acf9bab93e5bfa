package wire

// DatagramFrame is a DATAGRAM frame (types 0x30 and 0x31, RFC 9221,
// Section 4), which carries application data unreliably.
type DatagramFrame struct {
	// Data is the Datagram Data field; it may be empty. A parsed frame's
	// Data is a sub-slice of the parser's input, not a copy.
	Data []byte
	// HasLength reports whether the frame has a Length field (type 0x31).
	// Without one (type 0x30) "the Datagram Data field extends to the end
	// of the packet", so only the last frame of a packet may omit it.
	HasLength bool
}

// ParseDatagramFrame parses the DATAGRAM frame at the start of b
// (RFC 9221, Section 4) and returns it and the number of bytes it takes.
// A frame of type 0x30 takes the rest of b, which must therefore end where
// the packet payload ends. Data is a sub-slice of b. A truncated frame and
// a Length beyond the end of b are FRAME_ENCODING_ERROR.
func ParseDatagramFrame(b []byte) (DatagramFrame, int, error) {
	if len(b) == 0 || (b[0] != byte(FrameTypeDatagram) && b[0] != byte(FrameTypeDatagramWithLength)) {
		return DatagramFrame{}, 0, simpleTypeError(b, FrameTypeDatagram)
	}
	t := FrameType(b[0])
	r := newReader(b)
	r.off = 1
	var data []byte
	if t == FrameTypeDatagramWithLength {
		data = r.bytes(r.varint())
	} else {
		// RFC 9221, Section 4: "if this bit is set to 0, the Length field
		// is absent and the Datagram Data field extends to the end of the
		// packet".
		data = r.rest()
	}
	if !r.ok {
		return DatagramFrame{}, 0, encodingError(t, "truncated DATAGRAM frame")
	}
	return DatagramFrame{Data: data, HasLength: t == FrameTypeDatagramWithLength}, r.off, nil
}

// Append appends the DATAGRAM frame (RFC 9221, Section 4): type 0x31 with a
// Length field when HasLength, else type 0x30.
func (f DatagramFrame) Append(b []byte) []byte {
	if f.HasLength {
		b = append(b, byte(FrameTypeDatagramWithLength))
		b = AppendVarint(b, uint64(len(f.Data)))
	} else {
		b = append(b, byte(FrameTypeDatagram))
	}
	return append(b, f.Data...)
}

// HeaderLen returns the number of bytes Append writes before Data.
func (f DatagramFrame) HeaderLen() int {
	if f.HasLength {
		return 1 + VarintLen(uint64(len(f.Data)))
	}
	return 1
}

// EncodedLen returns the number of bytes Append writes.
func (f DatagramFrame) EncodedLen() int { return f.HeaderLen() + len(f.Data) }

// MaxDataLen returns the largest data length n for which the frame, with
// its current HasLength but n bytes of Data, encodes in at most room bytes,
// accounting for the Length field growing with n when HasLength. It returns
// 0 if not even the frame without data fits. A sender compares the result
// with the length of the datagram it holds: a DATAGRAM frame cannot be
// split (RFC 9221, Section 5).
func (f DatagramFrame) MaxDataLen(room int) int {
	return streamCapDataLen(streamFitData(room-1, f.HasLength), 0)
}
