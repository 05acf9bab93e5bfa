package quiclb

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/quicstack/quic/wire"
)

var testKey = []byte("0123456789abcdef")

// TestGeneratorRoundTrip generates connection IDs with every valid length
// pair, with and without a key, and decodes each back to its server ID
// and a nonce that never repeats.
func TestGeneratorRoundTrip(t *testing.T) {
	for _, key := range [][]byte{nil, testKey} {
		for sl := MinServerIDLen; sl <= MaxPlaintext-MinNonceLen; sl++ {
			for nl := MinNonceLen; sl+nl <= MaxPlaintext; nl++ {
				c := Config{ID: uint8(sl % 7), ServerIDLen: sl, NonceLen: nl, Key: key}
				sid := bytes.Repeat([]byte{0xa5}, sl)
				sid[0] = byte(sl)
				g, err := NewGenerator(c, sid)
				if err != nil {
					t.Fatal(err)
				}
				d, err := NewDecoder(c)
				if err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				for range 50 {
					cid, err := g.GenerateConnectionID()
					if err != nil {
						t.Fatal(err)
					}
					b := cid.Bytes()
					if len(b) != g.ConnectionIDLen() || len(b) != c.Len() {
						t.Fatalf("%+v: length %d", c, len(b))
					}
					if b[0]>>5 != c.ID || int(b[0]&0x1f) != sl+nl {
						t.Fatalf("%+v: first octet %#x", c, b[0])
					}
					got, err := d.ServerID(nil, b)
					if err != nil || !bytes.Equal(got, sid) {
						t.Fatalf("%+v: server ID %x, %v; want %x", c, got, err, sid)
					}
					pt, _ := d.Plaintext(nil, b)
					if !bytes.Equal(pt[:sl], sid) || seen[string(pt[sl:])] {
						t.Fatalf("%+v: plaintext %x (nonce repeated: %v)", c, pt, seen[string(pt[sl:])])
					}
					seen[string(pt[sl:])] = true
					if key != nil && bytes.Contains(b, sid) && sl > 2 {
						t.Fatalf("%+v: server ID %x in the clear in %x", c, sid, b)
					}
				}
			}
		}
	}
}

// TestGeneratorEncryptedNonceCounter checks that with a key the nonce is
// a counter from a random start (Section 9.6), and that two generators
// start at different values.
func TestGeneratorEncryptedNonceCounter(t *testing.T) {
	c := Config{ServerIDLen: 2, NonceLen: 6, Key: testKey}
	d, _ := NewDecoder(c)
	nonce := func(g *Generator) uint64 {
		cid, _ := g.GenerateConnectionID()
		pt, err := d.Plaintext(nil, cid.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var v uint64
		for _, x := range pt[2:] {
			v = v<<8 | uint64(x)
		}
		return v
	}
	g1, _ := NewGenerator(c, []byte{1, 2})
	g2, _ := NewGenerator(c, []byte{1, 2})
	a, b := nonce(g1), nonce(g1)
	if b != (a+1)&(1<<48-1) {
		t.Errorf("nonces %x then %x, want a counter", a, b)
	}
	if x, y := nonce(g2), nonce(g2); x == a && y == b {
		t.Errorf("two generators start at the same nonce %x", x)
	}
}

// TestGeneratorExhausted checks that a generator that used every nonce
// issues unroutable connection IDs instead of reusing one: "Whether or
// not it implements the counter method, the server MUST NOT reuse a nonce
// until it switches to a configuration with new keys" (Section 9.6).
func TestGeneratorExhausted(t *testing.T) {
	c := Config{ID: 2, ServerIDLen: 1, NonceLen: 4, Key: testKey}
	g, _ := NewGenerator(c, []byte{9})
	st := g.st.Load()
	st.next.Store(st.limit - 2) // all but two nonces used
	d, _ := NewDecoder(c)
	for i := range 2 {
		if g.Exhausted() {
			t.Fatalf("exhausted with %d nonces left", 2-i)
		}
		cid, _ := g.GenerateConnectionID()
		if sid, err := d.ServerID(nil, cid.Bytes()); err != nil || sid[0] != 9 {
			t.Fatalf("ID %d before exhaustion: %x, %v", i, sid, err)
		}
	}
	for range 3 {
		cid, _ := g.GenerateConnectionID()
		b := cid.Bytes()
		if b[0]>>5 != UnroutableConfigID || int(b[0]&0x1f) != len(b)-1 || len(b) != c.Len() {
			t.Fatalf("after exhaustion: %x, want an unroutable ID of %d bytes", b, c.Len())
		}
		if _, err := d.ServerID(nil, b); !errors.Is(err, ErrUnroutable) {
			t.Fatalf("decoding an unroutable ID: %v", err)
		}
	}
	if !g.Exhausted() {
		t.Fatal("Exhausted() = false")
	}
	c2 := Config{ID: 3, ServerIDLen: 1, NonceLen: 4, Key: []byte("fedcba9876543210")}
	if err := g.SetConfig(c2, []byte{9}); err != nil {
		t.Fatal(err)
	}
	d2, _ := NewDecoder(c, c2)
	cid, _ := g.GenerateConnectionID()
	if sid, err := d2.ServerID(nil, cid.Bytes()); err != nil || sid[0] != 9 || cid.Bytes()[0]>>5 != 3 {
		t.Fatalf("after SetConfig: %x, %v", cid, err)
	}
	if g.Exhausted() {
		t.Error("still exhausted after SetConfig")
	}
}

// TestGeneratorSetConfigKeepsLength refuses a configuration that would
// change the connection ID length, which a Transport parses short
// headers with.
func TestGeneratorSetConfigKeepsLength(t *testing.T) {
	g, _ := NewGenerator(Config{ServerIDLen: 2, NonceLen: 6}, []byte{1, 2})
	if err := g.SetConfig(Config{ID: 1, ServerIDLen: 2, NonceLen: 7}, []byte{1, 2}); err == nil {
		t.Error("SetConfig accepted a longer connection ID")
	}
	if err := g.SetConfig(Config{ID: 1, ServerIDLen: 3, NonceLen: 5}, []byte{1, 2, 3}); err != nil {
		t.Error(err)
	}
	if g.Config().ID != 1 {
		t.Error("Config() did not change")
	}
}

// TestConfigValidate rejects the configurations Section 5.3 forbids.
func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{ID: 7, ServerIDLen: 1, NonceLen: 4},
		{ServerIDLen: 0, NonceLen: 4},
		{ServerIDLen: 1, NonceLen: 3},
		{ServerIDLen: 10, NonceLen: 10},
		{ServerIDLen: 1, NonceLen: 4, Key: make([]byte, 15)},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
		if _, err := NewGenerator(c, make([]byte, c.ServerIDLen)); err == nil {
			t.Errorf("NewGenerator(%+v) succeeded", c)
		}
	}
	if _, err := NewGenerator(Config{ServerIDLen: 2, NonceLen: 4}, []byte{1}); err == nil {
		t.Error("NewGenerator accepted a server ID of the wrong length")
	}
	if _, err := NewDecoder(Config{ServerIDLen: 2, NonceLen: 4}, Config{ServerIDLen: 3, NonceLen: 4}); err == nil {
		t.Error("NewDecoder accepted two configurations with one ID")
	}
}

