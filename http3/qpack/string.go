package qpack

// String literals (RFC 9204, Section 4.1.2; RFC 7541, Section 5.2).
//
// "An 'N-bit prefix string literal' begins mid-byte, with the first (8-N)
// bits allocated to a previous field. The string uses one bit for the
// Huffman flag, followed by the length of the encoded string as a (N-1)-bit
// prefix integer. The prefix size, N, can have a value between 2 and 8,
// inclusive." (RFC 9204, Section 4.1.2)

// appendString appends s as an n-bit prefix string literal. flags holds the
// 8-n high bits of the first byte. With huffman set, s is Huffman-encoded
// when that is shorter than the raw bytes.
func appendString(b []byte, n uint8, flags byte, s string, huffman bool) []byte {
	hbit := byte(1) << (n - 1)
	if huffman {
		if hl := huffmanEncodedLen(s); hl < len(s) {
			b = appendInt(b, n-1, flags|hbit, uint64(hl))
			return appendHuffman(b, s)
		}
	}
	b = appendInt(b, n-1, flags, uint64(len(s)))
	return append(b, s...)
}

// stringLen returns the number of bytes appendString uses.
func stringLen(n uint8, s string, huffman bool) int {
	l := len(s)
	if huffman {
		if hl := huffmanEncodedLen(s); hl < l {
			l = hl
		}
	}
	return intLen(n-1, uint64(l)) + l
}

// readStringHeader parses the H bit and length of an n-bit prefix string
// literal at the start of b. It returns the H bit, the encoded length and
// the size of the header; the encoded bytes follow the header.
func readStringHeader(b []byte, n uint8) (huffman bool, length uint64, hdr int, err error) {
	if len(b) == 0 {
		return false, 0, 0, errNeedMore
	}
	huffman = b[0]&(byte(1)<<(n-1)) != 0
	length, hdr, err = readInt(b, n-1)
	return huffman, length, hdr, err
}

// appendStringData appends the decoded contents of a string literal whose
// encoded bytes are data.
func appendStringData(dst, data []byte, huffman bool) ([]byte, error) {
	if !huffman {
		return append(dst, data...), nil
	}
	return appendHuffmanDecode(dst, data)
}

// decodedLenBounds returns the least and greatest decoded length of a
// string literal of the given encoded length.
func decodedLenBounds(length uint64, huffman bool) (min, max uint64) {
	if !huffman {
		return length, length
	}
	return huffmanMinDecodedLen(length), huffmanMaxDecodedLen(length)
}
