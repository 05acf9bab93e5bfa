package qpack

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// encoderStreamCases are encoder instructions a decoder with
// MaxTableCapacity 220 and the table of Appendix B.2 (two entries,
// capacity 220) must reject with QPACK_ENCODER_STREAM_ERROR.
var encoderStreamCases = []struct {
	name string
	in   []byte
}{
	// Section 4.3.1: "The decoder MUST treat a new dynamic table capacity
	// value that exceeds this limit as a connection error of type
	// QPACK_ENCODER_STREAM_ERROR."
	{"capacity above maximum", appendInt(nil, 5, 0x20, 221)},
	// Section 3.1: an invalid static index on the encoder stream.
	{"static index 99", append(appendInt(nil, 6, 0xc0, 99), 0x00)},
	// Section 2.2.3: a reference to a nonexistent dynamic entry.
	{"dynamic name index 2", append(appendInt(nil, 6, 0x80, 2), 0x00)},
	{"duplicate index 2", appendInt(nil, 5, 0x00, 2)},
	// Section 3.2.2: "It is an error if the encoder attempts to add an
	// entry that is larger than the dynamic table capacity". Only the
	// length is sent: the error must come before the data.
	{"entry too large, name ref", []byte{0xc0, 0x7f, 0x80, 0x01}},           // value length 255
	{"entry too large, literal name", []byte{0x5f, 0x80, 0x02}},             // name length 287
	{"entry too large, literal value", []byte{0x41, 'a', 0x7f, 0x80, 0x01}}, // 1 + 255 + 32
	{"entry too large, Huffman", []byte{0xc0, 0xff, 0xff, 0x04}},            // 766 Huffman bytes: at least 205 decoded
	{"invalid Huffman", []byte{0xc0, 0x81, 0x00}},
	{"integer overflow", []byte{0x3f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
}

func TestDecoderEncoderStreamErrors(t *testing.T) {
	for _, tc := range encoderStreamCases {
		for _, byteWise := range []bool{false, true} {
			d := NewDecoder(DecoderConfig{MaxTableCapacity: 220})
			if err := d.HandleEncoderStream(unhex(t, exB2Encoder)); err != nil {
				t.Fatal(err)
			}
			var err error
			if byteWise {
				for i := range tc.in {
					if err = d.HandleEncoderStream(tc.in[i : i+1]); err != nil {
						break
					}
				}
			} else {
				err = d.HandleEncoderStream(tc.in)
			}
			if !errors.Is(err, ErrEncoderStream) {
				t.Errorf("%s (byte-wise %v): %v, want QPACK_ENCODER_STREAM_ERROR", tc.name, byteWise, err)
				continue
			}
			// The error is sticky.
			if err2 := d.HandleEncoderStream([]byte{0x20}); err2 != err {
				t.Errorf("%s: later call returned %v", tc.name, err2)
			}
		}
	}
}

func TestDecoderNoDynamicTable(t *testing.T) {
	d := NewDecoder(DecoderConfig{})
	// Setting capacity 0 is allowed even with a maximum of 0.
	if err := d.HandleEncoderStream([]byte{0x20}); err != nil {
		t.Fatal(err)
	}
	// Any insert is larger than a capacity of 0.
	if err := d.HandleEncoderStream([]byte{0xc0, 0x00}); !errors.Is(err, ErrEncoderStream) {
		t.Errorf("insert: %v", err)
	}
	// A non-zero Required Insert Count cannot be valid: FullRange is 0.
	d = NewDecoder(DecoderConfig{})
	if _, err := d.DecodeFieldSection(0, []byte{0x01, 0x00}, nil); !errors.Is(err, ErrDecompressionFailed) {
		t.Errorf("RIC with no table: %v", err)
	}
	// Cancellation is omitted (Section 2.2.2.2 "MAY omit").
	d.CancelStream(4)
	if b := d.AppendDecoderStream(nil); len(b) != 0 {
		t.Errorf("decoder stream %x", b)
	}
}

// TestRequiredInsertCountExample is the example of RFC 9204, Section
// 4.5.1.1: "if the dynamic table is 100 bytes, then the Required Insert
// Count will be encoded modulo 6. If a decoder has received 10 inserts, then
// an encoded value of 4 indicates that the Required Insert Count is 9 for
// the field section."
func TestRequiredInsertCountExample(t *testing.T) {
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 100})
	var in []byte
	in = appendInt(in, 5, 0x20, 100)
	for i := 0; i < 10; i++ {
		in = append(in, 0x40, 0x00) // Insert with Literal Name, empty name and value
	}
	if err := d.HandleEncoderStream(in); err != nil {
		t.Fatal(err)
	}
	if ric, err := d.requiredInsertCount(4); err != nil || ric != 9 {
		t.Errorf("RIC = %d, %v; want 9", ric, err)
	}
	// Every Required Insert Count the decoder could accept survives the
	// encoding, for insert counts around the wrap.
	for ic := uint64(0); ic < 40; ic++ {
		d := NewDecoder(DecoderConfig{MaxTableCapacity: 100})
		d.table.dropped = ic // pretend ic entries were inserted and evicted
		for ric := uint64(1); ric <= ic+3; ric++ {
			if ric+3 <= ic { // entries below ic-3 cannot be referenced: MaxEntries=3
				continue
			}
			enc := appendSectionPrefix(nil, ric, ric, 3)
			got, _, _, err := d.readPrefix(enc)
			if err != nil || got != ric {
				t.Errorf("insert count %d: RIC %d decoded as %d, %v", ic, ric, got, err)
			}
		}
	}
}

