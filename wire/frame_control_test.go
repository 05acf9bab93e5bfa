package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// Shared test helpers for the control frames (RESET_STREAM, RESET_STREAM_AT,
// STOP_SENDING, MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, DATA_BLOCKED,
// STREAM_DATA_BLOCKED, STREAMS_BLOCKED, NEW_CONNECTION_ID,
// RETIRE_CONNECTION_ID, PATH_CHALLENGE, PATH_RESPONSE, ACK_FREQUENCY), and
// their fuzz target.

// controlFrameValue is what the helpers need of a frame type.
type controlFrameValue interface {
	comparable
	Append(b []byte) []byte
	EncodedLen() int
}

// controlEdgeValues are the variable-length integer boundaries
// (RFC 9000, Section 16) that every integer field is tried with.
var controlEdgeValues = []uint64{0, 63, 64, 16383, 16384, 1<<30 - 1, 1 << 30, MaxVarint}

// controlHex decodes hexadecimal with optional spaces.
func controlHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// controlWantError checks that err is a *TransportError with the given code
// and frame type.
func controlWantError(t *testing.T, err error, code TransportErrorCode, ft FrameType, what string) {
	t.Helper()
	var te *TransportError
	if !errors.As(err, &te) {
		t.Errorf("%s: error %v is not a *TransportError", what, err)
		return
	}
	if te.Code != code || te.FrameType != ft {
		t.Errorf("%s: error %v has code %v, frame type %v; want %v, %v", what, err, te.Code, te.FrameType, code, ft)
	}
}

// controlCheckFrames checks, for each frame, that EncodedLen matches Append,
// that Append keeps what the buffer held, that parsing the encoding gives the
// frame back and consumes exactly the encoding even when more bytes follow,
// that every proper prefix of the encoding is a FRAME_ENCODING_ERROR, that a
// non-minimal frame type is a PROTOCOL_VIOLATION and that a different frame
// type is rejected.
func controlCheckFrames[F controlFrameValue](t *testing.T, parse func([]byte) (F, int, error), frames ...F) {
	t.Helper()
	var zero F
	for _, f := range frames {
		enc := f.Append(nil)
		if len(enc) != f.EncodedLen() {
			t.Errorf("%+v: EncodedLen() = %d, Append wrote %d bytes", f, f.EncodedLen(), len(enc))
		}
		got, n, err := parse(enc[:len(enc):len(enc)])
		if err != nil || n != len(enc) || got != f {
			t.Errorf("%+v: parse(%x) = %+v, %d, %v; want the frame, %d, nil", f, enc, got, n, err, len(enc))
		}

		prefix := []byte{0xde, 0xad}
		if b := f.Append(prefix); !bytes.Equal(b[:2], prefix) || !bytes.Equal(b[2:], enc) {
			t.Errorf("%+v: Append(%x) = %x; want %x%x", f, prefix, b, prefix, enc)
		}

		// A PING frame follows; it must not be consumed.
		next := append(append([]byte(nil), enc...), byte(FrameTypePing))
		if got, n, err := parse(next); err != nil || n != len(enc) || got != f {
			t.Errorf("%+v: parse(%x) = %+v, %d, %v; want the frame, %d, nil", f, next, got, n, err, len(enc))
		}

		// Every proper prefix is truncated. The three-index slice makes
		// any read past the end panic.
		v, typeLen := ParseVarint(enc)
		ft := FrameType(v)
		for i := 0; i < len(enc); i++ {
			got, n, err := parse(enc[:i:i])
			if err == nil || n != 0 || got != zero {
				t.Errorf("%+v: parse(%x) = %+v, %d, %v; want an error", f, enc[:i], got, n, err)
				continue
			}
			var te *TransportError
			switch {
			case i >= typeLen:
				controlWantError(t, err, FrameEncodingError, ft, "prefix "+hex.EncodeToString(enc[:i]))
			case !errors.As(err, &te) || te.Code != FrameEncodingError:
				// The type itself is cut short: only the code is fixed.
				t.Errorf("%+v: parse(%x) = %v; want a FRAME_ENCODING_ERROR", f, enc[:i], err)
			}
		}

		// RFC 9000, Section 12.4: "a frame type MUST use the shortest
		// possible encoding"; a longer one is a PROTOCOL_VIOLATION.
		long := AppendVarintWithLen(nil, v, 2*typeLen)
		long = append(long, enc[typeLen:]...)
		_, n, err = parse(long)
		if n != 0 {
			t.Errorf("%+v: parse(%x) consumed %d bytes", f, long, n)
		}
		controlWantError(t, err, ProtocolViolation, ft, "long type "+hex.EncodeToString(long))

		// Another frame type is rejected and named in the error.
		other := append([]byte{byte(FrameTypePing)}, enc[typeLen:]...)
		_, n, err = parse(other)
		if n != 0 {
			t.Errorf("%+v: parse(%x) consumed %d bytes", f, other, n)
		}
		controlWantError(t, err, FrameEncodingError, FrameTypePing, "type PING "+hex.EncodeToString(other))
	}
}

