package handshake

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"testing"

	"github.com/quicstack/quic/wire"
)

// BenchmarkSeal1452 compares, in one run, sealing a 1452-byte 1-RTT packet
// (the largest that fits a 1500-byte Ethernet MTU over IPv4 without
// options: 1500 - 20 - 8 - 20 of margin) three ways on the same buffer:
//
//   - aead: the bare cipher.AEAD.Seal of the payload with the header as
//     associated data, the floor any QUIC stack pays;
//   - sealer: Sealer.Seal, which adds the nonce computation and header
//     protection (one AES block and a 5-byte XOR);
//   - one-rtt: OneRTTKeys.Seal, which adds key-phase and limit bookkeeping.
//
// The target is sealer at 0.9x the speed of aead or better.
func BenchmarkSeal1452(b *testing.B) {
	const (
		size     = 1452
		pnOffset = 9 // 1 + 8-byte connection ID
		pnLen    = 2
		hdrLen   = pnOffset + pnLen
	)
	secret := testSecret(tls.TLS_AES_128_GCM_SHA256, 1)
	header := wire.ShortHeader{DstConnID: wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})}
	template := header.Append(nil, 1, pnLen)
	buf := make([]byte, size-16, size)
	copy(buf, template)

	b.Run("aead", func(b *testing.B) {
		block, _ := aes.NewCipher(secret[:16])
		aead, _ := cipher.NewGCM(block)
		nonce := make([]byte, 12)
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			payload := buf[hdrLen:]
			aead.Seal(payload[:0], nonce, payload, buf[:hdrLen])
		}
	})
	b.Run("sealer", func(b *testing.B) {
		seal, err := NewSealer(tls.TLS_AES_128_GCM_SHA256, wire.Version1, secret)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			copy(buf[:hdrLen], template) // undo the header protection
			seal.Seal(buf, pnOffset, pnLen, 1)
		}
	})
	b.Run("one-rtt", func(b *testing.B) {
		keys, err := NewOneRTTKeys(tls.TLS_AES_128_GCM_SHA256, wire.Version1, secret, secret)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ReportAllocs()
		pn := wire.PacketNumber(0)
		for b.Loop() {
			copy(buf[:hdrLen], template)
			if _, err := keys.Seal(buf, pnOffset, pnLen, pn); err != nil {
				b.Fatal(err)
			}
			pn++
		}
	})
}
