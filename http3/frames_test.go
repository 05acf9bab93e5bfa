package http3

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

func TestVarintRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 63, 64, 16383, 16384, 1<<30 - 1, 1 << 30, 1<<62 - 1} {
		b := appendVarint(nil, v)
		if len(b) != varintLen(v) {
			t.Fatalf("%d: len %d, want %d", v, len(b), varintLen(v))
		}
		got, n, err := parseVarint(b)
		if err != nil || n != len(b) || got != v {
			t.Fatalf("%d: got %d %d %v", v, got, n, err)
		}
		got, err = readVarint(bufio.NewReader(bytes.NewReader(b)))
		if err != nil || got != v {
			t.Fatalf("%d: readVarint %d %v", v, got, err)
		}
	}
}

func TestFrameRoundTrip(t *testing.T) {
	s := settings{QPACKMaxTableCapacity: 4096, MaxFieldSectionSize: 1 << 16, QPACKBlockedStreams: 10,
		EnableConnectProtocol: true, H3Datagram: true, Other: [][2]uint64{{0x21, 7}}}
	var b []byte
	b = appendSettingsFrame(b, s)
	b = appendHeadersFrame(b, []byte("abc"))
	b = appendIDFrame(b, frameGoaway, 8)
	b = appendIDFrame(b, frameMaxPushID, 300)
	b = appendIDFrame(b, frameCancelPush, 1)
	b = appendPushPromiseFrame(b, 5, []byte("xy"))
	b = appendFrameHeader(b, 0x21, 3) // reserved (GREASE) type 0x1f*1+0x21... skipped
	b = append(b, 1, 2, 3)
	b = appendDataFrameHeader(b, 2)
	b = append(b, 'h', 'i')

	var got []frame
	for rest := b; len(rest) > 0; {
		f, n, err := parseFrame(rest)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f)
		rest = rest[n:]
	}
	if len(got) != 8 {
		t.Fatalf("got %d frames", len(got))
	}
	if !reflect.DeepEqual(got[0].Set, s) {
		t.Errorf("settings %+v, want %+v", got[0].Set, s)
	}
	if string(got[1].Payload) != "abc" || got[2].ID != 8 || got[3].ID != 300 || got[4].ID != 1 ||
		got[5].ID != 5 || string(got[5].Payload) != "xy" || got[7].Type != frameData || got[7].Length != 2 {
		t.Errorf("frames %+v", got)
	}

	// readFrame skips the unknown frame and leaves DATA payload unread.
	br := bufio.NewReader(bytes.NewReader(b))
	var types []uint64
	for {
		f, err := readFrame(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, f.Type)
		if f.Type == frameData {
			io.CopyN(io.Discard, br, int64(f.Length))
		}
	}
	want := []uint64{frameSettings, frameHeaders, frameGoaway, frameMaxPushID, frameCancelPush, framePushPromise, frameData}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("types %v, want %v", types, want)
	}
}

func codeOf(err error) ErrCode {
	var he *Error
	if errors.As(err, &he) {
		return he.Code
	}
	return 0
}

func TestSettingsErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload []byte
		code    ErrCode
	}{
		{"duplicate", []byte{0x1, 0x10, 0x1, 0x10}, ErrCodeSettingsError},
		{"http2 enable push", []byte{0x2, 0x0}, ErrCodeSettingsError},
		{"http2 max concurrent", []byte{0x3, 0x1}, ErrCodeSettingsError},
		{"http2 window", []byte{0x4, 0x1}, ErrCodeSettingsError},
		{"http2 frame size", []byte{0x5, 0x1}, ErrCodeSettingsError},
		{"connect protocol 2", []byte{0x8, 0x2}, ErrCodeSettingsError},
		{"truncated", []byte{0x1}, ErrCodeFrameError},
		{"truncated varint", []byte{0x40}, ErrCodeFrameError},
	} {
		_, err := parseSettings(tc.payload)
		if codeOf(err) != tc.code {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.code)
		}
	}
	if _, err := parseSettings([]byte{0x6, 0x40, 0x64, 0x2a, 0x2a}); err != nil {
		t.Errorf("valid settings with unknown id: %v", err)
	}
}

func TestFrameErrors(t *testing.T) {
	// GOAWAY with trailing bytes.
	b := appendFrameHeader(nil, frameGoaway, 2)
	b = append(b, 0x4, 0x0)
	if _, _, err := parseFrame(b); codeOf(err) != ErrCodeFrameError {
		t.Errorf("GOAWAY with extra byte: %v", err)
	}
	// HTTP/2 frame types are H3_FRAME_UNEXPECTED.
	for _, typ := range []uint64{0x2, 0x6, 0x8, 0x9} {
		b := appendFrameHeader(nil, typ, 0)
		if _, err := readFrame(bufio.NewReader(bytes.NewReader(b))); codeOf(err) != ErrCodeFrameUnexpected {
			t.Errorf("type %#x: %v", typ, err)
		}
	}
	// Oversized SETTINGS.
	b = appendFrameHeader(nil, frameSettings, maxControlFramePayload+1)
	if _, err := readFrame(bufio.NewReader(bytes.NewReader(b))); codeOf(err) != ErrCodeExcessiveLoad {
		t.Errorf("oversized SETTINGS: %v", err)
	}
	// A stream ending inside a frame.
	b = appendFrameHeader(nil, frameHeaders, 10)
	if _, err := readFrame(bufio.NewReader(bytes.NewReader(b))); codeOf(err) != ErrCodeFrameError {
		t.Errorf("truncated frame: %v", err)
	}
}

// FuzzParseFrame checks that the frame parser never panics and that the
// frames it accepts re-encode to what it parsed.
func FuzzParseFrame(f *testing.F) {
	f.Add(appendSettingsFrame(nil, settings{QPACKMaxTableCapacity: 4096, QPACKBlockedStreams: 16}))
	f.Add(appendHeadersFrame(nil, []byte{0, 0, 0xd1, 0xd7}))
	f.Add(appendIDFrame(nil, frameGoaway, 4))
	f.Add(appendPushPromiseFrame(nil, 1, []byte{0, 0}))
	f.Add(append(appendDataFrameHeader(nil, 3), 'a', 'b', 'c'))
	f.Fuzz(func(t *testing.T, b []byte) {
		for rest := b; len(rest) > 0; {
			fr, n, err := parseFrame(rest)
			if err != nil {
				return
			}
			if n <= 0 || n > len(rest) {
				t.Fatalf("bad length %d of %d", n, len(rest))
			}
			var re []byte
			switch fr.Type {
			case frameSettings:
				re = appendSettingsFrame(nil, fr.Set)
				g, _, err := parseFrame(re)
				if err != nil || !reflect.DeepEqual(g.Set, fr.Set) {
					t.Fatalf("settings round trip: %+v vs %+v (%v)", g.Set, fr.Set, err)
				}
			case frameGoaway, frameMaxPushID, frameCancelPush:
				re = appendIDFrame(nil, fr.Type, fr.ID)
				if g, _, err := parseFrame(re); err != nil || g.ID != fr.ID {
					t.Fatalf("id round trip")
				}
			}
			// readFrame agrees with parseFrame.
			br := bufio.NewReader(bytes.NewReader(rest[:n]))
			if _, err := readFrame(br); err != nil && known(fr.Type) {
				t.Fatalf("readFrame failed where parseFrame succeeded: %v", err)
			}
			rest = rest[n:]
		}
	})
}
