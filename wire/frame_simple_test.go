package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// Helpers shared by the tests of frame_simple.go, frame_ack.go,
// frame_stream.go, frame_crypto.go, frame_new_token.go, frame_datagram.go
// and frame_connection_close.go. The ft1 prefix keeps them apart from the
// helpers of other test files in the package.

// ft1Hex decodes hexadecimal with optional spaces.
func ft1Hex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// ft1WantCode fails unless err is a *TransportError with the given code.
func ft1WantCode(t testing.TB, err error, code TransportErrorCode, what string) {
	t.Helper()
	var te *TransportError
	if !errors.As(err, &te) {
		t.Errorf("%s: error %v is not a *TransportError", what, err)
		return
	}
	if te.Code != code {
		t.Errorf("%s: error code %v (%v); want %v", what, te.Code, err, code)
	}
}

// ft1CheckAllocs fails if f allocates.
func ft1CheckAllocs(t *testing.T, what string, f func()) {
	t.Helper()
	if n := testing.AllocsPerRun(100, f); n != 0 {
		t.Errorf("%s allocated %v times per run; want 0", what, n)
	}
}

// ft1CheckMaxDataLen checks n = MaxDataLen(room) of a frame whose
// encoded length with m bytes of data is enc(m), for m up to limit (the
// largest data length allowed by the offset).
func ft1CheckMaxDataLen(t *testing.T, what string, room, n int, limit uint64, enc func(m int) int) {
	t.Helper()
	switch {
	case n < 0:
		t.Errorf("%s: MaxDataLen(%d) = %d < 0", what, room, n)
	case uint64(n) > limit:
		t.Errorf("%s: MaxDataLen(%d) = %d beyond the offset limit %d", what, room, n, limit)
	case n > 0 && enc(n) > room:
		t.Errorf("%s: MaxDataLen(%d) = %d, but the frame takes %d bytes", what, room, n, enc(n))
	case enc(0) <= room && uint64(n) < limit && enc(n+1) <= room:
		t.Errorf("%s: MaxDataLen(%d) = %d, but %d bytes of data fit too", what, room, n, n+1)
	}
}

// ft1Rooms are the room sizes MaxDataLen is checked with: everything up to
// 100 and the neighbourhood of the varint boundaries 63/64 and 16383/16384
// for every header size.
func ft1Rooms() []int {
	var rooms []int
	for r := -1; r <= 100; r++ {
		rooms = append(rooms, r)
	}
	for r := 16370; r <= 16420; r++ {
		rooms = append(rooms, r)
	}
	return rooms
}

type ft1Simple struct {
	name    string
	typ     byte
	parse   func([]byte) (int, error)
	append  func([]byte) []byte
	encoded int
}

func ft1SimpleFrames() []ft1Simple {
	return []ft1Simple{
		{"PING", 0x01, func(b []byte) (int, error) { _, n, err := ParsePingFrame(b); return n, err },
			PingFrame{}.Append, PingFrame{}.EncodedLen()},
		{"HANDSHAKE_DONE", 0x1e, func(b []byte) (int, error) { _, n, err := ParseHandshakeDoneFrame(b); return n, err },
			HandshakeDoneFrame{}.Append, HandshakeDoneFrame{}.EncodedLen()},
		{"IMMEDIATE_ACK", 0x1f, func(b []byte) (int, error) { _, n, err := ParseImmediateAckFrame(b); return n, err },
			ImmediateAckFrame{}.Append, ImmediateAckFrame{}.EncodedLen()},
	}
}

