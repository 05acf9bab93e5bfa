package qpack

import (
	"testing"
)

// warmPair returns an encoder and decoder that have exchanged the typical
// request a few times with acknowledgments, so that the dynamic table holds
// its repeated fields and every buffer has grown to size.
func warmPair(t testing.TB) *pair {
	p := newPair(t, 4096, 16)
	for i := uint64(0); i < 4; i++ {
		p.roundTrip(i*4, typicalRequest, true)
	}
	return p
}

// TestEncodeDecodeAllocs: "Benchmarks report allocations; hot paths are at
// 0 allocs/op." Encoding a typical request with a warm encoder allocates
// nothing; decoding allocates at most one string for the section's literal
// bytes.
func TestEncodeDecodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts; checked in the non-race run")
	}
	p := warmPair(t)
	dst := make([]byte, 0, 512)
	out := make([]byte, 0, 64)
	ack := make([]byte, 0, 16)
	id := uint64(100)
	encAllocs := testing.AllocsPerRun(1000, func() {
		sec := p.enc.EncodeFieldSection(dst[:0], id, typicalRequest)
		out = p.enc.AppendEncoderStream(out[:0])
		// Keep the encoder's bookkeeping flat: the decoder acknowledges.
		if sec[0] != 0 {
			p.enc.HandleDecoderStream(appendInt(ack[:0], 7, 0x80, id))
		}
	})
	if encAllocs != 0 {
		t.Errorf("EncodeFieldSection: %v allocs, want 0", encAllocs)
	}

	sec := p.enc.EncodeFieldSection(nil, id, typicalRequest)
	if err := p.dec.HandleEncoderStream(p.enc.AppendEncoderStream(nil)); err != nil {
		t.Fatal(err)
	}
	fields := make([]HeaderField, 0, 16)
	var ds []byte
	decAllocs := testing.AllocsPerRun(1000, func() {
		var err error
		fields, err = p.dec.DecodeFieldSection(id, sec, fields[:0])
		if err != nil {
			t.Fatal(err)
		}
		ds = p.dec.AppendDecoderStream(ds[:0])
	})
	if decAllocs > 1 {
		t.Errorf("DecodeFieldSection: %v allocs, want at most 1", decAllocs)
	}
	t.Logf("encode %v allocs, decode %v allocs; section %d bytes", encAllocs, decAllocs, len(sec))

	// A fully indexed section decodes without allocating.
	idx := []HeaderField{typicalRequest[0], typicalRequest[1], typicalRequest[2], typicalRequest[4], typicalRequest[6]}
	sec = p.enc.EncodeFieldSection(nil, id, idx)
	p.dec.HandleEncoderStream(p.enc.AppendEncoderStream(nil))
	if n := testing.AllocsPerRun(1000, func() {
		fields, _ = p.dec.DecodeFieldSection(id, sec, fields[:0])
	}); n != 0 {
		t.Errorf("indexed section: %v allocs, want 0", n)
	}
}

func BenchmarkEncodeRequest(b *testing.B) {
	p := warmPair(b)
	dst := make([]byte, 0, 512)
	out := make([]byte, 0, 64)
	ack := make([]byte, 0, 16)
	b.SetBytes(int64(len(p.enc.EncodeFieldSection(nil, 0, typicalRequest))))
	p.enc.HandleDecoderStream([]byte{0x80})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := uint64(i) * 4
		sec := p.enc.EncodeFieldSection(dst[:0], id, typicalRequest)
		out = p.enc.AppendEncoderStream(out[:0])
		if sec[0] != 0 {
			p.enc.HandleDecoderStream(appendInt(ack[:0], 7, 0x80, id))
		}
	}
}

func BenchmarkDecodeRequest(b *testing.B) {
	p := warmPair(b)
	sec := p.enc.EncodeFieldSection(nil, 100, typicalRequest)
	if err := p.dec.HandleEncoderStream(p.enc.AppendEncoderStream(nil)); err != nil {
		b.Fatal(err)
	}
	fields := make([]HeaderField, 0, 16)
	var ds []byte
	b.SetBytes(int64(len(sec)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		fields, err = p.dec.DecodeFieldSection(100, sec, fields[:0])
		if err != nil {
			b.Fatal(err)
		}
		ds = p.dec.AppendDecoderStream(ds[:0])
	}
}

// BenchmarkEncodeRequestStatic is the first request of a connection: no
// dynamic table yet, static table and Huffman-coded literals only.
func BenchmarkEncodeRequestStatic(b *testing.B) {
	e := NewEncoder(EncoderConfig{})
	dst := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		dst = e.EncodeFieldSection(dst[:0], 0, typicalRequest)
	}
}

func BenchmarkDecodeRequestStatic(b *testing.B) {
	sec := NewEncoder(EncoderConfig{}).EncodeFieldSection(nil, 0, typicalRequest)
	d := NewDecoder(DecoderConfig{})
	fields := make([]HeaderField, 0, 16)
	b.SetBytes(int64(len(sec)))
	b.ReportAllocs()
	for b.Loop() {
		fields, _ = d.DecodeFieldSection(0, sec, fields[:0])
	}
}

func BenchmarkHuffmanDecode(b *testing.B) {
	s := appendHuffman(nil, typicalRequest[4].Value)
	var out []byte
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		out, _ = appendHuffmanDecode(out[:0], s)
	}
}
