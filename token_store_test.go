package quic

import "testing"

func TestLRUTokenStore(t *testing.T) {
	s := NewLRUTokenStore(2, 2)
	s.Put("a", []byte("a1"))
	s.Put("a", []byte("a2"))
	s.Put("a", []byte("a3")) // drops a1
	s.Put("b", []byte("b1"))
	s.Put("c", []byte("c1")) // drops a, the least recently used
	if tok := s.Get("a"); tok != nil {
		t.Fatalf("a: %q", tok)
	}
	if tok := s.Get("c"); string(tok) != "c1" || s.Get("c") != nil {
		t.Fatalf("c: %q", tok)
	}
	s.Put("a", []byte("a4"))
	if string(s.Get("b")) != "b1" || string(s.Get("a")) != "a4" {
		t.Fatal("wrong tokens")
	}
}
