package netem

import (
	"testing"
	"time"
)

func TestLinkSerialisesAndDelays(t *testing.T) {
	// 8 Mbit/s: a 1000-byte datagram takes 1 ms on the wire.
	l := link{cfg: LinkConfig{Bandwidth: 8_000_000, Delay: 10 * time.Millisecond}}
	t0 := time.Unix(0, 0)
	for i := range 3 {
		at, ok := l.admit(t0, 1000)
		if !ok {
			t.Fatal("dropped without a queue limit")
		}
		want := t0.Add(time.Duration(i+1)*time.Millisecond + 10*time.Millisecond)
		if !at.Equal(want) {
			t.Errorf("datagram %d leaves at %v, want %v", i, at.Sub(t0), want.Sub(t0))
		}
	}
	// An idle link starts serialising at once.
	at, _ := l.admit(t0.Add(time.Second), 1000)
	if want := t0.Add(time.Second + 11*time.Millisecond); !at.Equal(want) {
		t.Errorf("after idle: leaves at %v, want %v", at.Sub(t0), want.Sub(t0))
	}
}

func TestLinkTailDrop(t *testing.T) {
	l := link{cfg: LinkConfig{Bandwidth: 8_000_000, Queue: 2}}
	t0 := time.Unix(0, 0)
	// One datagram on the serialiser and two queued fit; the fourth is
	// dropped.
	for i := range 3 {
		if _, ok := l.admit(t0, 1000); !ok {
			t.Fatalf("datagram %d dropped", i)
		}
	}
	if _, ok := l.admit(t0, 1000); ok {
		t.Fatal("fourth datagram admitted into a full queue")
	}
	if n := l.queued(t0); n != 3 {
		t.Fatalf("queued = %d, want 3", n)
	}
	// Once the first has left, there is room for one more.
	if _, ok := l.admit(t0.Add(time.Millisecond), 1000); !ok {
		t.Fatal("dropped after the queue drained by one")
	}
	if _, ok := l.admit(t0.Add(time.Millisecond), 1000); ok {
		t.Fatal("admitted past the limit")
	}
}

func TestLinkUnlimited(t *testing.T) {
	l := link{cfg: LinkConfig{Delay: 5 * time.Millisecond}}
	t0 := time.Unix(0, 0)
	for range 100 {
		at, ok := l.admit(t0, 1500)
		if !ok || !at.Equal(t0.Add(5*time.Millisecond)) {
			t.Fatalf("unlimited link: %v %v", at, ok)
		}
	}
}