// controlCheckHex checks that f encodes to exactly the hexadecimal want
// (spaces ignored) and that want parses to f.
func controlCheckHex[F controlFrameValue](t *testing.T, parse func([]byte) (F, int, error), f F, want string) {
	t.Helper()
	wantB := controlHex(t, want)
	if got := f.Append(nil); !bytes.Equal(got, wantB) {
		t.Errorf("%+v: Append = %x; want %x", f, got, wantB)
	}
	if got, n, err := parse(wantB); err != nil || n != len(wantB) || got != f {
		t.Errorf("parse(%x) = %+v, %d, %v; want %+v, %d, nil", wantB, got, n, err, f, len(wantB))
	}
}

// controlCheckInvalid checks that parsing the hexadecimal in fails with the
// given code and frame type, consuming nothing.
func controlCheckInvalid[F controlFrameValue](t *testing.T, parse func([]byte) (F, int, error), in string, code TransportErrorCode, ft FrameType) {
	t.Helper()
	b := controlHex(t, in)
	got, n, err := parse(b)
	var zero F
	if err == nil || n != 0 || got != zero {
		t.Errorf("parse(%x) = %+v, %d, %v; want an error", b, got, n, err)
		return
	}
	controlWantError(t, err, code, ft, "parse("+hex.EncodeToString(b)+")")
}

// controlCheckAllocs checks that parsing and appending f allocate nothing.
func controlCheckAllocs[F controlFrameValue](t *testing.T, parse func([]byte) (F, int, error), f F) {
	t.Helper()
	enc := f.Append(nil)
	buf := make([]byte, 0, 64)
	var sink F
	allocs := testing.AllocsPerRun(100, func() {
		g, _, err := parse(enc)
		if err != nil {
			panic(err)
		}
		sink = g
		buf = f.Append(buf[:0])
	})
	if allocs != 0 {
		t.Errorf("%+v: %v allocations per parse and append; want 0", f, allocs)
	}
	if sink != f {
		t.Errorf("parse(%x) = %+v; want %+v", enc, sink, f)
	}
}

// controlFuzzRoundTrip parses b with parse. On error it checks that the
// error is a *TransportError of a code the parsers use; on success it checks
// that re-encoding the value gives an encoding that parses to the same value,
// is no longer than the input and, when as long, identical to it (it can be
// shorter only when the input used longer varints than needed).
func controlFuzzRoundTrip[F controlFrameValue](t *testing.T, parse func([]byte) (F, int, error), b []byte) {
	got, n, err := parse(b)
	if err != nil {
		var te *TransportError
		if !errors.As(err, &te) {
			t.Fatalf("parse(%x): error %v is not a *TransportError", b, err)
		}
		if te.Code != FrameEncodingError && te.Code != ProtocolViolation {
			t.Fatalf("parse(%x): unexpected code in %v", b, err)
		}
		if n != 0 {
			t.Fatalf("parse(%x) failed but consumed %d bytes", b, n)
		}
		return
	}
	if n <= 0 || n > len(b) {
		t.Fatalf("parse(%x) consumed %d bytes", b, n)
	}
	enc := got.Append(nil)
	if len(enc) != got.EncodedLen() {
		t.Fatalf("%+v: EncodedLen() = %d, Append wrote %d bytes", got, got.EncodedLen(), len(enc))
	}
	if len(enc) > n || len(enc) == n && !bytes.Equal(enc, b[:n]) {
		t.Fatalf("%+v: parsed from %x but encodes to %x", got, b[:n], enc)
	}
	again, n2, err := parse(enc)
	if err != nil || n2 != len(enc) || again != got {
		t.Fatalf("%+v: re-parse of %x = %+v, %d, %v", got, enc, again, n2, err)
	}
}

// controlFuzzReject checks that parse rejects b, whose frame type is not
// its own.
func controlFuzzReject[F controlFrameValue](t *testing.T, parse func([]byte) (F, int, error), b []byte) {
	if _, n, err := parse(b); err == nil || n != 0 {
		t.Fatalf("parse(%x) of another frame type = %d, %v; want an error", b, n, err)
	}
}

