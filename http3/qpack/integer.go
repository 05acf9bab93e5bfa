package qpack

import "errors"

// Prefixed integers (RFC 9204, Section 4.1.1, using RFC 7541, Section 5.1
// unmodified).
//
// "QPACK implementations MUST be able to decode integers up to and including
// 62 bits long." (RFC 9204, Section 4.1.1). Larger values, and encodings
// longer than any 62-bit value needs plus a little zero padding, are refused:
// "Integer encodings that exceed implementation limits -- in value or octet
// length -- MUST be treated as decoding errors." (RFC 7541, Section 5.1).

// maxInt is the largest integer the package decodes: 2^62-1.
const maxInt = 1<<62 - 1

// maxIntContinuation is the largest number of bytes accepted after the
// prefix. Nine 7-bit groups carry 63 bits; one more allows a redundant
// trailing zero group from a lax encoder.
const maxIntContinuation = 10

var (
	// errNeedMore reports that the input ended inside an item. On a stream
	// it means "wait for more bytes"; in a complete field section it is an
	// error.
	errNeedMore = errors.New("qpack: truncated input")
	// errIntTooLarge reports an integer above 2^62-1 or encoded in too many
	// bytes.
	errIntTooLarge = errors.New("qpack: integer exceeds implementation limit")
)

// appendInt appends v as an integer with an n-bit prefix (1 <= n <= 8).
// flags holds the 8-n high bits of the first byte (the bits of the prefix
// itself must be zero in flags).
//
// RFC 7541, Section 5.1:
//
//	if I < 2^N - 1, encode I on N bits
//	else
//	    encode (2^N - 1) on N bits
//	    I = I - (2^N - 1)
//	    while I >= 128
//	         encode (I % 128 + 128) on 8 bits
//	         I = I / 128
//	    encode I on 8 bits
func appendInt(b []byte, n uint8, flags byte, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(b, flags|byte(v))
	}
	b = append(b, flags|byte(max))
	v -= max
	for v >= 128 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// intLen returns the number of bytes appendInt uses for v with an n-bit
// prefix.
func intLen(n uint8, v uint64) int {
	max := uint64(1)<<n - 1
	if v < max {
		return 1
	}
	v -= max
	l := 2
	for v >= 128 {
		v >>= 7
		l++
	}
	return l
}

// readInt parses an integer with an n-bit prefix from the start of b. The
// high 8-n bits of b[0] are ignored. It returns the value and the number of
// bytes it took, errNeedMore if b ends first, or errIntTooLarge.
func readInt(b []byte, n uint8) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errNeedMore
	}
	max := uint64(1)<<n - 1
	v := uint64(b[0]) & max
	if v < max {
		return v, 1, nil
	}
	var m uint
	for i := 1; ; i++ {
		if i > maxIntContinuation {
			return 0, 0, errIntTooLarge
		}
		if i >= len(b) {
			return 0, 0, errNeedMore
		}
		c := b[i]
		add := uint64(c & 0x7f)
		if m < 64 {
			// v + add<<m must stay within maxInt.
			if add > (maxInt-v)>>m {
				return 0, 0, errIntTooLarge
			}
			v += add << m
		} else if add != 0 {
			return 0, 0, errIntTooLarge
		}
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
		m += 7
	}
}
