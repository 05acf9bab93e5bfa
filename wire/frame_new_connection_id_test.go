package wire

import (
	"bytes"
	"testing"
)

func TestNewConnectionIDFrame(t *testing.T) {
	token := StatelessResetToken{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	long := bytes.Repeat([]byte{0xab}, MaxConnectionIDLen)
	var frames []NewConnectionIDFrame
	for _, v := range controlEdgeValues {
		frames = append(frames,
			NewConnectionIDFrame{SequenceNumber: v, RetirePriorTo: v, ConnectionID: NewConnectionID([]byte{1}), StatelessResetToken: token},
			NewConnectionIDFrame{SequenceNumber: MaxVarint, RetirePriorTo: v, ConnectionID: NewConnectionID(long)},
			NewConnectionIDFrame{SequenceNumber: v, RetirePriorTo: 0, ConnectionID: NewConnectionID(long[:8]), StatelessResetToken: token},
		)
	}
	controlCheckFrames(t, ParseNewConnectionIDFrame, frames...)

	// Type 0x18, sequence number 64 (2 bytes), Retire Prior To 1, length 4,
	// connection ID, stateless reset token.
	controlCheckHex(t, ParseNewConnectionIDFrame,
		NewConnectionIDFrame{SequenceNumber: 64, RetirePriorTo: 1, ConnectionID: NewConnectionID([]byte{0xde, 0xad, 0xbe, 0xef}), StatelessResetToken: token},
		"18 4040 01 04 deadbeef 000102030405060708090a0b0c0d0e0f")

	// RFC 9000, Section 19.15: "Values less than 1 and greater than 20 are
	// invalid and MUST be treated as a connection error of type
	// FRAME_ENCODING_ERROR."
	tok := "000102030405060708090a0b0c0d0e0f"
	controlCheckInvalid(t, ParseNewConnectionIDFrame, "18 01 00 00 "+tok, FrameEncodingError, FrameTypeNewConnectionID)
	controlCheckInvalid(t, ParseNewConnectionIDFrame, "18 01 00 15 "+"ab"+tok+tok, FrameEncodingError, FrameTypeNewConnectionID)
	controlCheckInvalid(t, ParseNewConnectionIDFrame, "18 01 00 ff "+tok, FrameEncodingError, FrameTypeNewConnectionID)
	// Length 20 is allowed.
	f20 := NewConnectionIDFrame{SequenceNumber: 1, ConnectionID: NewConnectionID(long), StatelessResetToken: token}
	controlCheckHex(t, ParseNewConnectionIDFrame, f20, "18 01 00 14 "+"abababababababababababababababababababab"+tok)
	// RFC 9000, Section 19.15: "Receiving a value in the Retire Prior To
	// field that is greater than that in the Sequence Number field MUST be
	// treated as a connection error of type FRAME_ENCODING_ERROR."
	controlCheckInvalid(t, ParseNewConnectionIDFrame, "18 01 02 01 aa "+tok, FrameEncodingError, FrameTypeNewConnectionID)
	controlCheckInvalid(t, ParseNewConnectionIDFrame, "18 00 ffffffffffffffff 01 aa "+tok, FrameEncodingError, FrameTypeNewConnectionID)

	// The parsed value copies the connection ID and token out of the input.
	in := controlHex(t, "18 4040 01 04 deadbeef "+tok)
	f, _, err := ParseNewConnectionIDFrame(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 0
	}
	if !f.ConnectionID.Equal([]byte{0xde, 0xad, 0xbe, 0xef}) || f.StatelessResetToken != token {
		t.Errorf("parsed frame changed with its input: %+v", f)
	}

	// The encoder writes what it is given, even an empty connection ID.
	if got, want := (NewConnectionIDFrame{SequenceNumber: 1, RetirePriorTo: 2}).Append(nil), controlHex(t, "18 01 02 00 00000000000000000000000000000000"); !bytes.Equal(got, want) {
		t.Errorf("Append with empty connection ID = %x; want %x", got, want)
	}

	controlCheckAllocs(t, ParseNewConnectionIDFrame, f20)
}

func BenchmarkAppendNewConnectionIDFrame(b *testing.B) {
	f := NewConnectionIDFrame{
		SequenceNumber:      1000,
		RetirePriorTo:       990,
		ConnectionID:        NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}),
		StatelessResetToken: StatelessResetToken{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	b.SetBytes(int64(f.EncodedLen()))
	for b.Loop() {
		buf = f.Append(buf[:0])
	}
}