// controlFuzzSeeds returns valid encodings of every control frame, plus a few
// invalid ones, to seed FuzzParseControlFrames.
func controlFuzzSeeds() [][]byte {
	cid := NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	frames := []interface{ Append([]byte) []byte }{
		ResetStreamFrame{StreamID: 4, ErrorCode: 0x100, FinalSize: 1 << 20},
		ResetStreamAtFrame{StreamID: 8, ErrorCode: 1, FinalSize: 1000, ReliableSize: 500},
		StopSendingFrame{StreamID: 3, ErrorCode: 0x10c},
		MaxDataFrame{MaximumData: 1 << 24},
		MaxStreamDataFrame{StreamID: 0, MaximumStreamData: 65536},
		MaxStreamsFrame{Bidi: true, MaximumStreams: 100},
		MaxStreamsFrame{Bidi: false, MaximumStreams: MaxStreamCount},
		DataBlockedFrame{MaximumData: 16384},
		StreamDataBlockedFrame{StreamID: 7, MaximumStreamData: 64},
		StreamsBlockedFrame{Bidi: true, MaximumStreams: 0},
		StreamsBlockedFrame{Bidi: false, MaximumStreams: MaxStreamCount},
		NewConnectionIDFrame{SequenceNumber: 2, RetirePriorTo: 1, ConnectionID: cid, StatelessResetToken: StatelessResetToken{15: 0xff}},
		RetireConnectionIDFrame{SequenceNumber: 1},
		PathChallengeFrame{Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
		PathResponseFrame{Data: [8]byte{8, 7, 6, 5, 4, 3, 2, 1}},
		AckFrequencyFrame{SequenceNumber: 1, AckElicitingThreshold: 9, RequestedMaxAckDelay: 25000, ReorderingThreshold: 3},
	}
	var seeds [][]byte
	for _, f := range frames {
		seeds = append(seeds, f.Append(nil))
	}
	for _, s := range []string{
		"",
		"12c000000000000001",               // MAX_STREAMS above 2^60
		"1700000000000000",                 // STREAMS_BLOCKED truncated
		"18020315" + "00",                  // NEW_CONNECTION_ID, length 21
		"18010200" + "00",                  // NEW_CONNECTION_ID, Retire Prior To > Sequence Number
		"2404000102",                       // RESET_STREAM_AT, Reliable Size > Final Size
		"4004000000",                       // RESET_STREAM, type not minimally encoded
		"40af00008100000000",               // ACK_FREQUENCY, delay of 2^14 ms
		"1a01020304050607",                 // PATH_CHALLENGE truncated
		"1b0102030405060708090a",           // PATH_RESPONSE with trailing bytes
		"11ffffffffffffffff7fff",           // MAX_STREAM_DATA with 2^62-1
		"1005" + "01" + "1e" + "00" + "1c", // MAX_DATA then other frames
	} {
		b, err := hex.DecodeString(s)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// FuzzParseControlFrames reads the frame type at the start of the input and
// hands the input to the parser of that type, checking that whatever parses
// round-trips; inputs of other types must be rejected by every parser here.
func FuzzParseControlFrames(f *testing.F) {
	for _, s := range controlFuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, _ := ParseVarint(b)
		switch FrameType(v) {
		case FrameTypeResetStream:
			controlFuzzRoundTrip(t, ParseResetStreamFrame, b)
		case FrameTypeResetStreamAt:
			controlFuzzRoundTrip(t, ParseResetStreamAtFrame, b)
		case FrameTypeStopSending:
			controlFuzzRoundTrip(t, ParseStopSendingFrame, b)
		case FrameTypeMaxData:
			controlFuzzRoundTrip(t, ParseMaxDataFrame, b)
		case FrameTypeMaxStreamData:
			controlFuzzRoundTrip(t, ParseMaxStreamDataFrame, b)
		case FrameTypeMaxStreamsBidi, FrameTypeMaxStreamsUni:
			controlFuzzRoundTrip(t, ParseMaxStreamsFrame, b)
		case FrameTypeDataBlocked:
			controlFuzzRoundTrip(t, ParseDataBlockedFrame, b)
		case FrameTypeStreamDataBlocked:
			controlFuzzRoundTrip(t, ParseStreamDataBlockedFrame, b)
		case FrameTypeStreamsBlockedBidi, FrameTypeStreamsBlockedUni:
			controlFuzzRoundTrip(t, ParseStreamsBlockedFrame, b)
		case FrameTypeNewConnectionID:
			controlFuzzRoundTrip(t, ParseNewConnectionIDFrame, b)
		case FrameTypeRetireConnectionID:
			controlFuzzRoundTrip(t, ParseRetireConnectionIDFrame, b)
		case FrameTypePathChallenge:
			controlFuzzRoundTrip(t, ParsePathChallengeFrame, b)
		case FrameTypePathResponse:
			controlFuzzRoundTrip(t, ParsePathResponseFrame, b)
		case FrameTypeAckFrequency:
			controlFuzzRoundTrip(t, ParseAckFrequencyFrame, b)
		default:
			controlFuzzReject(t, ParseResetStreamFrame, b)
			controlFuzzReject(t, ParseResetStreamAtFrame, b)
			controlFuzzReject(t, ParseStopSendingFrame, b)
			controlFuzzReject(t, ParseMaxDataFrame, b)
			controlFuzzReject(t, ParseMaxStreamDataFrame, b)
			controlFuzzReject(t, ParseMaxStreamsFrame, b)
			controlFuzzReject(t, ParseDataBlockedFrame, b)
			controlFuzzReject(t, ParseStreamDataBlockedFrame, b)
			controlFuzzReject(t, ParseStreamsBlockedFrame, b)
			controlFuzzReject(t, ParseNewConnectionIDFrame, b)
			controlFuzzReject(t, ParseRetireConnectionIDFrame, b)
			controlFuzzReject(t, ParsePathChallengeFrame, b)
			controlFuzzReject(t, ParsePathResponseFrame, b)
			controlFuzzReject(t, ParseAckFrequencyFrame, b)
		}
	})
}
