package qpack

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// pair is an encoder and decoder connected without delay.
type pair struct {
	t   testing.TB
	enc *Encoder
	dec *Decoder
}

func newPair(t testing.TB, capacity, blocked uint64) *pair {
	p := &pair{
		t:   t,
		enc: NewEncoder(EncoderConfig{MaxTableCapacity: capacity}),
		dec: NewDecoder(DecoderConfig{MaxTableCapacity: capacity, MaxBlockedStreams: blocked}),
	}
	p.dec.strictRIC = true
	if err := p.enc.SetPeerSettings(capacity, blocked); err != nil {
		t.Fatal(err)
	}
	return p
}

// roundTrip encodes fields, delivers the encoder stream, decodes, checks
// and, if ack is set, delivers the decoder stream. It returns the encoded
// section.
func (p *pair) roundTrip(stream uint64, fields []HeaderField, ack bool) []byte {
	p.t.Helper()
	sec := p.enc.EncodeFieldSection(nil, stream, fields)
	if err := p.dec.HandleEncoderStream(p.enc.AppendEncoderStream(nil)); err != nil {
		p.t.Fatal(err)
	}
	got, err := p.dec.DecodeFieldSection(stream, sec, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fields) {
		p.t.Fatalf("decoded %v, want %v", got, fields)
	}
	if ack {
		p.ack()
	}
	return sec
}

func (p *pair) ack() {
	p.t.Helper()
	if err := p.enc.HandleDecoderStream(p.dec.AppendDecoderStream(nil)); err != nil {
		p.t.Fatal(err)
	}
}

var typicalRequest = []HeaderField{
	{Name: ":method", Value: "GET"},
	{Name: ":scheme", Value: "https"},
	{Name: ":authority", Value: "www.example.com"},
	{Name: ":path", Value: "/api/v1/items?page=2"},
	{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
	{Name: "accept", Value: "application/json"},
	{Name: "accept-encoding", Value: "gzip, deflate, br"},
	{Name: "accept-language", Value: "en-US,en;q=0.5"},
	{Name: "cookie", Value: "session=4f1b2c3d5e6f7a8b9c0d; theme=dark"},
	{Name: "x-request-id", Value: "c0ffee42"},
}

func TestEncoderBeforeSettings(t *testing.T) {
	e := NewEncoder(EncoderConfig{})
	sec := e.EncodeFieldSection(nil, 0, typicalRequest)
	if sec[0] != 0 || sec[1] != 0 {
		t.Errorf("prefix %x, want 0000", sec[:2])
	}
	if b := e.AppendEncoderStream(nil); len(b) != 0 {
		t.Errorf("encoder stream written before SETTINGS: %x", b)
	}
	d := NewDecoder(DecoderConfig{})
	got, err := d.DecodeFieldSection(0, sec, nil)
	if err != nil || !reflect.DeepEqual(got, typicalRequest) {
		t.Errorf("%v, %v", got, err)
	}
}

func TestEncoderSettings(t *testing.T) {
	e := NewEncoder(EncoderConfig{MaxTableCapacity: 1000})
	e.SetPeerSettings(4096, 10)
	if b := e.AppendEncoderStream(nil); !bytes.Equal(b, appendInt(nil, 5, 0x20, 1000)) {
		t.Errorf("encoder stream %x, want Set Dynamic Table Capacity 1000", b)
	}
	if e.maxEntries != 128 {
		t.Errorf("MaxEntries %d, want 4096/32", e.maxEntries)
	}
	// The server's SETTINGS repeat the remembered 0-RTT value: fine.
	if err := e.SetPeerSettings(4096, 20); err != nil || e.peerBlocked != 20 {
		t.Errorf("%v, blocked %d", err, e.peerBlocked)
	}
	// Any other value is QPACK_DECODER_STREAM_ERROR (Section 3.2.3).
	if err := e.SetPeerSettings(2048, 20); !errors.Is(err, ErrDecoderStream) {
		t.Errorf("%v, want QPACK_DECODER_STREAM_ERROR", err)
	}
	// A remembered zero may become non-zero.
	e = NewEncoder(EncoderConfig{})
	e.SetPeerSettings(0, 0)
	if err := e.SetPeerSettings(300, 1); err != nil || e.table.capacity != 300 {
		t.Errorf("%v, capacity %d", err, e.table.capacity)
	}
	// Disabled: nothing on the encoder stream, ever.
	e = NewEncoder(EncoderConfig{DisableDynamicTable: true})
	e.SetPeerSettings(4096, 100)
	e.EncodeFieldSection(nil, 0, typicalRequest)
	e.EncodeFieldSection(nil, 4, typicalRequest)
	if b := e.AppendEncoderStream(nil); len(b) != 0 {
		t.Errorf("disabled encoder wrote %x", b)
	}
}

func TestEncoderDecoderStreamErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		// Section 4.4.1: acknowledging a stream with nothing outstanding.
		{"ack without section", []byte{0x84}},
		// Section 4.4.3: "an Increment field equal to zero, or one that
		// increases the Known Received Count beyond what the encoder has
		// sent".
		{"increment zero", []byte{0x00}},
		{"increment beyond", []byte{0x03}},
		{"integer overflow", []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
	}
	for _, tt := range tests {
		e := NewEncoder(EncoderConfig{})
		e.SetPeerSettings(220, 1)
		e.insertStaticName(0, "www.example.com")
		e.insertStaticName(1, "/sample/path")
		err := e.HandleDecoderStream(tt.in)
		if !errors.Is(err, ErrDecoderStream) {
			t.Errorf("%s: %v, want QPACK_DECODER_STREAM_ERROR", tt.name, err)
		}
		if err2 := e.HandleDecoderStream([]byte{0x01}); err2 != err {
			t.Errorf("%s: error not sticky: %v", tt.name, err2)
		}
	}
	// A cancellation of an unknown stream is not an error: the decoder
	// cannot know which streams carried dynamic references.
	e := NewEncoder(EncoderConfig{})
	if err := e.HandleDecoderStream([]byte{0x48}); err != nil {
		t.Error(err)
	}
}

