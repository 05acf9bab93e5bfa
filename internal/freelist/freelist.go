// Package freelist keeps objects for reuse, like sync.Pool, but across
// garbage collections.
//
// A sync.Pool empties at every collection (into its victim cache, then
// away) and rebuilds its per-P storage afterwards: a pool that holds
// hundreds of objects costs a dozen or more allocations per collection to
// grow its rings back (16 KiB for 1,024 objects), besides the objects
// that are gone. For the receive and send buffers of a bulk transfer this
// was most of the allocations that remained (about 70 per collection).
// A List keeps its objects in one slice and gives back to the garbage
// collector only those no one took since the previous collection: the
// ones a steady flow of data does not need.
package freelist

import (
	"math/rand/v2"
	"runtime"
	"sync"
)

// List is a free list of *T, bounded to Max objects. The zero value is
// not usable; make one with New.
//
// Multiple goroutines may call Get and Put simultaneously. The list is
// split into shards, one per processor up to maxShards, each guarded by
// its own mutex (held for a slice push or pop), so that goroutines on
// different processors rarely meet on one lock (a sync.Pool has per-P
// storage; a single mutex shared by every connection's packets would
// serialise a many-core server). Put picks a shard at random; Get tries
// a random shard first and then the others before it makes an object.
type List[T any] struct {
	newT   func() *T
	shards []shard[T]
}

type shard[T any] struct {
	mu   sync.Mutex
	max  int
	free []*T
	low  int      // the fewest objects held since the last collection
	_    [80]byte // 128 bytes per shard: neighbours never share a cache line
}

// maxShards bounds the shards of a list.
const maxShards = 32

// New returns a list that makes objects with newT when it is empty and
// holds at most about max objects (max divided among its shards, rounded
// up); Put drops any beyond. The list is trimmed at every garbage
// collection (see List) and stays registered for that for the life of
// the program: make lists once, in package variables.
func New[T any](max int, newT func() *T) *List[T] {
	return newSharded(max, min(runtime.GOMAXPROCS(0), maxShards), newT)
}

func newSharded[T any](bound, shards int, newT func() *T) *List[T] {
	shards = max(shards, 1)
	l := &List[T]{newT: newT, shards: make([]shard[T], shards)}
	for i := range l.shards {
		l.shards[i].max = (bound + shards - 1) / shards
	}
	registry.mu.Lock()
	registry.lists = append(registry.lists, l)
	registry.mu.Unlock()
	gcHookOnce.Do(armGCHook)
	return l
}

// pick returns a random shard index (rand.N uses the runtime's per-thread
// generator: no lock, no allocation).
func (l *List[T]) pick() int {
	if len(l.shards) == 1 {
		return 0
	}
	return rand.N(len(l.shards))
}

// Get returns an object of the list (within a shard, the one put last),
// or a new one.
func (l *List[T]) Get() *T {
	first := l.pick()
	for i := range l.shards {
		s := &l.shards[(first+i)%len(l.shards)]
		s.mu.Lock()
		n := len(s.free)
		if n == 0 {
			s.mu.Unlock()
			continue
		}
		x := s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
		s.low = min(s.low, n-1)
		s.mu.Unlock()
		return x
	}
	return l.newT()
}

// Put gives x to the list; the caller holds no reference to it any more.
func (l *List[T]) Put(x *T) {
	first := l.pick()
	for i := range l.shards {
		s := &l.shards[(first+i)%len(l.shards)]
		s.mu.Lock()
		if len(s.free) < s.max {
			s.free = append(s.free, x)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// Len returns the number of objects held.
func (l *List[T]) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.free)
		s.mu.Unlock()
	}
	return n
}

// trim drops the objects no Get reached since the last trim: in each
// shard the low first ones, under every object taken and put since.
func (l *List[T]) trim() {
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		if k := s.low; k > 0 {
			n := copy(s.free, s.free[k:])
			clear(s.free[n:])
			s.free = s.free[:n]
		}
		s.low = len(s.free)
		s.mu.Unlock()
	}
}

type trimmer interface{ trim() }

var registry struct {
	mu    sync.Mutex
	lists []trimmer
}

var gcHookOnce sync.Once

// sentinel is an object whose finalizer runs once per garbage collection:
// the finalizer sets itself again. It holds a pointer so that it is not
// placed in a tiny-allocator block (whose finalizer would wait for the
// block's other objects).
type sentinel struct{ _ *byte }

func armGCHook() { runtime.SetFinalizer(&sentinel{}, onGC) }

// onGC runs on the finalizer goroutine after each collection.
func onGC(s *sentinel) {
	registry.mu.Lock()
	lists := registry.lists
	registry.mu.Unlock()
	for _, l := range lists {
		l.trim()
	}
	runtime.SetFinalizer(s, onGC)
}

// TrimNow trims every list as a garbage collection would (for tests).
func TrimNow() {
	registry.mu.Lock()
	lists := registry.lists
	registry.mu.Unlock()
	for _, l := range lists {
		l.trim()
	}
}
