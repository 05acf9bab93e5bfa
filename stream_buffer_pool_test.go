package quic

import "testing"

// Rings of the pooled sizes come back from the pool cleared; others are
// made and left to the garbage collector.
func TestRingPool(t *testing.T) {
	for _, n := range []int{512, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 3000} {
		b := getRing(n)
		if len(b) != n {
			t.Fatalf("getRing(%d) returned %d bytes", n, len(b))
		}
		for i := range b {
			b[i] = 0xaa
		}
		putRing(b)
		if c := getRing(n); c[0] != 0 || c[n-1] != 0 {
			t.Errorf("getRing(%d) after putRing: not cleared", n)
		}
	}
}

// A CRYPTO stream's send ring goes back to the pool when it is dropped
// and when everything written was acknowledged; the stream works the
// same either way.
func TestCryptoSendRingPooled(t *testing.T) {
	var sp packetSpace
	cs := sp.cryptoStream()
	data := bufTestData(nil, 0, 1500)
	if n := cs.send.write(data); n != len(data) {
		t.Fatalf("write accepted %d of %d bytes", n, len(data))
	}
	if len(cs.send.buf) != 2<<10 {
		t.Fatalf("ring of %d bytes, want 2 KB", len(cs.send.buf))
	}
	off, got, _, ok := cs.send.nextFrame(2000)
	if !ok || off != 0 || string(got) != string(data) {
		t.Fatalf("nextFrame = %d, %d bytes, %v", off, len(got), ok)
	}
	cs.send.onAcked(0, len(data), false)
	if !cs.send.shrink() || cs.send.buf != nil {
		t.Fatal("acknowledged ring not released")
	}
	cs.send.write(data[:100])
	sp.dropCrypto()
	if sp.crypto != nil {
		t.Fatal("CRYPTO stream kept after dropCrypto")
	}
}
