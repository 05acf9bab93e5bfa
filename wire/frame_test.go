package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// frameCase is one frame with its expected encoding, written out by hand
// from the frame layouts of RFC 9000, Section 19, RFC 9221, Section 4, and
// the ack-frequency and reliable-stream-reset drafts.
type frameCase struct {
	name string
	f    Frame
	hex  string
	// takesRest is set for frames that extend to the end of the packet
	// (STREAM and DATAGRAM without a Length field, runs of PADDING): a
	// prefix of them can be a valid, shorter frame.
	takesRest bool
}

func frameCases() []frameCase {
	token := StatelessResetToken{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	return []frameCase{
		{"PADDING", Frame{Type: FrameTypePadding, Padding: PaddingFrame{Len: 3}}, "000000", true},
		{"PING", Frame{Type: FrameTypePing}, "01", false},
		{"ACK", Frame{Type: FrameTypeAck, Ack: AckFrame{
			Ranges: []AckRange{{Smallest: 8, Largest: 10}, {Smallest: 2, Largest: 5}}, Delay: 5}},
			"02" + "0a" + "05" + "01" + "02" + "01" + "03", false},
		{"ACK_ECN", Frame{Type: FrameTypeAckECN, Ack: AckFrame{
			Ranges: []AckRange{{Smallest: 8, Largest: 10}, {Smallest: 2, Largest: 5}}, Delay: 5,
			HasECN: true, ECN: ECNCounts{ECT0: 1, ECT1: 2, CE: 3}}},
			"03" + "0a" + "05" + "01" + "02" + "01" + "03" + "010203", false},
		{"RESET_STREAM", Frame{Type: FrameTypeResetStream, ResetStream: ResetStreamFrame{
			StreamID: 4, ErrorCode: 0x10, FinalSize: 16384}}, "04" + "04" + "10" + "80004000", false},
		{"STOP_SENDING", Frame{Type: FrameTypeStopSending, StopSending: StopSendingFrame{
			StreamID: 1, ErrorCode: 2}}, "050102", false},
		{"CRYPTO", Frame{Type: FrameTypeCrypto, Crypto: CryptoFrame{Offset: 0, Data: []byte("abc")}},
			"06" + "00" + "03" + "616263", false},
		{"NEW_TOKEN", Frame{Type: FrameTypeNewToken, NewToken: NewTokenFrame{Token: []byte("tok")}},
			"07" + "03" + "746f6b", false},
		{"STREAM LEN FIN", Frame{Type: 0x0b, Stream: StreamFrame{
			StreamID: 4, Data: []byte("hi"), Fin: true, HasLength: true}}, "0b" + "04" + "02" + "6869", false},
		{"STREAM OFF", Frame{Type: 0x0c, Stream: StreamFrame{
			StreamID: 4, Offset: 64, Data: []byte("hi")}}, "0c" + "04" + "4040" + "6869", true},
		{"MAX_DATA", Frame{Type: FrameTypeMaxData, MaxData: MaxDataFrame{MaximumData: 16383}}, "10" + "7fff", false},
		{"MAX_STREAM_DATA", Frame{Type: FrameTypeMaxStreamData, MaxStreamData: MaxStreamDataFrame{
			StreamID: 8, MaximumStreamData: 100}}, "11" + "08" + "4064", false},
		{"MAX_STREAMS bidi", Frame{Type: FrameTypeMaxStreamsBidi, MaxStreams: MaxStreamsFrame{
			Bidi: true, MaximumStreams: 3}}, "12" + "03", false},
		{"MAX_STREAMS uni", Frame{Type: FrameTypeMaxStreamsUni, MaxStreams: MaxStreamsFrame{
			MaximumStreams: 1 << 60}}, "13" + "d000000000000000", false},
		{"DATA_BLOCKED", Frame{Type: FrameTypeDataBlocked, DataBlocked: DataBlockedFrame{MaximumData: 5}},
			"14" + "05", false},
		{"STREAM_DATA_BLOCKED", Frame{Type: FrameTypeStreamDataBlocked, StreamDataBlocked: StreamDataBlockedFrame{
			StreamID: 2, MaximumStreamData: 7}}, "15" + "02" + "07", false},
		{"STREAMS_BLOCKED bidi", Frame{Type: FrameTypeStreamsBlockedBidi, StreamsBlocked: StreamsBlockedFrame{
			Bidi: true, MaximumStreams: 1}}, "16" + "01", false},
		{"STREAMS_BLOCKED uni", Frame{Type: FrameTypeStreamsBlockedUni, StreamsBlocked: StreamsBlockedFrame{
			MaximumStreams: 9}}, "17" + "09", false},
		{"NEW_CONNECTION_ID", Frame{Type: FrameTypeNewConnectionID, NewConnectionID: NewConnectionIDFrame{
			SequenceNumber: 1, RetirePriorTo: 0, ConnectionID: NewConnectionID([]byte{1, 2, 3, 4}),
			StatelessResetToken: token}},
			"18" + "01" + "00" + "04" + "01020304" + "000102030405060708090a0b0c0d0e0f", false},
		{"RETIRE_CONNECTION_ID", Frame{Type: FrameTypeRetireConnectionID, RetireConnectionID: RetireConnectionIDFrame{
			SequenceNumber: 3}}, "19" + "03", false},
		{"PATH_CHALLENGE", Frame{Type: FrameTypePathChallenge, PathChallenge: PathChallengeFrame{
			Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}}, "1a" + "0102030405060708", false},
		{"PATH_RESPONSE", Frame{Type: FrameTypePathResponse, PathResponse: PathResponseFrame{
			Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}}, "1b" + "0102030405060708", false},
		{"CONNECTION_CLOSE transport", Frame{Type: FrameTypeConnectionClose, ConnectionClose: ConnectionCloseFrame{
			ErrorCode: uint64(ProtocolViolation), FrameType: 0x08, Reason: []byte("bad")}},
			"1c" + "0a" + "08" + "03" + "626164", false},
		{"CONNECTION_CLOSE application", Frame{Type: FrameTypeConnectionCloseApp, ConnectionClose: ConnectionCloseFrame{
			IsApplication: true, ErrorCode: 256}}, "1d" + "4100" + "00", false},
		{"HANDSHAKE_DONE", Frame{Type: FrameTypeHandshakeDone}, "1e", false},
		{"IMMEDIATE_ACK", Frame{Type: FrameTypeImmediateAck}, "1f", false},
		{"RESET_STREAM_AT", Frame{Type: FrameTypeResetStreamAt, ResetStreamAt: ResetStreamAtFrame{
			StreamID: 0, ErrorCode: 1, FinalSize: 10, ReliableSize: 5}}, "24" + "00" + "01" + "0a" + "05", false},
		{"DATAGRAM", Frame{Type: FrameTypeDatagram, Datagram: DatagramFrame{Data: []byte("hey")}},
			"30" + "686579", true},
		{"DATAGRAM with length", Frame{Type: FrameTypeDatagramWithLength, Datagram: DatagramFrame{
			Data: []byte("hey"), HasLength: true}}, "31" + "03" + "686579", false},
		{"ACK_FREQUENCY", Frame{Type: FrameTypeAckFrequency, AckFrequency: AckFrequencyFrame{
			SequenceNumber: 1, AckElicitingThreshold: 2, RequestedMaxAckDelay: 25000, ReorderingThreshold: 1}},
			"40af" + "01" + "02" + "800061a8" + "01", false},
	}
}

// normalizeFrame makes empty payload slices nil so that reflect.DeepEqual
// compares a parsed frame (whose empty payloads are empty sub-slices) with a
// literal one, gives STREAM frames the type their fields encode to (a
// peer may set the OFF bit with an offset of 0) and clears
// Ack.IgnoredRanges, which Append does not encode.
func normalizeFrame(f *Frame) {
	if f.Type.IsStream() {
		f.Type = FrameTypeStream
		if f.Stream.Offset != 0 {
			f.Type |= streamFlagOff
		}
		if f.Stream.HasLength {
			f.Type |= streamFlagLen
		}
		if f.Stream.Fin {
			f.Type |= streamFlagFin
		}
	}
	for _, p := range []*[]byte{&f.Crypto.Data, &f.NewToken.Token, &f.Stream.Data,
		&f.ConnectionClose.Reason, &f.Datagram.Data} {
		if len(*p) == 0 {
			*p = nil
		}
	}
	f.Ack.IgnoredRanges = 0
}

// TestFrameTable checks, for every frame type, that appending gives the
// hand-written encoding, that parsing it gives the value back and consumes
// every byte, and that the frame is allowed exactly where Table 3 says.
func TestFrameTable(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range frameCases() {
		t.Run(tc.name, func(t *testing.T) {
			want, err := hex.DecodeString(tc.hex)
			if err != nil {
				t.Fatal(err)
			}
			got := tc.f.Append(nil)
			if !bytes.Equal(got, want) {
				t.Fatalf("Append = %x; want %x", got, want)
			}
			var p Frame
			n, err := ParseFrame(want, &p, 0)
			if err != nil {
				t.Fatalf("ParseFrame: %v", err)
			}
			if n != len(want) {
				t.Fatalf("ParseFrame consumed %d of %d bytes", n, len(want))
			}
			normalizeFrame(&p)
			if !reflect.DeepEqual(p, tc.f) {
				t.Fatalf("ParseFrame = %+v; want %+v", p, tc.f)
			}
			// Parsing the frame followed by other bytes consumes only the
			// frame, unless the frame runs to the end of the packet.
			if !tc.takesRest {
				n, err := ParseFrame(append(want[:len(want):len(want)], 0x01), &p, 0)
				if err != nil || n != len(want) {
					t.Fatalf("with trailing PING: n=%d err=%v", n, err)
				}
			}
		})
		seen[tc.f.Type.String()] = true
	}
	// Every known frame type name is in the table.
	for t0 := FrameType(0); t0 <= 0xff; t0++ {
		if t0.IsKnown() && !seen[t0.String()] {
			t.Errorf("frame type %v has no table entry", t0)
		}
	}
}

// TestFramePrefixes checks that every proper prefix of every frame either
// fails with a FRAME_ENCODING_ERROR or, for frames that extend to the end of
// the packet, parses as a frame that uses the whole prefix.
func TestFramePrefixes(t *testing.T) {
	for _, tc := range frameCases() {
		full, _ := hex.DecodeString(tc.hex)
		for i := 0; i < len(full); i++ {
			prefix := full[:i:i]
			var f Frame
			n, err := ParseFrame(prefix, &f, 0)
			if err == nil {
				if !tc.takesRest || n != i {
					t.Errorf("%s: prefix %x parsed (n=%d)", tc.name, prefix, n)
				}
				continue
			}
			var te *TransportError
			if !errors.As(err, &te) || te.Code != FrameEncodingError {
				t.Errorf("%s: prefix %x: error %v is not FRAME_ENCODING_ERROR", tc.name, prefix, err)
			}
		}
	}
}

// RFC 9000, Section 12.4: "An endpoint MUST treat the receipt of a frame of
// unknown type as a connection error of type FRAME_ENCODING_ERROR." and "a
// frame type MUST use the shortest possible encoding".
func TestParseFrameTypeErrors(t *testing.T) {
	var f Frame
	for _, tc := range []struct {
		hex  string
		code TransportErrorCode
	}{
		{"20", FrameEncodingError},               // unassigned
		{"4001", ProtocolViolation},              // PING in two bytes
		{"800000af", ProtocolViolation},          // ACK_FREQUENCY in four bytes
		{"40", FrameEncodingError},               // truncated type
		{"ffffffffffffffff", FrameEncodingError}, // unknown 8-byte type
		{"c0000000000000ff", ProtocolViolation},  // 0xff in 8 bytes
	} {
		b, _ := hex.DecodeString(tc.hex)
		_, err := ParseFrame(b, &f, 0)
		var te *TransportError
		if !errors.As(err, &te) || te.Code != tc.code {
			t.Errorf("%s: err = %v; want %v", tc.hex, err, tc.code)
		}
	}
}

// RFC 9000, Table 3, read column by column.
func TestFrameAllowedIn(t *testing.T) {
	pkts := map[byte]PacketType{'I': PacketTypeInitial, 'H': PacketTypeHandshake, '0': PacketType0RTT, '1': PacketType1RTT}
	for _, tc := range []struct {
		t    FrameType
		pkts string
	}{
		{FrameTypePadding, "IH01"}, {FrameTypePing, "IH01"}, {FrameTypeAck, "IH1"}, {FrameTypeAckECN, "IH1"},
		{FrameTypeResetStream, "01"}, {FrameTypeStopSending, "01"}, {FrameTypeCrypto, "IH1"},
		{FrameTypeNewToken, "1"}, {0x08, "01"}, {0x0f, "01"}, {FrameTypeMaxData, "01"},
		{FrameTypeMaxStreamData, "01"}, {FrameTypeMaxStreamsBidi, "01"}, {FrameTypeMaxStreamsUni, "01"},
		{FrameTypeDataBlocked, "01"}, {FrameTypeStreamDataBlocked, "01"}, {FrameTypeStreamsBlockedBidi, "01"},
		{FrameTypeStreamsBlockedUni, "01"}, {FrameTypeNewConnectionID, "01"}, {FrameTypeRetireConnectionID, "01"},
		{FrameTypePathChallenge, "01"}, {FrameTypePathResponse, "1"},
		{FrameTypeConnectionClose, "IH01"}, {FrameTypeConnectionCloseApp, "01"}, {FrameTypeHandshakeDone, "1"},
		{FrameTypeDatagram, "01"}, {FrameTypeDatagramWithLength, "01"},
		{FrameTypeImmediateAck, "1"}, {FrameTypeAckFrequency, "1"}, {FrameTypeResetStreamAt, "01"},
		{0x20, ""},
	} {
		for c, pt := range pkts {
			want := strings.IndexByte(tc.pkts, c) >= 0
			if got := tc.t.AllowedIn(pt); got != want {
				t.Errorf("%v (%#x) in %v: allowed = %v; want %v", tc.t, uint64(tc.t), pt, got, want)
			}
			err := CheckFrameAllowed(tc.t, pt)
			var te *TransportError
			if want != (err == nil) || (!want && (!errors.As(err, &te) || te.Code != ProtocolViolation)) {
				t.Errorf("CheckFrameAllowed(%v, %v) = %v", tc.t, pt, err)
			}
		}
		if tc.t.AllowedIn(PacketTypeRetry) || tc.t.AllowedIn(PacketTypeVersionNegotiation) {
			t.Errorf("%v allowed in a packet without frames", tc.t)
		}
	}
	if err := CheckPayloadNotEmpty(nil); err == nil {
		t.Error("empty payload accepted")
	}
}

func TestFrameAckElicitingAndProbing(t *testing.T) {
	for _, tc := range frameCases() {
		ft := tc.f.Type
		nonEliciting := ft == FrameTypeAck || ft == FrameTypeAckECN || ft == FrameTypePadding ||
			ft == FrameTypeConnectionClose || ft == FrameTypeConnectionCloseApp
		if ft.IsAckEliciting() == nonEliciting {
			t.Errorf("%s: IsAckEliciting = %v", tc.name, ft.IsAckEliciting())
		}
		probing := ft == FrameTypePadding || ft == FrameTypePathChallenge || ft == FrameTypePathResponse ||
			ft == FrameTypeNewConnectionID
		if ft.IsProbing() != probing {
			t.Errorf("%s: IsProbing = %v", tc.name, ft.IsProbing())
		}
	}
}

// TestFrameAllocs checks that parsing and appending every frame type through
// the generic Frame allocates nothing.
func TestFrameAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	var f Frame
	f.Ack.Ranges = make([]AckRange, 0, 8)
	for _, tc := range frameCases() {
		in, _ := hex.DecodeString(tc.hex)
		allocs := testing.AllocsPerRun(50, func() {
			if _, err := ParseFrame(in, &f, 0); err != nil {
				t.Fatal(err)
			}
			buf = f.Append(buf[:0])
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per parse+append; want 0", tc.name, allocs)
		}
	}
}

// mixedPayload builds a full-size 1-RTT payload as a busy sender would: an
// ACK with a few ranges, flow-control updates, a STREAM frame with a Length
// and a last STREAM frame filling the packet.
func mixedPayload(size int) []byte {
	var b []byte
	ack := AckFrame{Ranges: []AckRange{{1000, 1010}, {990, 997}, {960, 980}, {900, 950}}, Delay: 1234}
	b = ack.Append(b)
	b = MaxDataFrame{MaximumData: 1 << 24}.Append(b)
	b = MaxStreamDataFrame{StreamID: 4, MaximumStreamData: 1 << 20}.Append(b)
	b = StreamFrame{StreamID: 4, Offset: 1 << 16, Data: make([]byte, 300), HasLength: true}.Append(b)
	last := StreamFrame{StreamID: 8, Offset: 1 << 20}
	last.Data = make([]byte, last.MaxDataLen(size-len(b)))
	return last.Append(b)
}

func BenchmarkParseMixedPayload(b *testing.B) {
	payload := mixedPayload(1200)
	var f Frame
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		for p := payload; len(p) > 0; {
			n, err := ParseFrame(p, &f, 0)
			if err != nil {
				b.Fatal(err)
			}
			p = p[n:]
		}
	}
}

