package qpack

import "errors"

// Huffman coding of string literals (RFC 7541, Section 5.2 and Appendix B;
// RFC 9204, Section 4.1.2: "the Huffman table from Appendix B of [RFC7541]
// is used without modification").

// errInvalidHuffman reports a Huffman-encoded string that RFC 7541,
// Section 5.2 requires a decoder to reject.
var errInvalidHuffman = errors.New("qpack: invalid Huffman-encoded string")

// huffmanEncodedLen returns the length in bytes of the Huffman encoding of
// s, padding included.
func huffmanEncodedLen(s string) int {
	var bits int
	for i := 0; i < len(s); i++ {
		bits += int(huffmanCodeLens[s[i]])
	}
	return (bits + 7) / 8
}

// appendHuffman appends the Huffman encoding of s to dst.
//
// "As the Huffman-encoded data doesn't always end at an octet boundary, some
// padding is inserted after it, up to the next octet boundary. To prevent
// this padding from being misinterpreted as part of the string literal, the
// most significant bits of the code corresponding to the EOS (end-of-string)
// symbol are used." (RFC 7541, Section 5.2)
func appendHuffman(dst []byte, s string) []byte {
	// acc holds nbits pending bits in its low end; codes are at most 30
	// bits, so with fewer than 8 bits pending, 38 bits never overflow.
	var acc uint64
	var nbits uint
	for i := 0; i < len(s); i++ {
		c := s[i]
		acc = acc<<huffmanCodeLens[c] | uint64(huffmanCodes[c])
		nbits += uint(huffmanCodeLens[c])
		for nbits >= 8 {
			nbits -= 8
			dst = append(dst, byte(acc>>nbits))
		}
	}
	if nbits > 0 {
		// Pad with the most significant bits of EOS, which are all ones.
		dst = append(dst, byte(acc<<(8-nbits))|byte(0xff>>nbits))
	}
	return dst
}

// huffmanMaxDecodedLen bounds the decoded length of n bytes of Huffman
// data: the shortest code has 5 bits.
func huffmanMaxDecodedLen(n uint64) uint64 { return n * 8 / 5 }

// huffmanMinDecodedLen bounds from below the decoded length of n bytes of
// valid Huffman data: the longest code has 30 bits and padding is at most 7.
func huffmanMinDecodedLen(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	return (n*8 - 7 + 29) / 30
}

// appendHuffmanDecode appends the decoding of the Huffman-encoded src to
// dst. It returns errInvalidHuffman, leaving dst's length unspecified, if
// src breaks a rule of RFC 7541, Section 5.2:
//
// "A padding strictly longer than 7 bits MUST be treated as a decoding
// error. A padding not corresponding to the most significant bits of the
// code for the EOS symbol MUST be treated as a decoding error. A
// Huffman-encoded string literal containing the EOS symbol MUST be treated
// as a decoding error."
func appendHuffmanDecode(dst, src []byte) ([]byte, error) {
	t := huffmanTable
	state := uint8(0)
	for _, c := range src {
		e := t.next[state][c>>4]
		if e.flags&huffmanFail != 0 {
			return dst, errInvalidHuffman
		}
		if e.flags&huffmanEmit != 0 {
			dst = append(dst, e.sym)
		}
		e = t.next[e.state][c&0x0f]
		if e.flags&huffmanFail != 0 {
			return dst, errInvalidHuffman
		}
		if e.flags&huffmanEmit != 0 {
			dst = append(dst, e.sym)
		}
		state = e.state
	}
	// What remains undecoded is padding: it must be a prefix of EOS (all
	// ones) no longer than 7 bits.
	if !t.accept[state] {
		return dst, errInvalidHuffman
	}
	return dst, nil
}

// The decoder is a finite-state machine that consumes four bits at a time.
// Its states are the 256 internal nodes of the code tree (257 leaves make
// 256 internal nodes); state 0 is the root. Four bits complete at most one
// code, because every code is at least 5 bits long.
const (
	huffmanEmit = 1 << iota // the transition completes a symbol
	huffmanFail             // the transition completes EOS
)