func TestSimpleFrames(t *testing.T) {
	for _, f := range ft1SimpleFrames() {
		enc := f.append([]byte{0xaa})
		if !bytes.Equal(enc, []byte{0xaa, f.typ}) || f.encoded != 1 {
			t.Errorf("%s: Append = %x, EncodedLen = %d; want aa%02x, 1", f.name, enc, f.encoded, f.typ)
		}
		// Parsing reads only the type byte, whatever follows.
		if n, err := f.parse([]byte{f.typ, 0x01, 0x02}); n != 1 || err != nil {
			t.Errorf("%s: parse = %d, %v", f.name, n, err)
		}
		// The only proper prefix, the empty input, fails.
		if n, err := f.parse(nil); err == nil || n != 0 {
			t.Errorf("%s: parse(empty) = %d, %v", f.name, n, err)
		} else {
			ft1WantCode(t, err, FrameEncodingError, f.name+" empty")
		}
		// Another frame type is an error.
		if _, err := f.parse([]byte{0x07}); err == nil {
			t.Errorf("%s: parse of another type succeeded", f.name)
		} else {
			ft1WantCode(t, err, FrameEncodingError, f.name+" wrong type")
		}
		// RFC 9000, Section 12.4: "a frame type MUST use the shortest
		// possible encoding"; ParseFrameType makes that a PROTOCOL_VIOLATION.
		_, err := f.parse([]byte{0x40, f.typ})
		ft1WantCode(t, err, ProtocolViolation, f.name+" two-byte type")
		// An unknown type is a FRAME_ENCODING_ERROR.
		_, err = f.parse([]byte{0x21})
		ft1WantCode(t, err, FrameEncodingError, f.name+" unknown type")

		buf := make([]byte, 0, 16)
		in := []byte{f.typ}
		ft1CheckAllocs(t, f.name, func() {
			if n, err := f.parse(in); n != 1 || err != nil {
				t.Fatal("parse failed")
			}
			_ = f.append(buf[:0])
		})
	}
}

func TestPaddingFrame(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"00", 1},
		{"000000", 3},
		{"00000001", 3},
		{"0000 0801", 2},
	} {
		in := ft1Hex(t, tc.in)
		f, n, err := ParsePaddingFrame(in)
		if err != nil || f.Len != tc.want || n != tc.want {
			t.Errorf("ParsePaddingFrame(%s) = %+v, %d, %v; want Len %d", tc.in, f, n, err, tc.want)
		}
	}
	// A long run, as in a padded Initial packet, is consumed whole.
	in := make([]byte, 1200)
	if f, n, err := ParsePaddingFrame(in); err != nil || f.Len != 1200 || n != 1200 {
		t.Errorf("1200 bytes of padding: %+v, %d, %v", f, n, err)
	}
	// Every non-empty prefix of a run is itself a (shorter) run of padding;
	// only the empty prefix fails.
	for i := 0; i < 10; i++ {
		f, n, err := ParsePaddingFrame(in[:i])
		if i == 0 {
			if err == nil {
				t.Error("empty input parsed as PADDING")
			}
			ft1WantCode(t, err, FrameEncodingError, "empty padding")
			continue
		}
		if err != nil || f.Len != i || n != i {
			t.Errorf("padding prefix %d: %+v, %d, %v", i, f, n, err)
		}
	}
	_, _, err := ParsePaddingFrame([]byte{0x01})
	ft1WantCode(t, err, FrameEncodingError, "PING as padding")
	_, _, err = ParsePaddingFrame([]byte{0x40, 0x00})
	ft1WantCode(t, err, ProtocolViolation, "two-byte PADDING type")

	for _, l := range []int{1, 2, 7, 1500} {
		f := PaddingFrame{Len: l}
		enc := f.Append([]byte{0xff})
		if len(enc) != l+1 || f.EncodedLen() != l || enc[0] != 0xff {
			t.Fatalf("PaddingFrame{%d}: Append len %d, EncodedLen %d", l, len(enc), f.EncodedLen())
		}
		for _, c := range enc[1:] {
			if c != 0 {
				t.Fatalf("PaddingFrame{%d}: non-zero byte in %x", l, enc)
			}
		}
		if g, n, err := ParsePaddingFrame(enc[1:]); err != nil || g != f || n != l {
			t.Errorf("round trip of %+v: %+v, %d, %v", f, g, n, err)
		}
	}
	if enc := (PaddingFrame{}).Append(nil); len(enc) != 0 || (PaddingFrame{Len: -1}).EncodedLen() != 0 {
		t.Errorf("PaddingFrame{0} appended %x", enc)
	}

	buf := make([]byte, 0, 1500)
	pad := make([]byte, 1000)
	ft1CheckAllocs(t, "PADDING", func() {
		f, _, err := ParsePaddingFrame(pad)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Append(buf[:0])
	})
}
