package wire

// reader is a bounds-checked cursor used by the parsers. Once a read runs
// past the end of the input, ok turns false and every later read returns
// zero values, so a parser reads all its fields and checks ok once. It lives
// on the caller's stack and never allocates.
type reader struct {
	b   []byte
	off int
	ok  bool
}

func newReader(b []byte) reader { return reader{b: b, ok: true} }

// varint reads a variable-length integer (RFC 9000, Section 16). The
// one-byte form, by far the most common in frames, is handled inline.
// After a failed read the fast path may still advance over later bytes;
// that is harmless because callers discard every value once ok is false.
func (r *reader) varint() uint64 {
	if i := r.off; i < len(r.b) && r.b[i] < 0x40 {
		r.off = i + 1
		return uint64(r.b[i])
	}
	return r.varintSlow()
}

func (r *reader) varintSlow() uint64 {
	if !r.ok {
		return 0
	}
	v, n := ParseVarint(r.b[r.off:])
	if n == 0 {
		r.ok = false
		return 0
	}
	r.off += n
	return v
}

// byte1 reads one byte.
func (r *reader) byte1() byte {
	if !r.ok || r.off >= len(r.b) {
		r.ok = false
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

// bytes returns the next n bytes as a sub-slice of the input (capacity
// clipped so that appending to it cannot overwrite what follows).
func (r *reader) bytes(n uint64) []byte {
	if !r.ok || n > uint64(len(r.b)-r.off) {
		r.ok = false
		return nil
	}
	s := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return s
}

// rest returns everything not yet read.
func (r *reader) rest() []byte {
	if !r.ok {
		return nil
	}
	s := r.b[r.off:len(r.b):len(r.b)]
	r.off = len(r.b)
	return s
}
