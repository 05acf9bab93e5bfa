package qpack

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// The examples of RFC 9204, Appendix B, byte for byte. "The encoder sends
// three encoded field sections containing one field line each, as well as
// two speculative inserts that are not referenced."
var (
	exB1Stream0 = "0000 510b 2f69 6e64 6578 2e68 746d 6c"
	exB2Encoder = "3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d c10c 2f73 616d 706c 652f 7061 7468"
	exB2Stream4 = "0381 10 11"
	exB2Decoder = "84"
	exB3Encoder = "4a63 7573 746f 6d2d 6b65 790c 6375 7374 6f6d 2d76 616c 7565"
	exB3Decoder = "01"
	exB4Encoder = "02"
	exB4Stream8 = "0500 80 c1 81"
	exB4Decoder = "48"
	exB5Encoder = "810d 6375 7374 6f6d 2d76 616c 7565 32"
)

// tableState describes the encoder's dynamic table as the example's
// figures do: absolute index, name and value, from oldest to newest.
type tableEntry struct {
	abs         uint64
	name, value string
}

func checkTable(t *testing.T, step string, tbl *dynamicTable, size uint64, want []tableEntry) {
	t.Helper()
	var got []tableEntry
	for abs := tbl.dropped; abs < tbl.insertCount(); abs++ {
		e := tbl.entry(abs)
		got = append(got, tableEntry{abs, e.name, e.value})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: table = %v, want %v", step, got, want)
	}
	if tbl.size != size {
		t.Errorf("%s: Size=%d, want %d", step, tbl.size, size)
	}
}

func wantBytes(t *testing.T, step string, got []byte, want string) {
	t.Helper()
	if w := unhex(t, want); !bytes.Equal(got, w) {
		t.Errorf("%s:\n got %x\nwant %x", step, got, w)
	}
}

// TestAppendixBEncoder drives the encoder through Appendix B. B.1 uses the
// public API; where the example makes choices that the encoder's policy
// would make differently (raw strings instead of Huffman, a speculative
// insert, a Duplicate), the encoder's own instruction and representation
// writers are called directly.
func TestAppendixBEncoder(t *testing.T) {
	e := NewEncoder(EncoderConfig{MaxTableCapacity: 220})
	e.huffman = false // the example's strings are not Huffman-coded

	// B.1: before SETTINGS the dynamic table is unavailable, and :path
	// /index.html is a literal naming static entry 1.
	got := e.EncodeFieldSection(nil, 0, []HeaderField{{Name: ":path", Value: "/index.html"}})
	wantBytes(t, "B.1 stream 0", got, exB1Stream0)
	if b := e.AppendEncoderStream(nil); len(b) != 0 {
		t.Errorf("B.1: encoder stream %x, want nothing", b)
	}

	// B.2: "The encoder sets the dynamic table capacity, inserts a header
	// with a dynamic name reference, then sends a potentially blocking,
	// encoded field section referencing this new entry."
	if err := e.SetPeerSettings(220, 1); err != nil {
		t.Fatal(err)
	}
	base := e.table.insertCount()
	a0 := e.insertStaticName(0, "www.example.com")
	a1 := e.insertStaticName(1, "/sample/path")
	wantBytes(t, "B.2 encoder stream", e.AppendEncoderStream(nil), exB2Encoder)
	sec := appendSectionPrefix(nil, 2, base, e.maxEntries)
	sec = appendIndexedDynamic(sec, a0, base)
	sec = appendIndexedDynamic(sec, a1, base)
	e.table.addSection(4, 2, a0)
	wantBytes(t, "B.2 stream 4", sec, exB2Stream4)
	checkTable(t, "B.2", &e.table.dynamicTable, 106, []tableEntry{
		{0, ":authority", "www.example.com"}, {1, ":path", "/sample/path"}})
	if e.table.knownReceived != 0 || e.BlockedStreams() != 1 {
		t.Errorf("B.2: Known Received Count %d, blocked %d; want 0, 1", e.table.knownReceived, e.BlockedStreams())
	}
	// "The decoder acknowledges processing the encoded field section, which
	// implicitly acknowledges all dynamic table insertions up to the
	// Required Insert Count."
	if err := e.HandleDecoderStream(unhex(t, exB2Decoder)); err != nil {
		t.Fatal(err)
	}
	if e.table.knownReceived != 2 || e.BlockedStreams() != 0 || e.table.numSections != 0 {
		t.Errorf("B.2 after ack: Known Received Count %d, blocked %d", e.table.knownReceived, e.BlockedStreams())
	}

	// B.3: "The encoder inserts a header into the dynamic table with a
	// literal name. The decoder acknowledges receipt of the entry."
	e.insertLiteral("custom-key", "custom-value")
	wantBytes(t, "B.3 encoder stream", e.AppendEncoderStream(nil), exB3Encoder)
	checkTable(t, "B.3", &e.table.dynamicTable, 160, []tableEntry{
		{0, ":authority", "www.example.com"}, {1, ":path", "/sample/path"}, {2, "custom-key", "custom-value"}})
	if err := e.HandleDecoderStream(unhex(t, exB3Decoder)); err != nil {
		t.Fatal(err)
	}
	if e.table.knownReceived != 3 {
		t.Errorf("B.3: Known Received Count %d, want 3", e.table.knownReceived)
	}

	// B.4: "The encoder duplicates an existing entry in the dynamic table,
	// then sends an encoded field section referencing the dynamic table
	// entries including the duplicated entry."
	a3 := e.duplicate(0)
	wantBytes(t, "B.4 encoder stream", e.AppendEncoderStream(nil), exB4Encoder)
	base = e.table.insertCount() // the example sets Base = 4, after the duplicate
	sec = appendSectionPrefix(nil, 4, base, e.maxEntries)
	sec = appendIndexedDynamic(sec, a3, base)
	sec = appendIndexedStatic(sec, 1)
	sec = appendIndexedDynamic(sec, 2, base)
	e.table.addSection(8, 4, 2)
	wantBytes(t, "B.4 stream 8", sec, exB4Stream8)
	checkTable(t, "B.4", &e.table.dynamicTable, 217, []tableEntry{
		{0, ":authority", "www.example.com"}, {1, ":path", "/sample/path"}, {2, "custom-key", "custom-value"},
		{3, ":authority", "www.example.com"}})
	// While stream 8's section is outstanding, entry 2 and above are pinned.
	if e.table.entry(2).refs != 1 {
		t.Errorf("B.4: entry 2 refs %d, want 1", e.table.entry(2).refs)
	}
	// "the decoder cancels the stream and notifies the encoder that the
	// encoded field section was not processed."
	if err := e.HandleDecoderStream(unhex(t, exB4Decoder)); err != nil {
		t.Fatal(err)
	}
	if e.table.entry(2).refs != 0 || e.table.numSections != 0 || e.table.knownReceived != 3 {
		t.Errorf("B.4 after cancel: refs %d, sections %d, KRC %d", e.table.entry(2).refs, e.table.numSections, e.table.knownReceived)
	}

	// B.5: "The encoder inserts another header into the dynamic table,
	// which evicts the oldest entry."
	size := entrySize("custom-key", "custom-value2")
	if !e.table.canFit(size, ^uint64(0)) {
		t.Fatal("B.5: entry 0 should be evictable")
	}
	e.insertDynamicName(2, "custom-value2")
	wantBytes(t, "B.5 encoder stream", e.AppendEncoderStream(nil), exB5Encoder)
	checkTable(t, "B.5", &e.table.dynamicTable, 215, []tableEntry{
		{1, ":path", "/sample/path"}, {2, "custom-key", "custom-value"},
		{3, ":authority", "www.example.com"}, {4, "custom-key", "custom-value2"}})
}

