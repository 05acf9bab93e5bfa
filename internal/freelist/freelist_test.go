package freelist

import (
	"runtime"
	"testing"
	"unsafe"
)

func TestGetPutReuses(t *testing.T) {
	made := 0
	l := newSharded(2, 1, func() *int { made++; return new(int) })
	a, b, c := l.Get(), l.Get(), l.Get()
	if made != 3 {
		t.Fatalf("made %d objects for 3 Gets on an empty list; want 3", made)
	}
	l.Put(a)
	l.Put(b)
	l.Put(c) // beyond the bound: dropped
	if n := l.Len(); n != 2 {
		t.Fatalf("list holds %d objects; want its bound, 2", n)
	}
	if x := l.Get(); x != b {
		t.Fatal("Get did not return the object put last")
	}
	if l.Get() != a || made != 3 {
		t.Fatal("Get made an object while the list held one")
	}
}

// TestTrimDropsOnlyIdle checks that a trim gives back the objects no Get
// reached since the previous trim, and keeps those in use.
func TestTrimDropsOnlyIdle(t *testing.T) {
	l := newSharded(100, 1, func() *int { return new(int) })
	xs := make([]*int, 10)
	for i := range xs {
		xs[i] = l.Get()
	}
	for _, x := range xs {
		l.Put(x)
	}
	l.trim() // starts a cycle: low = 10
	// A steady flow takes and gives back 3 objects: 7 stay idle.
	for range 5 {
		a, b, c := l.Get(), l.Get(), l.Get()
		l.Put(a)
		l.Put(b)
		l.Put(c)
	}
	l.trim()
	if n := l.Len(); n != 3 {
		t.Fatalf("after a trim the list holds %d objects; want the 3 in use", n)
	}
	l.trim() // no Get since: all idle
	if n := l.Len(); n != 0 {
		t.Fatalf("after an idle cycle the list holds %d objects; want 0", n)
	}
}

// TestTrimAtGC checks that garbage collections trim the lists.
func TestTrimAtGC(t *testing.T) {
	l := New(100, func() *int { return new(int) })
	for range 8 {
		l.Put(new(int))
	}
	// The first collection may end the cycle the Puts began in; the
	// finalizer goroutine runs each trim after its collection.
	for i := 0; l.Len() != 0; i++ {
		if i == 1000 {
			t.Fatalf("list holds %d idle objects after 1000 collections; want 0", l.Len())
		}
		runtime.GC()
		runtime.Gosched()
	}
}

func BenchmarkGetPut(b *testing.B) {
	l := New(16, func() *[64]byte { return new([64]byte) })
	b.ReportAllocs()
	for b.Loop() {
		l.Put(l.Get())
	}
}

// TestShardsShareObjects checks that a Get finds an object whatever shard
// a Put left it in, and that the shards together keep the list's bound.
func TestShardsShareObjects(t *testing.T) {
	made := 0
	l := newSharded(8, 4, func() *int { made++; return new(int) })
	xs := make([]*int, 20)
	for i := range xs {
		xs[i] = l.Get()
	}
	for _, x := range xs {
		l.Put(x)
	}
	if n := l.Len(); n != 8 {
		t.Fatalf("list holds %d objects; want its bound, 8", n)
	}
	made = 0
	for range 8 {
		l.Get()
	}
	if made != 0 || l.Len() != 0 {
		t.Fatalf("8 Gets on a list of 8 spread over 4 shards made %d objects and left %d", made, l.Len())
	}
}

func BenchmarkGetPutParallel(b *testing.B) {
	l := New(4096, func() *[64]byte { return new([64]byte) })
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Put(l.Get())
		}
	})
}

// TestShardSize checks that a shard fills whole cache-line pairs, so that
// two processors' shards never share a line (the padding's purpose).
func TestShardSize(t *testing.T) {
	if n := unsafe.Sizeof(shard[int]{}); n%128 != 0 {
		t.Fatalf("shard is %d bytes; want a multiple of 128", n)
	}
}