func TestDecodeFieldSectionErrors(t *testing.T) {
	// The decoder holds Appendix B.2's table: entries 0 and 1, capacity
	// 220 (MaxEntries 6, so Required Insert Count 2 encodes as 3).
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"truncated prefix", "03"},
		{"encoded RIC above FullRange", "0d00"},
		{"RIC zero encoded as FullRange wrap", "0100"}, // decodes to 0 mod 12: invalid
		{"negative Base", "0382"},                      // Sign 1, Delta Base 2 >= RIC 2
		{"negative Base with RIC 0", "0080"},
		{"static index 99", "0000ff24"},
		{"relative index at Base", "0300 82"}, // Base 2, relative index 2
		{"post-Base at RIC", "0381 12"},       // Base 0, post-Base 2 = absolute 2 >= RIC 2
		{"reference at RIC", "0201 80"},       // RIC 1, Base 2: relative 0 is absolute 1
		{"name reference at RIC", "0201 4000"},
		{"truncated literal", "0000 5105 2f"},      // value length 5, 1 byte
		{"truncated literal name", "0000 2361 62"}, // name length 3
		{"invalid Huffman", "0000 5181 00"},
		{"integer overflow", "0000 ff ffffffffffffffffff7f"},
	}
	for _, tt := range tests {
		d := NewDecoder(DecoderConfig{MaxTableCapacity: 220, MaxBlockedStreams: 10})
		if err := d.HandleEncoderStream(unhex(t, exB2Encoder)); err != nil {
			t.Fatal(err)
		}
		dst := []HeaderField{{Name: "keep"}}
		got, err := d.DecodeFieldSection(0, unhex(t, tt.in), dst)
		if !errors.Is(err, ErrDecompressionFailed) {
			t.Errorf("%s: %v, want QPACK_DECOMPRESSION_FAILED", tt.name, err)
		}
		if len(got) != 1 || got[0].Name != "keep" {
			t.Errorf("%s: dst changed to %v", tt.name, got)
		}
	}
}

