package wire

import "testing"

func TestPathChallengeFrame(t *testing.T) {
	controlCheckFrames(t, ParsePathChallengeFrame,
		PathChallengeFrame{},
		PathChallengeFrame{Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
		PathChallengeFrame{Data: [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	)
	controlCheckHex(t, ParsePathChallengeFrame,
		PathChallengeFrame{Data: [8]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04}},
		"1a deadbeef01020304")
	// A PATH_RESPONSE is not a PATH_CHALLENGE.
	controlCheckInvalid(t, ParsePathChallengeFrame, "1b 0102030405060708", FrameEncodingError, FrameTypePathResponse)
	controlCheckAllocs(t, ParsePathChallengeFrame, PathChallengeFrame{Data: [8]byte{9, 8, 7, 6, 5, 4, 3, 2}})
}

func TestPathResponseFrame(t *testing.T) {
	controlCheckFrames(t, ParsePathResponseFrame,
		PathResponseFrame{},
		PathResponseFrame{Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
		PathResponseFrame{Data: [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	)
	controlCheckHex(t, ParsePathResponseFrame,
		PathResponseFrame{Data: [8]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04}},
		"1b deadbeef01020304")
	// A PATH_CHALLENGE is not a PATH_RESPONSE.
	controlCheckInvalid(t, ParsePathResponseFrame, "1a 0102030405060708", FrameEncodingError, FrameTypePathChallenge)

	// RFC 9000, Section 19.17: "The recipient of this frame MUST generate
	// a PATH_RESPONSE frame (Section 19.18) containing the same Data value."
	ch, _, err := ParsePathChallengeFrame(controlHex(t, "1a 0011223344556677"))
	if err != nil {
		t.Fatal(err)
	}
	if got := (PathResponseFrame{Data: ch.Data}).Append(nil); string(got) != "\x1b\x00\x11\x22\x33\x44\x55\x66\x77" {
		t.Errorf("PATH_RESPONSE echoing the challenge = %x", got)
	}

	controlCheckAllocs(t, ParsePathResponseFrame, PathResponseFrame{Data: [8]byte{9, 8, 7, 6, 5, 4, 3, 2}})
}