// TestAppendixBEncoderEvictionRules checks that eviction respects the rules the
// example illustrates: with entry 0 unacknowledged or referenced, B.5's
// insert must not happen.
func TestAppendixBEncoderEvictionRules(t *testing.T) {
	e := NewEncoder(EncoderConfig{MaxTableCapacity: 220})
	e.SetPeerSettings(220, 1)
	e.AppendEncoderStream(nil)
	e.insertStaticName(0, "www.example.com")
	e.insertStaticName(1, "/sample/path")
	e.insertLiteral("custom-key", "custom-value")
	e.duplicate(0)
	size := entrySize("custom-key", "custom-value2")
	// Nothing acknowledged: "the encoder MUST NOT insert that entry".
	if e.table.canFit(size, ^uint64(0)) {
		t.Error("evicting an unacknowledged entry was allowed")
	}
	e.HandleDecoderStream([]byte{0x01}) // Insert Count Increment 1: entry 0 acknowledged
	if !e.table.canFit(size, ^uint64(0)) {
		t.Error("evicting an acknowledged, unreferenced entry was refused")
	}
	// A section referencing entry 0 pins it.
	e.table.addSection(12, 1, 0)
	if e.table.canFit(size, ^uint64(0)) {
		t.Error("evicting a referenced entry was allowed")
	}
	// So does the section being encoded.
	e.table.cancelStream(12)
	if e.table.canFit(size, 0) {
		t.Error("evicting an entry of the current section was allowed")
	}
}

