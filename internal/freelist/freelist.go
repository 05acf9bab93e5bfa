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
	"runtime"
	"sync"
)

// List is a free list of *T, bounded to Max objects. The zero value is
// not usable; make one with New.
//
// Multiple goroutines may call Get and Put simultaneously: a mutex guards
// the list (held for a slice push or pop).
type List[T any] struct {
	newT func() *T
	max  int

	mu   sync.Mutex
	free []*T
	low  int // the fewest objects held since the last collection
}

// New returns a list that makes objects with newT when it is empty and
// holds at most max objects; Put drops any beyond. The list is trimmed
// at every garbage collection (see List) and stays registered for that
// for the life of the program: make lists once, in package variables.
func New[T any](max int, newT func() *T) *List[T] {
	l := &List[T]{newT: newT, max: max}
	registry.mu.Lock()
	registry.lists = append(registry.lists, l)
	registry.mu.Unlock()
	gcHookOnce.Do(armGCHook)
	return l
}

// Get returns an object of the list (the one put last), or a new one.
func (l *List[T]) Get() *T {
	l.mu.Lock()
	n := len(l.free)
	if n == 0 {
		l.mu.Unlock()
		return l.newT()
	}
	x := l.free[n-1]
	l.free[n-1] = nil
	l.free = l.free[:n-1]
	l.low = min(l.low, n-1)
	l.mu.Unlock()
	return x
}

// Put gives x to the list; the caller holds no reference to it any more.
func (l *List[T]) Put(x *T) {
	l.mu.Lock()
	if len(l.free) < l.max {
		l.free = append(l.free, x)
	}
	l.mu.Unlock()
}

// Len returns the number of objects held.
func (l *List[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.free)
}

// trim drops the objects no Get reached since the last trim: the low
// first ones, under every object taken and put since.
func (l *List[T]) trim() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := l.low; k > 0 {
		n := copy(l.free, l.free[k:])
		clear(l.free[n:])
		l.free = l.free[:n]
	}
	l.low = len(l.free)
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