// TestDecodeEvictedReference: "If the decoder encounters a reference in a
// field line representation to a dynamic table entry that has already been
// evicted ..., it MUST treat this as a connection error of type
// QPACK_DECOMPRESSION_FAILED." (Section 2.2.3)
func TestDecodeEvictedReference(t *testing.T) {
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 220, MaxBlockedStreams: 1})
	for _, s := range []string{exB2Encoder, exB3Encoder, exB4Encoder, exB5Encoder} {
		if err := d.HandleEncoderStream(unhex(t, s)); err != nil {
			t.Fatal(err)
		}
	}
	// RIC 1 (encoded 2), Base 1, relative index 0: absolute 0, evicted in B.5.
	_, err := d.DecodeFieldSection(0, []byte{0x02, 0x00, 0x80}, nil)
	if !errors.Is(err, ErrDecompressionFailed) {
		t.Errorf("%v, want QPACK_DECOMPRESSION_FAILED", err)
	}
	// Absolute 1 is still there.
	got, err := d.DecodeFieldSection(0, []byte{0x03, 0x00, 0x80}, nil)
	if err != nil || !reflect.DeepEqual(got, []HeaderField{{Name: ":path", Value: "/sample/path"}}) {
		t.Errorf("%v, %v", got, err)
	}
}

func TestDecodeAllRepresentations(t *testing.T) {
	// Base 1 with RIC 3 (Sign 1, Delta Base 1): entry 0 is relative 0,
	// entries 1 and 2 are post-Base 0 and 1.
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 4096})
	e := NewEncoder(EncoderConfig{})
	e.SetPeerSettings(4096, 0)
	e.insertLiteral("a", "1")
	e.insertLiteral("b", "2")
	e.insertLiteral("c", "3")
	if err := d.HandleEncoderStream(e.AppendEncoderStream(nil)); err != nil {
		t.Fatal(err)
	}
	var b []byte
	b = appendSectionPrefix(b, 3, 1, e.maxEntries)
	b = appendIndexedStatic(b, 17)
	b = appendIndexedDynamic(b, 0, 1)
	b = appendIndexedDynamic(b, 2, 1)
	b = appendLiteralStaticName(b, 1, "/x", false, true)
	b = appendLiteralStaticName(b, 84, "secret", true, false)
	b = appendLiteralDynamicName(b, 0, 1, "9", false, true)
	b = appendLiteralDynamicName(b, 1, 1, "8", true, false)
	b = appendLiteralName(b, "x-y", "z", false, true)
	b = appendLiteralName(b, "x-n", "", true, false)
	want := []HeaderField{
		{Name: ":method", Value: "GET"},
		{Name: "a", Value: "1"},
		{Name: "c", Value: "3"},
		{Name: ":path", Value: "/x"},
		{Name: "authorization", Value: "secret", NeverIndex: true},
		{Name: "a", Value: "9"},
		{Name: "b", Value: "8", NeverIndex: true},
		{Name: "x-y", Value: "z"},
		{Name: "x-n", Value: "", NeverIndex: true},
	}
	got, err := d.DecodeFieldSection(4, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if ack := d.AppendDecoderStream(nil); !bytes.Equal(ack, []byte{0x84}) {
		t.Errorf("decoder stream %x, want 84", ack)
	}
}

func TestDecodeFieldSectionTooLarge(t *testing.T) {
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 220, MaxFieldSectionSize: 100})
	if err := d.HandleEncoderStream(unhex(t, exB2Encoder)); err != nil {
		t.Fatal(err)
	}
	// Two dynamic references: 57 + 49 = 106 > 100.
	dst := []HeaderField{{Name: "keep"}}
	got, err := d.DecodeFieldSection(4, unhex(t, exB2Stream4), dst)
	if err != ErrFieldSectionTooLarge || len(got) != 1 {
		t.Fatalf("%v, %v; want ErrFieldSectionTooLarge", got, err)
	}
	// The section was processed: it is acknowledged all the same.
	if b := d.AppendDecoderStream(nil); !bytes.Equal(b, []byte{0x84}) {
		t.Errorf("decoder stream %x, want 84", b)
	}
	// A large literal: 2000 bytes of value.
	e := NewEncoder(EncoderConfig{})
	sec := e.EncodeFieldSection(nil, 0, []HeaderField{{Name: "x", Value: strings.Repeat("v", 2000)}})
	if _, err := d.DecodeFieldSection(0, sec, nil); err != ErrFieldSectionTooLarge {
		t.Errorf("%v, want ErrFieldSectionTooLarge", err)
	}
	// Malformed input after the limit is still an error.
	sec = append(sec, 0xff, 0xff)
	if _, err := d.DecodeFieldSection(0, sec, nil); !errors.Is(err, ErrDecompressionFailed) {
		t.Errorf("%v, want QPACK_DECOMPRESSION_FAILED", err)
	}
}

