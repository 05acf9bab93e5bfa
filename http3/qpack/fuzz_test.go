package qpack

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

const (
	fuzzCapacity   = 4096
	fuzzBlocked    = 4
	fuzzMaxSection = 16 << 10
)

// checkDecoderTable checks the decoder's table invariants: the size is the
// sum of the entry sizes and within the capacity, which is within the
// maximum.
func checkDecoderTable(t *testing.T, d *Decoder) {
	t.Helper()
	tbl := &d.table
	var size uint64
	for i := tbl.head; i < len(tbl.ents); i++ {
		size += entrySize(tbl.ents[i].name, tbl.ents[i].value)
	}
	if size != tbl.size || tbl.size > tbl.capacity || tbl.capacity > d.maxCap {
		t.Fatalf("table size %d (recorded %d), capacity %d, maximum %d", size, tbl.size, tbl.capacity, d.maxCap)
	}
	if uint64(len(d.blocked)) > d.maxBlocked {
		t.Fatalf("%d blocked streams, maximum %d", len(d.blocked), d.maxBlocked)
	}
	// An incomplete instruction is never longer than a valid one could be.
	if bound := 4*tbl.capacity + 64; uint64(len(d.partial)) > bound {
		t.Fatalf("partial instruction of %d bytes, bound %d", len(d.partial), bound)
	}
}

// FuzzDecodeFieldSection decodes an arbitrary field section against a
// dynamic table built from an arbitrary encoder stream.
func FuzzDecodeFieldSection(f *testing.F) {
	f.Add(unhex(f, exB2Encoder), unhex(f, exB2Stream4))
	f.Add(unhex(f, exB2Encoder+exB3Encoder+exB4Encoder), unhex(f, exB4Stream8))
	f.Add([]byte{}, unhex(f, exB1Stream0))
	f.Fuzz(func(t *testing.T, encStream, section []byte) {
		d := NewDecoder(DecoderConfig{MaxTableCapacity: fuzzCapacity, MaxBlockedStreams: fuzzBlocked, MaxFieldSectionSize: fuzzMaxSection})
		encErr := d.HandleEncoderStream(encStream)
		checkDecoderTable(t, d)
		prefix := []HeaderField{{Name: "keep", Value: "me"}}
		got, err := d.DecodeFieldSection(4, section, prefix)
		checkDecoderTable(t, d)
		if len(got) < 1 || got[0] != prefix[0] {
			t.Fatalf("dst prefix lost: %v", got)
		}
		switch {
		case encErr != nil:
			if err != encErr {
				t.Fatalf("decoding after an encoder stream error: %v", err)
			}
			return
		case err == ErrBlocked, err == ErrFieldSectionTooLarge:
			if len(got) != 1 {
				t.Fatalf("%v with %d fields", err, len(got))
			}
			return
		case err != nil:
			if !errors.Is(err, ErrDecompressionFailed) || len(got) != 1 {
				t.Fatalf("unexpected error %v (%d fields)", err, len(got))
			}
			return
		}
		got = got[1:]
		var size uint64
		for _, hf := range got {
			size += hf.Size()
		}
		if size > fuzzMaxSection {
			t.Fatalf("decoded %d bytes, limit %d", size, fuzzMaxSection)
		}
		// Decoding is repeatable and the result survives a round trip
		// through a fresh encoder.
		again, err := d.DecodeFieldSection(8, section, nil)
		if err != nil || !reflect.DeepEqual(normalise(again), normalise(got)) {
			t.Fatalf("second decode: %v, %v", again, err)
		}
		e := NewEncoder(EncoderConfig{})
		re := e.EncodeFieldSection(nil, 0, got)
		back, err := NewDecoder(DecoderConfig{}).DecodeFieldSection(0, re, nil)
		if err != nil || !reflect.DeepEqual(normalise(back), normalise(got)) {
			t.Fatalf("round trip: %v, %v; want %v", back, err, got)
		}
	})
}

