package quic

import "sync"

// Pools of ring storage for the send buffers of CRYPTO streams, whose
// data lives only as long as the handshake: a server's Initial and
// Handshake flights (a few KB with the certificate chain) and a client's
// ClientHello (more than a KB with a post-quantum key share) are written
// once, acknowledged a round trip later and dropped with their packet
// number space. Only the connection's goroutine touches a CRYPTO stream,
// and a ring goes back to the pool only when the stream lets go of it
// (its space is dropped, or everything written was acknowledged), so no
// slice of it is left in use. Rings are cleared on the way back: another
// connection gets them next.
//
// The sizes are those bufRingGrowCap makes from sendBufMinCapacity, up to
// 16 KB; larger ones are not kept.
var ringPools = [...]sync.Pool{
	{New: func() any { return new([512]byte) }},
	{New: func() any { return new([1 << 10]byte) }},
	{New: func() any { return new([2 << 10]byte) }},
	{New: func() any { return new([4 << 10]byte) }},
	{New: func() any { return new([8 << 10]byte) }},
	{New: func() any { return new([16 << 10]byte) }},
}

// ringClass returns the index in ringPools of rings of n bytes, or -1.
func ringClass(n int) int {
	for i, c := 0, 512; i < len(ringPools); i, c = i+1, c*2 {
		if n == c {
			return i
		}
	}
	return -1
}

// getRing returns ring storage of n bytes, pooled if n is a pooled size.
// Its contents are zero.
func getRing(n int) []byte {
	switch ringClass(n) {
	case 0:
		return ringPools[0].Get().(*[512]byte)[:]
	case 1:
		return ringPools[1].Get().(*[1 << 10]byte)[:]
	case 2:
		return ringPools[2].Get().(*[2 << 10]byte)[:]
	case 3:
		return ringPools[3].Get().(*[4 << 10]byte)[:]
	case 4:
		return ringPools[4].Get().(*[8 << 10]byte)[:]
	case 5:
		return ringPools[5].Get().(*[16 << 10]byte)[:]
	}
	return make([]byte, n)
}

// putRing gives ring storage from getRing back, cleared. The caller must
// hold no slice of it any more.
func putRing(b []byte) {
	i := ringClass(len(b))
	if i < 0 || cap(b) != len(b) {
		return
	}
	clear(b)
	switch i {
	case 0:
		ringPools[0].Put((*[512]byte)(b))
	case 1:
		ringPools[1].Put((*[1 << 10]byte)(b))
	case 2:
		ringPools[2].Put((*[2 << 10]byte)(b))
	case 3:
		ringPools[3].Put((*[4 << 10]byte)(b))
	case 4:
		ringPools[4].Put((*[8 << 10]byte)(b))
	case 5:
		ringPools[5].Put((*[16 << 10]byte)(b))
	}
}