// TestAppendixBDecoder feeds the example's encoder stream and field sections
// to a decoder, whole and one byte at a time, and checks the decoded field
// lines and the decoder stream it emits.
func TestAppendixBDecoder(t *testing.T) {
	for _, chunk := range []int{0, 1, 2, 3} {
		d := NewDecoder(DecoderConfig{MaxTableCapacity: 220, MaxBlockedStreams: 1})
		feed := func(step, hexData string) {
			t.Helper()
			b := unhex(t, hexData)
			if chunk == 0 {
				if err := d.HandleEncoderStream(b); err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				return
			}
			for len(b) > 0 {
				n := min(chunk, len(b))
				if err := d.HandleEncoderStream(b[:n]); err != nil {
					t.Fatalf("%s (chunk %d): %v", step, chunk, err)
				}
				b = b[n:]
			}
		}
		decode := func(step string, stream uint64, hexData string, want []HeaderField) {
			t.Helper()
			got, err := d.DecodeFieldSection(stream, unhex(t, hexData), nil)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: decoded %v, want %v", step, got, want)
			}
		}
		decStream := func(step, want string) {
			t.Helper()
			wantBytes(t, step, d.AppendDecoderStream(nil), want)
		}

		// B.1
		decode("B.1", 0, exB1Stream0, []HeaderField{{Name: ":path", Value: "/index.html"}})
		decStream("B.1 decoder stream", "")

		// B.2
		feed("B.2", exB2Encoder)
		decode("B.2", 4, exB2Stream4, []HeaderField{
			{Name: ":authority", Value: "www.example.com"}, {Name: ":path", Value: "/sample/path"}})
		decStream("B.2 decoder stream", exB2Decoder)
		checkTable(t, "B.2", &d.table, 106, []tableEntry{
			{0, ":authority", "www.example.com"}, {1, ":path", "/sample/path"}})

		// B.3
		feed("B.3", exB3Encoder)
		decStream("B.3 decoder stream", exB3Decoder)
		checkTable(t, "B.3", &d.table, 160, []tableEntry{
			{0, ":authority", "www.example.com"}, {1, ":path", "/sample/path"}, {2, "custom-key", "custom-value"}})

		// B.4: "The packet containing the encoder stream data is delayed.
		// Before the packet arrives, the decoder cancels the stream".
		if _, err := d.DecodeFieldSection(8, unhex(t, exB4Stream8), nil); err != ErrBlocked {
			t.Fatalf("B.4: %v, want ErrBlocked", err)
		}
		if d.BlockedStreams() != 1 {
			t.Errorf("B.4: %d blocked streams", d.BlockedStreams())
		}
		d.CancelStream(8)
		decStream("B.4 decoder stream", exB4Decoder)
		feed("B.4", exB4Encoder)
		if u := d.AppendUnblocked(nil); len(u) != 0 {
			t.Errorf("B.4: cancelled stream reported unblocked: %v", u)
		}
		checkTable(t, "B.4", &d.table, 217, []tableEntry{
			{0, ":authority", "www.example.com"}, {1, ":path", "/sample/path"}, {2, "custom-key", "custom-value"},
			{3, ":authority", "www.example.com"}})

		// B.5
		feed("B.5", exB5Encoder)
		checkTable(t, "B.5", &d.table, 215, []tableEntry{
			{1, ":path", "/sample/path"}, {2, "custom-key", "custom-value"},
			{3, ":authority", "www.example.com"}, {4, "custom-key", "custom-value2"}})
		// The duplicate and the B.5 insert are acknowledged together.
		decStream("B.5 decoder stream", "02")
	}
}

// TestAppendixBDecoderUnblocked replays B.4 without the cancellation: the
// delayed encoder stream data arrives and unblocks stream 8.
func TestAppendixBDecoderUnblocked(t *testing.T) {
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 220, MaxBlockedStreams: 1})
	for _, s := range []string{exB2Encoder, exB3Encoder} {
		if err := d.HandleEncoderStream(unhex(t, s)); err != nil {
			t.Fatal(err)
		}
	}
	wantBytes(t, "inserts", d.AppendDecoderStream(nil), "03")
	sec := unhex(t, exB4Stream8)
	if _, err := d.DecodeFieldSection(8, sec, nil); err != ErrBlocked {
		t.Fatalf("%v, want ErrBlocked", err)
	}
	// Asking again while still blocked is harmless.
	if _, err := d.DecodeFieldSection(8, sec, nil); err != ErrBlocked {
		t.Fatalf("%v, want ErrBlocked", err)
	}
	// A second blocked stream exceeds SETTINGS_QPACK_BLOCKED_STREAMS = 1.
	_, err := d.DecodeFieldSection(12, sec, nil)
	if !errors.Is(err, ErrDecompressionFailed) {
		t.Fatalf("second blocked stream: %v, want QPACK_DECOMPRESSION_FAILED", err)
	}
	if u := d.AppendUnblocked(nil); len(u) != 0 {
		t.Fatalf("unblocked too early: %v", u)
	}
	if err := d.HandleEncoderStream(unhex(t, exB4Encoder)); err != nil {
		t.Fatal(err)
	}
	if u := d.AppendUnblocked(nil); !reflect.DeepEqual(u, []uint64{8}) {
		t.Fatalf("unblocked %v, want [8]", u)
	}
	got, err := d.DecodeFieldSection(8, sec, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []HeaderField{{Name: ":authority", Value: "www.example.com"}, {Name: ":path", Value: "/"},
		{Name: "custom-key", Value: "custom-value"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	// Section Acknowledgment for stream 8 covers the duplicate: no
	// increment follows.
	wantBytes(t, "ack", d.AppendDecoderStream(nil), "88")
}