// TestDecoderPartialInstructionBound checks that an incomplete encoder
// instruction is held only while it could still be valid.
func TestDecoderPartialInstructionBound(t *testing.T) {
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 4096})
	if err := d.HandleEncoderStream(appendInt(nil, 5, 0x20, 4096)); err != nil {
		t.Fatal(err)
	}
	// Insert with literal name of 4000 raw bytes, arriving slowly.
	in := appendString(nil, 6, 0x40, strings.Repeat("n", 4000), false)
	in = appendString(in, 8, 0, strings.Repeat("v", 100), false) // 4000+100+32 > 4096
	var err error
	for i := 0; i < len(in) && err == nil; i += 100 {
		err = d.HandleEncoderStream(in[i:min(i+100, len(in))])
		if len(d.partial) > 4200 {
			t.Fatalf("partial instruction grew to %d bytes", len(d.partial))
		}
	}
	if !errors.Is(err, ErrEncoderStream) {
		t.Errorf("%v, want QPACK_ENCODER_STREAM_ERROR", err)
	}
}

// TestDecoderPartialBufferShrinks: a large chunk appended to an incomplete
// instruction does not leave a large buffer behind.
func TestDecoderPartialBufferShrinks(t *testing.T) {
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 4096})
	setCap := appendInt(nil, 5, 0x20, 4096) // 3 bytes
	if err := d.HandleEncoderStream(setCap[:1]); err != nil {
		t.Fatal(err)
	}
	var big []byte
	big = append(big, setCap[1:]...)
	for len(big) < 200<<10 {
		big = append(big, setCap...)
	}
	big = append(big, setCap[:2]...)
	if err := d.HandleEncoderStream(big); err != nil {
		t.Fatal(err)
	}
	if len(d.partial) != 2 || cap(d.partial) > maxScratchRetained {
		t.Errorf("partial: len %d, cap %d", len(d.partial), cap(d.partial))
	}
	if err := d.HandleEncoderStream(setCap[2:]); err != nil || len(d.partial) != 0 || d.table.capacity != 4096 {
		t.Errorf("%v, partial %d, capacity %d", err, len(d.partial), d.table.capacity)
	}
}

// Defect 13 of issue 22: "When the Required Insert Count is less than or
// equal to the decoder's Insert Count, the field section can be processed
// immediately" (RFC 9204, Section 2.2.1): a stream stops counting as
// blocked once the encoder stream has delivered what it waits for, even
// before the caller decodes its section again, so that a conforming
// encoder's next blocking section on another stream is within
// SETTINGS_QPACK_BLOCKED_STREAMS (Section 2.1.2).
func TestDecoderUnblockedStreamStopsCounting(t *testing.T) {
	p := newPair(t, 4096, 1)
	sec0 := p.enc.EncodeFieldSection(nil, 0, []HeaderField{{Name: "user-agent", Value: "one"}})
	ins0 := p.enc.AppendEncoderStream(nil)
	if _, err := p.dec.DecodeFieldSection(0, sec0, nil); err != ErrBlocked {
		t.Fatalf("stream 0: %v, want ErrBlocked", err)
	}
	if err := p.dec.HandleEncoderStream(ins0); err != nil {
		t.Fatal(err)
	}
	if n := p.dec.BlockedStreams(); n != 0 {
		t.Errorf("%d streams counted as blocked after the encoder stream unblocked stream 0", n)
	}
	// The encoder learns of the insertion (Insert Count Increment) and
	// may block one stream again.
	if err := p.enc.HandleDecoderStream(p.dec.AppendDecoderStream(nil)); err != nil {
		t.Fatal(err)
	}
	sec4 := p.enc.EncodeFieldSection(nil, 4, []HeaderField{{Name: "user-agent", Value: "two"}})
	p.enc.AppendEncoderStream(nil) // delayed
	if sec4[0] == 0 {
		t.Fatal("stream 4's section does not reference the dynamic table")
	}
	if _, err := p.dec.DecodeFieldSection(4, sec4, nil); err != ErrBlocked {
		t.Fatalf("stream 4: %v, want ErrBlocked within the limit of 1", err)
	}
	// Stream 0 decodes as ever, and is reported unblocked once.
	if u := p.dec.AppendUnblocked(nil); len(u) != 1 || u[0] != 0 {
		t.Errorf("unblocked %v, want [0]", u)
	}
	got, err := p.dec.DecodeFieldSection(0, sec0, nil)
	if err != nil || len(got) != 1 || got[0].Value != "one" {
		t.Fatalf("stream 0: %v, %v", got, err)
	}
}

