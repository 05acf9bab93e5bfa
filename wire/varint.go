package wire

// MaxVarint is the largest value a variable-length integer can carry,
// 2^62-1 (RFC 9000, Section 16).
const MaxVarint = 1<<62 - 1

// VarintLen returns the number of bytes (1, 2, 4 or 8) of the shortest
// encoding of v (RFC 9000, Section 16). It panics if v > MaxVarint.
func VarintLen(v uint64) int {
	switch {
	case v <= 63:
		return 1
	case v <= 16383:
		return 2
	case v <= 1073741823:
		return 4
	case v <= MaxVarint:
		return 8
	}
	panic("wire: varint value exceeds 2^62-1")
}

// AppendVarint appends the shortest encoding of v to b
// (RFC 9000, Section 16). It panics if v > MaxVarint.
func AppendVarint(b []byte, v uint64) []byte {
	switch {
	case v <= 63:
		return append(b, byte(v))
	case v <= 16383:
		return append(b, 0x40|byte(v>>8), byte(v))
	case v <= 1073741823:
		return append(b, 0x80|byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	case v <= MaxVarint:
		return append(b, 0xc0|byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	panic("wire: varint value exceeds 2^62-1")
}

// AppendVarintWithLen appends v to b encoded in exactly n bytes, where n is
// 1, 2, 4 or 8 and at least VarintLen(v). Senders use a fixed width for
// fields such as the long header Length that they fill in after the payload
// is known ("values do not need to be encoded on the minimum number of
// bytes necessary", RFC 9000, Section 16). It panics on an impossible n.
func AppendVarintWithLen(b []byte, v uint64, n int) []byte {
	if n < VarintLen(v) {
		panic("wire: varint does not fit the requested length")
	}
	switch n {
	case 1:
		return append(b, byte(v))
	case 2:
		return append(b, 0x40|byte(v>>8), byte(v))
	case 4:
		return append(b, 0x80|byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	case 8:
		return append(b, 0xc0|byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	panic("wire: varint length must be 1, 2, 4 or 8")
}

// PutVarintWithLen writes v into b[:n] using exactly n bytes (1, 2, 4 or 8),
// for patching a length field reserved earlier with AppendVarintWithLen.
// It panics if b is shorter than n or v does not fit.
func PutVarintWithLen(b []byte, v uint64, n int) {
	_ = AppendVarintWithLen(b[:0:n], v, n)
}

// ParseVarint decodes the variable-length integer at the start of b
// (RFC 9000, Section 16 and Appendix A.1). It returns the value and the
// number of bytes read, or n == 0 if b is too short. Non-minimal encodings
// are accepted, as the RFC requires.
func ParseVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0]), 1
	case 1:
		if len(b) < 2 {
			return 0, 0
		}
		return uint64(b[0]&0x3f)<<8 | uint64(b[1]), 2
	case 2:
		if len(b) < 4 {
			return 0, 0
		}
		return uint64(b[0]&0x3f)<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3]), 4
	default:
		if len(b) < 8 {
			return 0, 0
		}
		return uint64(b[0]&0x3f)<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
			uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7]), 8
	}
}