func BenchmarkAppendMixedPayload(b *testing.B) {
	data := make([]byte, 1200)
	ack := AckFrame{Ranges: []AckRange{{1000, 1010}, {990, 997}, {960, 980}, {900, 950}}, Delay: 1234}
	buf := make([]byte, 0, 1500)
	b.SetBytes(1200)
	b.ReportAllocs()
	for b.Loop() {
		p := ack.Append(buf[:0])
		p = MaxDataFrame{MaximumData: 1 << 24}.Append(p)
		p = MaxStreamDataFrame{StreamID: 4, MaximumStreamData: 1 << 20}.Append(p)
		p = StreamFrame{StreamID: 4, Offset: 1 << 16, Data: data[:300], HasLength: true}.Append(p)
		last := StreamFrame{StreamID: 8, Offset: 1 << 20}
		last.Data = data[:last.MaxDataLen(1200-len(p))]
		p = last.Append(p)
		if len(p) != 1200 {
			b.Fatalf("payload is %d bytes", len(p))
		}
	}
}

// FuzzParseFrames parses a whole packet payload frame by frame. Whatever
// parses must re-encode to frames that parse back to the same values.
func FuzzParseFrames(f *testing.F) {
	for _, tc := range frameCases() {
		b, _ := hex.DecodeString(tc.hex)
		f.Add(b)
	}
	f.Add(mixedPayload(1200))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var frames []Frame
		for p := payload; len(p) > 0; {
			var fr Frame
			n, err := ParseFrame(p, &fr, 16)
			if err != nil {
				var te *TransportError
				if !errors.As(err, &te) {
					t.Fatalf("error %v is not a *TransportError", err)
				}
				break
			}
			if n <= 0 || n > len(p) {
				t.Fatalf("ParseFrame consumed %d of %d bytes", n, len(p))
			}
			normalizeFrame(&fr)
			frames = append(frames, fr)
			p = p[n:]
		}
		var enc []byte
		for i := range frames {
			enc = frames[i].Append(enc)
		}
		for i, p := 0, enc; len(p) > 0; i++ {
			var fr Frame
			n, err := ParseFrame(p, &fr, 16)
			if err != nil {
				t.Fatalf("re-encoded frame %d (%v) does not parse: %v", i, frames[i].Type, err)
			}
			normalizeFrame(&fr)
			if i >= len(frames) || !reflect.DeepEqual(fr, frames[i]) {
				t.Fatalf("frame %d: re-parsed %+v; want %+v", i, fr, frames[min(i, len(frames)-1)])
			}
			p = p[n:]
		}
	})
}
