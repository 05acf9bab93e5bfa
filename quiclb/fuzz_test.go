package quiclb

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecoder feeds arbitrary connection IDs to a decoder holding one
// configuration of each kind (plaintext, single-pass, four-pass odd and
// even, server ID longer than the nonce): it must never panic, must
// either return a server ID of the configuration's length or an
// ErrUnroutable, and what it decodes must encode back to the input.
func FuzzDecoder(f *testing.F) {
	configs := []Config{
		{ID: 0, ServerIDLen: 3, NonceLen: 4},
		{ID: 1, ServerIDLen: 8, NonceLen: 8, Key: testKey},
		{ID: 2, ServerIDLen: 3, NonceLen: 4, Key: testKey},
		{ID: 3, ServerIDLen: 4, NonceLen: 6, Key: testKey},
		{ID: 4, ServerIDLen: 10, NonceLen: 5, Key: testKey},
		{ID: 5, ServerIDLen: 9, NonceLen: 9, Key: testKey},
	}
	d, err := NewDecoder(configs...)
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range configs {
		g, _ := NewGenerator(c, bytes.Repeat([]byte{0x5a}, c.ServerIDLen))
		cid, _ := g.GenerateConnectionID()
		f.Add(cid.Bytes())
	}
	f.Add([]byte{})
	f.Add([]byte{0xe0})
	f.Add([]byte{0xc0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, cid []byte) {
		sid, err := d.ServerID(nil, cid)
		if err != nil {
			if !errors.Is(err, ErrUnroutable) {
				t.Fatalf("error %v does not wrap ErrUnroutable", err)
			}
			return
		}
		c := configs[cid[0]>>5]
		if len(sid) != c.ServerIDLen {
			t.Fatalf("server ID of %d bytes, want %d", len(sid), c.ServerIDLen)
		}
		pt, err := d.Plaintext(nil, cid)
		if err != nil || !bytes.Equal(pt[:c.ServerIDLen], sid) {
			t.Fatalf("Plaintext %x, %v disagrees with ServerID %x", pt, err, sid)
		}
		k, _ := newCodec(c)
		block := append([]byte(nil), pt...)
		k.encrypt(block, new(scratch))
		// Every mode is a bijection on the block, odd lengths included:
		// the padding nibbles are cleared halves, not ciphertext bits.
		if want := cid[1 : 1+len(block)]; !bytes.Equal(block, want) {
			t.Fatalf("re-encoding %x gave %x, want %x", pt, block, want)
		}
	})
}