func TestEncoderDecoderStreamChunks(t *testing.T) {
	// Acknowledgments of streams with large IDs, one byte at a time.
	p := newPair(t, 4096, 100)
	ids := []uint64{0, 4, 1 << 20, 1<<40 + 4}
	for _, id := range ids {
		p.enc.EncodeFieldSection(nil, id, []HeaderField{{Name: ":authority", Value: "example.org"}})
	}
	if got := p.enc.BlockedStreams(); got != len(ids) {
		t.Fatalf("%d blocked streams, want %d", got, len(ids))
	}
	var in []byte
	for _, id := range ids {
		in = appendInt(in, 7, 0x80, id)
	}
	for i := range in {
		if err := p.enc.HandleDecoderStream(in[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if p.enc.table.numSections != 0 || p.enc.table.knownReceived != 1 {
		t.Errorf("sections %d, Known Received Count %d", p.enc.table.numSections, p.enc.table.knownReceived)
	}
}

// TestEncoderCompression checks that repeated requests shrink once the
// dynamic table holds their fields.
func TestEncoderCompression(t *testing.T) {
	p := newPair(t, 4096, 0)
	first := p.roundTrip(0, typicalRequest, true)
	second := p.roundTrip(4, typicalRequest, true)
	third := p.roundTrip(8, typicalRequest, true)
	t.Logf("sizes: %d, %d, %d", len(first), len(second), len(third))
	if len(third) >= len(first)/3 {
		t.Errorf("third request is %d bytes, first %d: not compressed", len(third), len(first))
	}
	// x-request-id changes in real traffic and is never inserted.
	for abs := p.enc.table.dropped; abs < p.enc.table.insertCount(); abs++ {
		if p.enc.table.entry(abs).name == "x-request-id" {
			t.Error("x-request-id was inserted")
		}
	}
}

// TestEncoderNonBlocking: with SETTINGS_QPACK_BLOCKED_STREAMS 0 no section
// may reference an unacknowledged entry.
func TestEncoderNonBlocking(t *testing.T) {
	p := newPair(t, 4096, 0)
	for i := uint64(0); i < 5; i++ {
		sec := p.enc.EncodeFieldSection(nil, i*4, typicalRequest)
		if sec[0] != 0 {
			ric, _, _, err := p.dec.readPrefix(sec)
			if err != nil || ric > p.enc.table.knownReceived {
				t.Fatalf("section %d: Required Insert Count %d above Known Received Count %d", i, ric, p.enc.table.knownReceived)
			}
		}
		if err := p.dec.HandleEncoderStream(p.enc.AppendEncoderStream(nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := p.dec.DecodeFieldSection(i*4, sec, nil); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			p.ack()
		}
	}
}

// TestEncoderBlockedLimit: references to unacknowledged entries stop once
// SETTINGS_QPACK_BLOCKED_STREAMS streams could be blocked, and more sections
// on an already blocking stream are still allowed to block.
func TestEncoderBlockedLimit(t *testing.T) {
	p := newPair(t, 4096, 2)
	f := func(v string) []HeaderField { return []HeaderField{{Name: ":authority", Value: v}} }
	p.enc.EncodeFieldSection(nil, 0, f("a.example"))
	p.enc.EncodeFieldSection(nil, 4, f("b.example"))
	if p.enc.BlockedStreams() != 2 {
		t.Fatalf("blocked %d, want 2", p.enc.BlockedStreams())
	}
	sec := p.enc.EncodeFieldSection(nil, 8, f("c.example"))
	if sec[0] != 0 || p.enc.BlockedStreams() != 2 {
		t.Errorf("third stream blocked too: prefix %x, blocked %d", sec[:2], p.enc.BlockedStreams())
	}
	sec = p.enc.EncodeFieldSection(nil, 0, f("c.example"))
	if sec[0] == 0 {
		t.Error("stream 0, already blocking, did not reference the new entry")
	}
	// Stream Cancellation of stream 0 frees a slot.
	p.enc.HandleDecoderStream([]byte{0x40})
	if p.enc.BlockedStreams() != 1 {
		t.Errorf("blocked %d after cancellation, want 1", p.enc.BlockedStreams())
	}
}

// TestEncoderNeverEvictsReferenced fills a small table with entries that
// outstanding sections reference; the encoder must fall back to literals.
func TestEncoderNeverEvictsReferenced(t *testing.T) {
	p := newPair(t, 200, 100)
	// Two 70-byte entries fill 140 of 200.
	a := []HeaderField{{Name: ":authority", Value: strings.Repeat("a", 28)}}
	b := []HeaderField{{Name: ":authority", Value: strings.Repeat("b", 28)}}
	p.roundTrip(0, a, false)
	p.roundTrip(4, b, false)
	// Unacknowledged and referenced: inserting a third needs an eviction,
	// which is not allowed.
	c := []HeaderField{{Name: ":authority", Value: strings.Repeat("c", 28)}}
	sec := p.roundTrip(8, c, false)
	if sec[0] != 0 || p.enc.table.insertCount() != 2 {
		t.Errorf("inserted over referenced entries: prefix %x, inserts %d", sec[:2], p.enc.table.insertCount())
	}
	// After acknowledgments the oldest entry can go.
	p.ack()
	sec = p.roundTrip(12, c, true)
	if sec[0] == 0 || p.enc.table.insertCount() != 3 || p.enc.table.dropped != 1 {
		t.Errorf("no insert after acks: prefix %x, inserts %d, dropped %d", sec[:2], p.enc.table.insertCount(), p.enc.table.dropped)
	}
}

// TestEncoderDuplicatesDrainingEntry: an entry in the oldest quarter of the
// table is not referenced; a Duplicate is referenced instead (Section
// 2.1.1.1).
func TestEncoderDuplicatesDrainingEntry(t *testing.T) {
	p := newPair(t, 256, 10)
	hot := []HeaderField{{Name: ":authority", Value: "hot.example"}} // 53 bytes
	p.roundTrip(0, hot, true)
	// Push it into the draining zone with newer entries (3 x 64 = 192 >= 192).
	for i, v := range []string{"x1", "x2", "x3"} {
		f := []HeaderField{{Name: "user-agent", Value: v + strings.Repeat("-", 20)}}
		p.roundTrip(uint64(4+4*i), f, true)
	}
	if p.enc.table.drainingIndex() == 0 {
		t.Fatalf("entry 0 is not draining")
	}
	p.enc.AppendEncoderStream(nil)
	before := p.enc.table.insertCount()
	sec := p.enc.EncodeFieldSection(nil, 100, hot)
	ins := p.enc.AppendEncoderStream(nil)
	if len(ins) != 1 || ins[0]&0xe0 != 0 {
		t.Fatalf("encoder stream %x, want one Duplicate", ins)
	}
	if err := p.dec.HandleEncoderStream(ins); err != nil {
		t.Fatal(err)
	}
	got, err := p.dec.DecodeFieldSection(100, sec, nil)
	if err != nil || !reflect.DeepEqual(got, hot) {
		t.Fatalf("%v, %v", got, err)
	}
	if p.enc.table.insertCount() != before+1 {
		t.Error("no entry added")
	}
}

func TestEncoderNeverIndex(t *testing.T) {
	p := newPair(t, 4096, 10)
	secret := []HeaderField{
		{Name: "authorization", Value: "Basic dXNlcjpwYXNz", NeverIndex: true},
		{Name: "x-token", Value: "t0k3n", NeverIndex: true},
		{Name: ":method", Value: "GET", NeverIndex: true}, // even a static match stays literal
	}
	for i := uint64(0); i < 3; i++ {
		sec := p.roundTrip(i*4, secret, true)
		if sec[0] != 0 {
			t.Errorf("sensitive section references the dynamic table: %x", sec)
		}
	}
	if p.enc.table.insertCount() != 0 {
		t.Errorf("%d sensitive entries inserted", p.enc.table.insertCount())
	}
}

func TestEncoderHuffmanChoice(t *testing.T) {
	e := NewEncoder(EncoderConfig{})
	// "www.example.com" is 12 bytes in Huffman: the H bit is set.
	sec := e.EncodeFieldSection(nil, 0, []HeaderField{{Name: ":authority", Value: "www.example.com"}})
	want := append([]byte{0, 0, 0x50, 0x8c}, unhex(t, "f1e3 c2e5 f23a 6ba0 ab90 f4ff")...)
	if !bytes.Equal(sec, want) {
		t.Errorf("got %x, want %x", sec, want)
	}
	// Bytes with long codes stay raw.
	sec = e.EncodeFieldSection(nil, 0, []HeaderField{{Name: ":authority", Value: "\x00\x01"}})
	if !bytes.Equal(sec, []byte{0, 0, 0x50, 0x02, 0x00, 0x01}) {
		t.Errorf("got %x", sec)
	}
}

// TestEncoderDuplicateNonBlocking: without blocked streams the duplicate of
// a draining entry is sent ahead and used once acknowledged.
func TestEncoderDuplicateNonBlocking(t *testing.T) {
	p := newPair(t, 256, 0)
	hot := []HeaderField{{Name: ":authority", Value: "hot.example"}}
	p.roundTrip(0, hot, true)
	p.roundTrip(0, hot, true) // now acknowledged and referenced
	for i, v := range []string{"x1", "x2", "x3"} {
		f := []HeaderField{{Name: "user-agent", Value: v + strings.Repeat("-", 20)}}
		p.roundTrip(uint64(4+4*i), f, true)
	}
	sec := p.roundTrip(100, hot, false)
	if sec[0] != 0 {
		t.Errorf("section references a draining or unacknowledged entry: %x", sec)
	}
	p.ack()
	sec = p.roundTrip(104, hot, true)
	if len(sec) != 3 || sec[0] == 0 {
		t.Errorf("duplicate not used after acknowledgment: %x", sec)
	}
}

// TestEncoderUnackedSectionLimit: a decoder that never acknowledges field
// sections cannot make the encoder track unbounded state.
func TestEncoderUnackedSectionLimit(t *testing.T) {
	p := newPair(t, 4096, 0)
	p.roundTrip(0, typicalRequest, true)
	p.roundTrip(4, typicalRequest, false)
	// Only Insert Count Increments from now on.
	for i := uint64(2); i < maxUnackedSections+100; i++ {
		sec := p.enc.EncodeFieldSection(nil, 4*i, typicalRequest)
		if i > maxUnackedSections+10 && sec[0] != 0 {
			t.Fatalf("section %d references the dynamic table with %d sections unacknowledged", i, p.enc.table.numSections)
		}
	}
	if n := p.enc.table.numSections; n > maxUnackedSections {
		t.Errorf("%d sections tracked", n)
	}
}

// Defect 15 of issue 22: the encoder's bookkeeping of outstanding field
// sections costs the same per section however many are outstanding. A
// decoder that advertises 2^20 blocked streams, never acknowledges and
// cancels one stream per request keeps hundreds of blocking sections
// outstanding; encoding a section and handling a Stream Cancellation
// examine a bounded number of section records, not all of them (and not
// all pairs of them).
func TestEncoderBookkeepingCostPerSection(t *testing.T) {
	for _, outstanding := range []int{16, 512} {
		p := newPair(t, 4096, 1<<20)
		fields := []HeaderField{{Name: ":authority", Value: "www.example.com"}, {Name: ":status", Value: "200"}}
		id := uint64(0)
		for range outstanding {
			if sec := p.enc.EncodeFieldSection(nil, id, fields); sec[0] == 0 && id > 0 {
				t.Fatal("the section does not reference the unacknowledged entry")
			}
			id += 4
		}
		if n := p.enc.BlockedStreams(); n != outstanding {
			t.Fatalf("%d blocked streams, want %d", n, outstanding)
		}
		p.enc.table.visited = 0
		oldest := uint64(0)
		const requests = 100
		for range requests {
			p.enc.EncodeFieldSection(nil, id, fields)
			id += 4
			p.enc.HandleDecoderStream(appendInt(nil, 6, 0x40, oldest))
			oldest += 4
		}
		if n := p.enc.BlockedStreams(); n != outstanding {
			t.Fatalf("%d blocked streams, want %d", n, outstanding)
		}
		if per := p.enc.table.visited / requests; per > 16 {
			t.Errorf("%d outstanding sections: %d section records examined per request", outstanding, per)
		}
	}
}