// Defect 19 of issue 22: DecoderConfig's ValidName and ValidValue check a
// dynamic table entry once, when it is inserted, and keep the result, so
// that a field section referencing a 4 KB entry 255 times costs its 255
// references and not a megabyte of checking. Literals and static entries
// are checked where they occur. A field line they refuse fails the
// section with an *InvalidFieldError once it has been processed and
// acknowledged, as ErrFieldSectionTooLarge does.
func TestDecoderChecksDynamicEntriesOnce(t *testing.T) {
	big := strings.Repeat("v", 4000)
	checked := map[string]int{}
	valid := func(s string) bool {
		checked[s]++
		return !strings.Contains(s, "\n")
	}
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 4096, MaxBlockedStreams: 1, ValidName: valid, ValidValue: valid})
	// Set Dynamic Table Capacity 4096, Insert With Literal Name
	// "x-big: <4000 bytes>".
	ins := appendInt(nil, 5, 0x20, 4096)
	ins = appendString(ins, 6, 0x40, "x-big", false)
	ins = appendString(ins, 8, 0, big, false)
	if err := d.HandleEncoderStream(ins); err != nil {
		t.Fatal(err)
	}
	if checked["x-big"] != 1 || checked[big] != 1 {
		t.Fatalf("at insertion: name checked %d times, value %d times", checked["x-big"], checked[big])
	}
	// Required Insert Count 1, Base 1, then 255 Indexed Field Lines of
	// relative index 0 and a literal.
	sec := []byte{0x02, 0x00}
	for range 255 {
		sec = append(sec, 0x80)
	}
	sec = appendLiteralName(sec, "x-lit", "ok", false, false)
	got, err := d.DecodeFieldSection(0, sec, nil)
	if err != nil || len(got) != 256 || got[254].Value != big {
		t.Fatalf("decoded %d fields, %v", len(got), err)
	}
	if checked["x-big"] != 1 || checked[big] != 1 || checked["x-lit"] != 1 || checked["ok"] != 1 {
		t.Errorf("after 255 references: entry name checked %d times, value %d; literal %d, %d",
			checked["x-big"], checked[big], checked["x-lit"], checked["ok"])
	}
	// An entry with a refused value fails each section that references
	// it, after the section is acknowledged.
	ins = appendString(nil, 6, 0x40, "x-bad", false)
	ins = appendString(ins, 8, 0, "a\nb", false)
	if err := d.HandleEncoderStream(ins); err != nil {
		t.Fatal(err)
	}
	d.AppendDecoderStream(nil)
	for _, sec := range [][]byte{
		{0x03, 0x00, 0x80}, // indexed: the entry x-bad
		append([]byte{0x03, 0x00}, appendLiteralName(nil, "x-\n", "v", false, false)...),     // literal name
		append([]byte{0x00, 0x00}, appendLiteralStaticName(nil, 2, "a\nb", false, false)...), // static name, literal value
	} {
		_, err := d.DecodeFieldSection(4, sec, nil)
		var fe *InvalidFieldError
		if !errors.As(err, &fe) {
			t.Fatalf("section %x: %v, want an *InvalidFieldError", sec, err)
		}
		if ack := d.AppendDecoderStream(nil); sec[0] != 0 && !bytes.Equal(ack, []byte{0x84}) {
			t.Errorf("section %x: decoder stream %x, want the Section Acknowledgment 84", sec, ack)
		}
	}
}

