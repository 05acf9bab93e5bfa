package netsim

// simRing is a FIFO queue in a power-of-two circular buffer. It grows by
// doubling and never shrinks, so once it has reached its largest size it
// no longer allocates.
type simRing[T any] struct {
	buf  []T
	head int
	n    int
}

func (r *simRing[T]) len() int { return r.n }

func (r *simRing[T]) push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// front returns the oldest element; the ring must not be empty.
func (r *simRing[T]) front() *T { return &r.buf[r.head] }

// back returns the newest element; the ring must not be empty.
func (r *simRing[T]) back() *T { return &r.buf[(r.head+r.n-1)&(len(r.buf)-1)] }

// pop removes and returns the oldest element; the ring must not be empty.
func (r *simRing[T]) pop() T {
	v := r.buf[r.head]
	var zero T
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

func (r *simRing[T]) grow() {
	nb := make([]T, max(16, 2*len(r.buf)))
	for i := 0; i < r.n; i++ {
		nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf = nb
	r.head = 0
}