// FuzzEncoderStream processes an arbitrary encoder stream at the decoder,
// whole and in chunks: both must reach the same verdict and table.
func FuzzEncoderStream(f *testing.F) {
	f.Add(unhex(f, exB2Encoder+exB3Encoder+exB4Encoder+exB5Encoder), uint8(1))
	f.Add(unhex(f, exB2Encoder), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		whole := NewDecoder(DecoderConfig{MaxTableCapacity: fuzzCapacity, MaxBlockedStreams: fuzzBlocked})
		errWhole := whole.HandleEncoderStream(data)
		checkDecoderTable(t, whole)

		chunked := NewDecoder(DecoderConfig{MaxTableCapacity: fuzzCapacity, MaxBlockedStreams: fuzzBlocked})
		var errChunked error
		n := int(step%16) + 1
		for rest := data; len(rest) > 0 && errChunked == nil; {
			k := min(n, len(rest))
			errChunked = chunked.HandleEncoderStream(rest[:k])
			checkDecoderTable(t, chunked)
			rest = rest[k:]
		}
		if (errWhole == nil) != (errChunked == nil) {
			t.Fatalf("whole: %v; chunked by %d: %v", errWhole, n, errChunked)
		}
		if errWhole != nil {
			if !errors.Is(errWhole, ErrEncoderStream) || !errors.Is(errChunked, ErrEncoderStream) {
				t.Fatalf("unexpected errors %v, %v", errWhole, errChunked)
			}
			return
		}
		if !reflect.DeepEqual(tableContents(&whole.table), tableContents(&chunked.table)) ||
			whole.table.insertCount() != chunked.table.insertCount() ||
			string(whole.partial) != string(chunked.partial) {
			t.Fatal("whole and chunked processing disagree")
		}
		// The decoder acknowledges every insertion.
		out := whole.AppendDecoderStream(nil)
		if ic := whole.table.insertCount(); ic > 0 {
			inc, m, err := readInt(out, 6)
			if err != nil || m != len(out) || inc != ic {
				t.Fatalf("decoder stream %x for %d inserts", out, ic)
			}
		} else if len(out) != 0 {
			t.Fatalf("decoder stream %x without inserts", out)
		}
	})
}