type huffmanTransition struct {
	state uint8 // the state after the four bits
	sym   uint8 // the completed symbol, if flags has huffmanEmit
	flags uint8
}

type huffmanDecoder struct {
	next [256][16]huffmanTransition
	// accept[s] is true if ending in state s leaves valid padding: the path
	// from the root to s is at most 7 one-bits.
	accept [256]bool
}

// huffmanTable is the decoding state machine (about 12 KiB).
var huffmanTable = buildHuffmanDecoder()

// buildHuffmanDecoder derives the state machine from huffmanCodes. It runs
// once at package initialisation and takes a few microseconds.
func buildHuffmanDecoder() *huffmanDecoder {
	// child[n][bit] is an internal node number (>= 0) or ^symbol for a leaf.
	var child [256][2]int16
	var depth [256]uint8
	var ones [256]bool // the path to the node is all one-bits
	nodes := 1
	ones[0] = true
	for sym := 0; sym <= 256; sym++ {
		code, n := uint32(huffmanEOSCode), uint8(huffmanEOSLen)
		if sym < 256 {
			code, n = huffmanCodes[sym], huffmanCodeLens[sym]
		}
		node := 0
		for i := int(n) - 1; i >= 0; i-- {
			bit := (code >> uint(i)) & 1
			if i == 0 {
				if child[node][bit] != 0 {
					panic("qpack: Huffman code table is not a prefix code")
				}
				child[node][bit] = ^int16(sym)
				break
			}
			if child[node][bit] == 0 {
				if nodes == len(child) {
					panic("qpack: Huffman code table has too many internal nodes")
				}
				child[node][bit] = int16(nodes)
				depth[nodes] = depth[node] + 1
				ones[nodes] = ones[node] && bit == 1
				nodes++
			} else if child[node][bit] < 0 {
				panic("qpack: Huffman code table is not a prefix code")
			}
			node = int(child[node][bit])
		}
	}
	if nodes != 256 {
		panic("qpack: Huffman code table is not complete")
	}
	d := new(huffmanDecoder)
	for s := 0; s < 256; s++ {
		d.accept[s] = ones[s] && depth[s] <= 7
		for nib := 0; nib < 16; nib++ {
			var tr huffmanTransition
			node := s
			for i := 3; i >= 0; i-- {
				c := child[node][(nib>>uint(i))&1]
				if c >= 0 {
					node = int(c)
					continue
				}
				sym := int(^c)
				if sym == 256 {
					tr.flags |= huffmanFail
					break
				}
				tr.flags |= huffmanEmit
				tr.sym = uint8(sym)
				node = 0
			}
			tr.state = uint8(node)
			d.next[s][nib] = tr
		}
	}
	return d
}

// The Huffman code of RFC 7541, Appendix B. huffmanCodes[sym] holds the
// code aligned to the least significant bit ("code as hex") and
// huffmanCodeLens[sym] its length in bits. The tables were transcribed from
// the RFC text; TestHuffmanTableMatchesRFC checks them against it.
const (
	huffmanEOSCode = 0x3fffffff
	huffmanEOSLen  = 30
)

var huffmanCodes = [256]uint32{
	0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7,
	0xfffffe8, 0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec,
	0xfffffed, 0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3,
	0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7, 0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb,
	0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa,
	0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18,
	0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d,
	0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc,
	0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62,
	0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a,
	0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72,
	0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0, 0x1ffc, 0x3ffc, 0x22,
	0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26,
	0x27, 0x6, 0x74, 0x75, 0x28, 0x29, 0x2a, 0x7,
	0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78,
	0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd, 0x1ffd, 0xffffffc,
	0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9,
	0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf,
	0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3,
	0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef,
	0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde,
	0x7fffea, 0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec,
	0x1fffe0, 0x1fffe1, 0x3fffe0, 0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef,
	0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1,
	0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec,
	0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed,
	0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2,
	0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5,
	0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3,
	0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4,
	0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea,
	0x7ffffeb, 0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee,
}

var huffmanCodeLens = [256]uint8{
	13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
	28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
	6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
	5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
	13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
	15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
	6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
	20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
	24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
	22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
	21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
	26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
	19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
	20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
	26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
}