// TestDecoderBatchedAcks: AppendDecoderStreamBatched holds back Section
// Acknowledgments of sections that reference only entries the encoder
// knows were received, fewer than maxAcks of them, and sends at once an
// Insert Count Increment, an acknowledgment that raises the Known Received
// Count and a Stream Cancellation, with everything held before it in
// order (issue 28: one decoder-stream read per request less for the peer).
func TestDecoderBatchedAcks(t *testing.T) {
	p := newPair(t, 4096, 0)
	deliver := func(b []byte) {
		t.Helper()
		if err := p.enc.HandleDecoderStream(b); err != nil {
			t.Fatal(err)
		}
	}
	// The insertions are acknowledged at once (Insert Count Increment);
	// the fields that repeat are inserted on their second sighting.
	for _, id := range []uint64{0, 4} {
		p.roundTrip(id, typicalRequest, false)
		b, held := p.dec.AppendDecoderStreamBatched(nil, 4)
		if len(b) == 0 || held != 0 {
			t.Fatalf("stream %d, after insertions: %x, %d held; want the increment sent", id, b, held)
		}
		deliver(b)
	}
	for i, id := range []uint64{8, 12, 16} {
		sec := p.roundTrip(id, typicalRequest, false)
		if sec[0] == 0 {
			t.Fatalf("stream %d: section references no dynamic entry", id)
		}
		b, held := p.dec.AppendDecoderStreamBatched(nil, 4)
		if len(b) != 0 || held != i+1 {
			t.Fatalf("stream %d: %x, %d held; want nothing sent, %d held", id, b, held, i+1)
		}
	}
	p.roundTrip(20, typicalRequest, false)
	b, held := p.dec.AppendDecoderStreamBatched(nil, 4)
	if want := []byte{0x88, 0x8c, 0x90, 0x94}; !bytes.Equal(b, want) || held != 0 {
		t.Fatalf("fourth acknowledgment: %x, %d held; want %x", b, held, want)
	}
	deliver(b)
	if b := p.dec.AppendDecoderStream(nil); len(b) != 0 {
		t.Fatalf("%x left after the batch", b)
	}
	// A Stream Cancellation goes out at once, after the acknowledgment held.
	p.roundTrip(24, typicalRequest, false)
	if b, held := p.dec.AppendDecoderStreamBatched(nil, 4); len(b) != 0 || held != 1 {
		t.Fatalf("stream 24: %x, %d held", b, held)
	}
	p.dec.CancelStream(28)
	b, _ = p.dec.AppendDecoderStreamBatched(nil, 4)
	if want := []byte{0x98, 0x5c}; !bytes.Equal(b, want) {
		t.Fatalf("cancellation: %x, want %x", b, want)
	}
	deliver(b)

	// A section that references an entry the encoder does not know was
	// received is acknowledged at once: the acknowledgment raises the
	// Known Received Count (Section 4.4.1), on which the encoder's
	// blocked-stream limit depends.
	q := newPair(t, 4096, 1)
	sec := q.enc.EncodeFieldSection(nil, 0, []HeaderField{{Name: "user-agent", Value: "x"}})
	if err := q.dec.HandleEncoderStream(q.enc.AppendEncoderStream(nil)); err != nil {
		t.Fatal(err)
	}
	if sec[0] == 0 {
		t.Fatal("section references no dynamic entry")
	}
	if _, err := q.dec.DecodeFieldSection(0, sec, nil); err != nil {
		t.Fatal(err)
	}
	if b, held := q.dec.AppendDecoderStreamBatched(nil, 4); !bytes.Equal(b, []byte{0x80}) || held != 0 {
		t.Fatalf("acknowledgment raising the Known Received Count: %x, %d held; want 80", b, held)
	}
}
