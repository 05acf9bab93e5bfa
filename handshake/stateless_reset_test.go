package handshake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"testing"

	"github.com/quicstack/quic/wire"
)

func TestStatelessResetToken(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	s, err := NewStatelessResetter(key)
	if err != nil {
		t.Fatal(err)
	}
	cid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	// The token is HMAC-SHA256(key, cid) truncated to 16 bytes.
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	want := mac.Sum(nil)[:16]
	got := s.Token(cid)
	if !bytes.Equal(got[:], want) {
		t.Fatalf("Token = %x; want %x", got, want)
	}
	// A second resetter with the same key (another server of the fleet)
	// derives the same token; a different key or ID does not.
	s2, _ := NewStatelessResetter(key)
	if s2.Token(cid) != got {
		t.Fatal("same key gave a different token")
	}
	s3, _ := NewStatelessResetter(bytes.Repeat([]byte{8}, 32))
	if s3.Token(cid) == got || s.Token(wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7})) == got {
		t.Fatal("different key or connection ID gave the same token")
	}
	if a := testing.AllocsPerRun(100, func() { s.Token(cid) }); a != 0 && !raceEnabled {
		t.Fatalf("Token allocated %v times", a)
	}
	if _, err := NewStatelessResetter(nil); err == nil {
		t.Fatal("empty key accepted")
	}
}

func TestIsStatelessReset(t *testing.T) {
	var tok wire.StatelessResetToken
	copy(tok[:], "0123456789abcdef")
	dgram := append(bytes.Repeat([]byte{0x40}, 5), tok[:]...)
	if !IsStatelessReset(dgram, tok) {
		t.Fatal("21-byte reset not recognised")
	}
	if IsStatelessReset(dgram[1:], tok) {
		t.Fatal("20-byte datagram treated as a reset")
	}
	dgram[len(dgram)-1] ^= 1
	if IsStatelessReset(dgram, tok) {
		t.Fatal("wrong token accepted")
	}
}
