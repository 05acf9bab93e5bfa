package quic

import (
	"testing"
)

func TestRandomConnectionIDGeneratorDefault(t *testing.T) {
	var g RandomConnectionIDGenerator
	if got := g.ConnectionIDLen(); got != DefaultConnectionIDLen {
		t.Fatalf("zero value ConnectionIDLen = %d, want %d", got, DefaultConnectionIDLen)
	}
	seen := make(map[ConnectionID]bool)
	for range 100 {
		c, err := g.GenerateConnectionID()
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != DefaultConnectionIDLen {
			t.Fatalf("generated %d bytes, want %d", c.Len(), DefaultConnectionIDLen)
		}
		// "the same connection ID MUST NOT be issued more than once on the
		// same connection" (RFC 9000, Section 5.1): 64 random bits make a
		// repeat among 100 practically impossible.
		if seen[c] {
			t.Fatalf("repeated connection ID %v", c)
		}
		seen[c] = true
	}
}

func TestRandomConnectionIDGeneratorLengths(t *testing.T) {
	for n := 0; n <= 20; n++ {
		g := NewRandomConnectionIDGenerator(n)
		if g.ConnectionIDLen() != n {
			t.Fatalf("ConnectionIDLen = %d, want %d", g.ConnectionIDLen(), n)
		}
		c, err := g.GenerateConnectionID()
		if err != nil || c.Len() != n {
			t.Fatalf("n=%d: got %v (%d bytes), %v", n, c, c.Len(), err)
		}
	}
	for _, n := range []int{-1, 21} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewRandomConnectionIDGenerator(%d) did not panic", n)
				}
			}()
			NewRandomConnectionIDGenerator(n)
		}()
	}
}

func TestRandomConnectionIDGeneratorInterface(t *testing.T) {
	var _ ConnectionIDGenerator = (*RandomConnectionIDGenerator)(nil)
	var _ ConnectionIDGenerator = NewRandomConnectionIDGenerator(4)
}

func TestRandomConnectionIDGeneratorAlloc(t *testing.T) {
	g := NewRandomConnectionIDGenerator(8)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := g.GenerateConnectionID(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 && !connIDRaceEnabled {
		t.Errorf("GenerateConnectionID allocates %v times, want 0", allocs)
	}
}

func BenchmarkRandomConnectionIDGenerator(b *testing.B) {
	var g RandomConnectionIDGenerator
	b.ReportAllocs()
	for b.Loop() {
		g.GenerateConnectionID()
	}
}