// fuzzEncoderSetup returns an encoder with outstanding field sections on
// several streams and a decoder that has received everything.
func fuzzEncoderSetup(t testing.TB) (*Encoder, *Decoder) {
	e := NewEncoder(EncoderConfig{})
	e.SetPeerSettings(1024, 3)
	d := NewDecoder(DecoderConfig{MaxTableCapacity: 1024, MaxBlockedStreams: 3})
	gen := &fieldGen{rng: rand.New(rand.NewPCG(1, 2))}
	for i := uint64(0); i < 6; i++ {
		fields := gen.request()
		sec := e.EncodeFieldSection(nil, i*4%16, fields)
		if err := d.HandleEncoderStream(e.AppendEncoderStream(nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.DecodeFieldSection(i*4%16, sec, nil); err != nil {
			t.Fatal(err)
		}
	}
	d.AppendDecoderStream(nil) // the acknowledgments are replaced by the fuzzer's input
	return e, d
}

// FuzzDecoderStream processes an arbitrary decoder stream at the encoder.
func FuzzDecoderStream(f *testing.F) {
	f.Add([]byte{0x80, 0x84, 0x88, 0x01}, uint8(0))
	f.Add([]byte{0x40, 0x44, 0x02}, uint8(1))
	f.Add([]byte{0x00}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		e, d := fuzzEncoderSetup(t)
		n := int(step%8) + 1
		var err error
		for rest := data; len(rest) > 0 && err == nil; {
			k := min(n, len(rest))
			err = e.HandleDecoderStream(rest[:k])
			rest = rest[k:]
		}
		if err != nil && !errors.Is(err, ErrDecoderStream) {
			t.Fatalf("unexpected error %v", err)
		}
		checkEncoderRefs(t, e)
		if uint64(e.BlockedStreams()) > e.peerBlocked {
			t.Fatalf("%d blocked streams", e.BlockedStreams())
		}
		if len(e.partial) > maxIntContinuation+1 {
			t.Fatalf("partial decoder instruction of %d bytes", len(e.partial))
		}
		if err != nil {
			return
		}
		// Whatever the decoder stream said, the encoder keeps producing
		// sections the decoder can decode.
		gen := &fieldGen{rng: rand.New(rand.NewPCG(uint64(len(data)), 3))}
		for i := uint64(0); i < 3; i++ {
			fields := gen.request()
			sec := e.EncodeFieldSection(nil, 100+4*i, fields)
			if err := d.HandleEncoderStream(e.AppendEncoderStream(nil)); err != nil {
				t.Fatal(err)
			}
			got, err := d.DecodeFieldSection(100+4*i, sec, nil)
			if err != nil || !reflect.DeepEqual(got, fields) {
				t.Fatalf("decoded %v, %v; want %v", got, err, fields)
			}
			checkEncoderRefs(t, e)
		}
	})
}

// TestWriteFuzzCorpus regenerates the seed corpora under testdata/fuzz when
// QPACK_WRITE_CORPUS=1.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("QPACK_WRITE_CORPUS") != "1" {
		t.Skip("set QPACK_WRITE_CORPUS=1 to regenerate testdata/fuzz")
	}
	write := func(target, name string, args ...any) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s := "go test fuzz v1\n"
		for _, a := range args {
			switch v := a.(type) {
			case []byte:
				s += "[]byte(" + strconv.Quote(string(v)) + ")\n"
			case uint8:
				s += fmt.Sprintf("byte(%q)\n", rune(v))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b2, b3, b4, b5 := unhex(t, exB2Encoder), unhex(t, exB3Encoder), unhex(t, exB4Encoder), unhex(t, exB5Encoder)
	all := append(append(append(append([]byte{}, b2...), b3...), b4...), b5...)

	write("FuzzDecodeFieldSection", "appendix-b1", []byte{}, unhex(t, exB1Stream0))
	write("FuzzDecodeFieldSection", "appendix-b2", b2, unhex(t, exB2Stream4))
	write("FuzzDecodeFieldSection", "appendix-b4", append(append(append([]byte{}, b2...), b3...), b4...), unhex(t, exB4Stream8))
	write("FuzzDecodeFieldSection", "appendix-b4-blocked", append(append([]byte{}, b2...), b3...), unhex(t, exB4Stream8))
	// Sections from a live exchange, with the encoder stream before them.
	rng := rand.New(rand.NewPCG(5, 6))
	gen := &fieldGen{rng: rng}
	e := NewEncoder(EncoderConfig{})
	e.SetPeerSettings(fuzzCapacity, fuzzBlocked)
	var encStream []byte
	for i := 0; i < 6; i++ {
		fields := gen.request()
		if i%2 == 1 {
			fields = gen.response()
		}
		sec := e.EncodeFieldSection(nil, uint64(4*i), fields)
		encStream = e.AppendEncoderStream(encStream)
		write("FuzzDecodeFieldSection", fmt.Sprintf("exchange-%d", i), append([]byte{}, encStream...), sec)
		e.HandleDecoderStream(appendInt(nil, 7, 0x80, uint64(4*i)))
	}

	write("FuzzEncoderStream", "appendix-b", all, uint8(0))
	write("FuzzEncoderStream", "appendix-b-bytewise", all, uint8(16))
	write("FuzzEncoderStream", "exchange", encStream, uint8(5))
	write("FuzzEncoderStream", "huffman-literal", append(appendInt(nil, 5, 0x20, 4096),
		appendString(appendString(nil, 6, 0x40, "custom-key", true), 8, 0, "custom-value", true)...), uint8(3))

	write("FuzzDecoderStream", "acks", []byte{0x80, 0x84, 0x88, 0x8c, 0x80, 0x84}, uint8(0))
	write("FuzzDecoderStream", "cancel-and-increment", []byte{0x40, 0x44, 0x03, 0x48}, uint8(1))
	write("FuzzDecoderStream", "increment-all", []byte{0x3f, 0x00}, uint8(2))
	write("FuzzDecoderStream", "long-stream-id", appendInt(nil, 7, 0x80, 1<<40), uint8(3))
}
