package wire

import "testing"

func TestResetStreamFrame(t *testing.T) {
	var frames []ResetStreamFrame
	for _, v := range controlEdgeValues {
		frames = append(frames,
			ResetStreamFrame{StreamID: StreamID(v), ErrorCode: v, FinalSize: v},
			ResetStreamFrame{StreamID: StreamID(v), ErrorCode: MaxVarint - v, FinalSize: 0},
			ResetStreamFrame{StreamID: 0, ErrorCode: 0, FinalSize: v},
		)
	}
	controlCheckFrames(t, ParseResetStreamFrame, frames...)

	// Type 0x04, Stream ID 1 (1 byte), error code 0x100 (2 bytes),
	// final size 16384 (4 bytes).
	controlCheckHex(t, ParseResetStreamFrame,
		ResetStreamFrame{StreamID: 1, ErrorCode: 0x100, FinalSize: 16384},
		"04 01 4100 80004000")
	// Field values need not be minimally encoded (RFC 9000, Section 16).
	if f, n, err := ParseResetStreamFrame(controlHex(t, "04 4001 00 c000000000000005")); err != nil || n != 12 ||
		f != (ResetStreamFrame{StreamID: 1, FinalSize: 5}) {
		t.Errorf("non-minimal fields: %+v, %d, %v", f, n, err)
	}

	controlCheckAllocs(t, ParseResetStreamFrame, ResetStreamFrame{StreamID: 1 << 30, ErrorCode: 3, FinalSize: MaxVarint})
}
