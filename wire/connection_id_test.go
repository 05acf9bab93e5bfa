package wire

import (
	"bytes"
	"testing"
)

func TestConnectionIDValue(t *testing.T) {
	raw := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	a := NewConnectionID(raw)
	raw[0] = 9 // NewConnectionID copies
	b := NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	if a != b {
		t.Fatal("equal connection IDs compare unequal")
	}
	if a.Len() != 8 || !bytes.Equal(a.Bytes(), []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("Len/Bytes = %d/%x", a.Len(), a.Bytes())
	}
	if !a.Equal([]byte{1, 2, 3, 4, 5, 6, 7, 8}) || a.Equal([]byte{1, 2, 3}) {
		t.Fatal("Equal is wrong")
	}
	// A shorter ID that is a prefix is a different ID.
	if NewConnectionID([]byte{1, 2, 3}) == NewConnectionID([]byte{1, 2, 3, 0}) {
		t.Fatal("IDs of different length compare equal")
	}
	if (ConnectionID{}).String() != "(empty)" || a.String() != "0102030405060708" {
		t.Fatalf("String = %q", a.String())
	}
	m := map[ConnectionID]int{a: 1}
	if m[b] != 1 {
		t.Fatal("map lookup failed")
	}
	allocs := testing.AllocsPerRun(100, func() {
		id := NewConnectionID(raw)
		_ = m[id]
	})
	if allocs != 0 {
		t.Fatalf("map lookup by ConnectionID allocated %v times", allocs)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("21-byte connection ID did not panic")
		}
	}()
	NewConnectionID(make([]byte, 21))
}
