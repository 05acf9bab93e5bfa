package http3

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

func TestCapsuleRoundTrip(t *testing.T) {
	var b []byte
	caps := []Capsule{
		{Type: CapsuleTypeDatagram, Value: []byte("datagram")},
		{Type: 0x2a, Value: nil},
		{Type: 1<<62 - 1, Value: bytes.Repeat([]byte{7}, 300)},
	}
	for _, c := range caps {
		b = AppendCapsule(b, c.Type, c.Value)
	}
	// From a byte slice.
	rest := b
	for i, want := range caps {
		c, n, err := ParseCapsule(rest, 0)
		if err != nil || c.Type != want.Type || !bytes.Equal(c.Value, want.Value) {
			t.Fatalf("capsule %d: %+v %v", i, c, err)
		}
		rest = rest[n:]
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left", len(rest))
	}
	// From a stream.
	br := bufio.NewReader(bytes.NewReader(b))
	for i, want := range caps {
		c, err := ReadCapsule(br, 0)
		if err != nil || c.Type != want.Type || !bytes.Equal(c.Value, want.Value) {
			t.Fatalf("read capsule %d: %+v %v", i, c, err)
		}
	}
	if _, err := ReadCapsule(br, 0); err != io.EOF {
		t.Fatalf("at the end: %v", err)
	}
}

func TestCapsuleErrors(t *testing.T) {
	full := AppendCapsule(nil, 0x1234, []byte("hello"))
	for i := 1; i < len(full); i++ {
		if _, _, err := ParseCapsule(full[:i], 0); err != ErrCapsuleTruncated {
			t.Errorf("ParseCapsule of %d bytes: %v", i, err)
		}
		if _, err := ReadCapsule(bufio.NewReader(bytes.NewReader(full[:i])), 0); err != ErrCapsuleTruncated {
			t.Errorf("ReadCapsule of %d bytes: %v", i, err)
		}
	}
	if _, _, err := ParseCapsule(full, 4); err != ErrCapsuleTooLarge {
		t.Errorf("limit 4: %v", err)
	}
	// A huge declared length is refused before anything is allocated.
	huge := append(appendVarint(nil, 0), appendVarint(nil, 1<<61)...)
	if _, err := ReadCapsule(bufio.NewReader(bytes.NewReader(huge)), 0); err != ErrCapsuleTooLarge {
		t.Errorf("huge length: %v", err)
	}
}

func FuzzParseCapsule(f *testing.F) {
	f.Add(AppendCapsule(nil, 0, []byte("x")))
	f.Add(AppendCapsule(AppendCapsule(nil, 0x40, nil), 7, []byte("abc")))
	f.Add([]byte{0xc0, 0, 0, 0, 0, 0, 0, 1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, n, err := ParseCapsule(b, 1024)
		r, rerr := ReadCapsule(bufio.NewReader(bytes.NewReader(b)), 1024)
		if err != nil {
			if rerr == nil && len(b) > 0 {
				t.Fatalf("ParseCapsule: %v, ReadCapsule: nil", err)
			}
			return
		}
		if rerr != nil || r.Type != c.Type || !bytes.Equal(r.Value, c.Value) {
			t.Fatalf("ReadCapsule disagrees: %+v %v vs %+v", r, rerr, c)
		}
		if len(c.Value) > 1024 || n > len(b) {
			t.Fatalf("capsule %d bytes, consumed %d of %d", len(c.Value), n, len(b))
		}
		// Round trip: re-encoding gives back a capsule that parses the same
		// (the encoding may be shorter: varints need not be minimal).
		again := AppendCapsule(nil, c.Type, c.Value)
		c2, n2, err := ParseCapsule(again, 1024)
		if err != nil || n2 != len(again) || c2.Type != c.Type || !bytes.Equal(c2.Value, c.Value) {
			t.Fatalf("round trip: %+v %v", c2, err)
		}
	})
}