// TestDecoderUnroutable checks each reason of Section 4.1.
func TestDecoderUnroutable(t *testing.T) {
	c := Config{ID: 1, ServerIDLen: 2, NonceLen: 4, Key: testKey}
	d, _ := NewDecoder(c)
	u7 := Unroutable(7)
	for _, cid := range [][]byte{
		nil,
		{0xe6, 1, 2, 3, 4, 5, 6},       // 0b111
		{0x06, 1, 2, 3, 4, 5, 6},       // config 0: not configured
		{0x26, 1, 2, 3, 4, 5},          // config 1, one byte short
		u7.Bytes(),                     // a server without configuration
		{0xff, 0xff, 0xff, 0xff, 0xff}, // garbage
	} {
		if sid, err := d.ServerID(nil, cid); !errors.Is(err, ErrUnroutable) {
			t.Errorf("ServerID(%x) = %x, %v; want ErrUnroutable", cid, sid, err)
		}
	}
	u := Unroutable(9)
	if b := u.Bytes(); len(b) != 9 || b[0] != 0xe0|8 {
		t.Errorf("Unroutable(9) = %x", b)
	}
}

// TestGeneratorConcurrent generates from many goroutines at once (run
// with -race) and checks that no two IDs are equal.
func TestGeneratorConcurrent(t *testing.T) {
	g, _ := NewGenerator(Config{ServerIDLen: 2, NonceLen: 4, Key: testKey}, []byte{7, 7})
	var mu sync.Mutex
	seen := map[wire.ConnectionID]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				cid, _ := g.GenerateConnectionID()
				mu.Lock()
				if seen[cid] {
					t.Errorf("duplicate %v", cid)
				}
				seen[cid] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestAllocs checks "0 allocations per ID": generating and decoding
// allocate nothing.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items; make test runs this without it")
	}
	for _, c := range []Config{
		{ServerIDLen: 2, NonceLen: 4},
		{ServerIDLen: 8, NonceLen: 8, Key: testKey},
		{ServerIDLen: 3, NonceLen: 4, Key: testKey},
		{ServerIDLen: 10, NonceLen: 5, Key: testKey},
	} {
		g, _ := NewGenerator(c, make([]byte, c.ServerIDLen))
		d, _ := NewDecoder(c)
		cid, _ := g.GenerateConnectionID()
		buf := make([]byte, 0, 20)
		if n := testing.AllocsPerRun(100, func() { cid, _ = g.GenerateConnectionID() }); n != 0 {
			t.Errorf("%+v: GenerateConnectionID allocates %v times", c, n)
		}
		if n := testing.AllocsPerRun(100, func() { d.ServerID(buf[:0], cid.Bytes()) }); n != 0 {
			t.Errorf("%+v: ServerID allocates %v times", c, n)
		}
		bad := []byte{0xe0, 1}
		if n := testing.AllocsPerRun(100, func() { d.ServerID(buf[:0], bad) }); n != 0 {
			t.Errorf("%+v: ServerID of an unroutable ID allocates %v times", c, n)
		}
	}
}
