package handshake

import (
	"crypto/aes"
	"crypto/cipher"
	"sync"

	"github.com/quicstack/quic/wire"
)

// RetryIntegrityTagLen is the length of the Retry Integrity Tag that ends
// every Retry packet: "The Retry Integrity Tag is a 128-bit field"
// (RFC 9001, Section 5.8).
const RetryIntegrityTagLen = 16

// retryAEAD is the fixed AEAD_AES_128_GCM key and nonce of the Retry
// Integrity Tag of one QUIC version.
type retryAEAD struct {
	aead  cipher.AEAD
	nonce []byte
}

func newRetryAEAD(key, nonce []byte) *retryAEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic("handshake: " + err.Error()) // unreachable: fixed 16-byte key
	}
	aead, err := cipher.NewGCM(b)
	if err != nil {
		panic("handshake: " + err.Error()) // unreachable
	}
	return &retryAEAD{aead: aead, nonce: nonce}
}

// The fixed Retry Integrity Tag keys and nonces.
var (
	// RFC 9001, Section 5.8: "The secret key, K, is 128 bits equal to
	// 0xbe0c690b9f66575a1d766b54e368c84e. The nonce, N, is 96 bits equal
	// to 0x461599d35d632bf2239825bb."
	retryKeyV1   = [16]byte{0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e}
	retryNonceV1 = [12]byte{0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb}
	// RFC 9369, Section 3.3.3: "key = 0x8fb4b01b56ac48e260fbcbcead7ccc92
	// nonce = 0xd86969bc2d7c6d9990efb04a".
	retryKeyV2   = [16]byte{0x8f, 0xb4, 0xb0, 0x1b, 0x56, 0xac, 0x48, 0xe2, 0x60, 0xfb, 0xcb, 0xce, 0xad, 0x7c, 0xcc, 0x92}
	retryNonceV2 = [12]byte{0xd8, 0x69, 0x69, 0xbc, 0x2d, 0x7c, 0x6d, 0x99, 0x90, 0xef, 0xb0, 0x4a}
)

// The Retry AEADs are created once, on first use. cipher.AEAD's Seal and
// Open are safe for concurrent use, so all connections share them.
var (
	retryV1 = sync.OnceValue(func() *retryAEAD { return newRetryAEAD(retryKeyV1[:], retryNonceV1[:]) })
	retryV2 = sync.OnceValue(func() *retryAEAD { return newRetryAEAD(retryKeyV2[:], retryNonceV2[:]) })
)

// retryAEADFor returns the Retry AEAD of v, or nil for an unknown version.
func retryAEADFor(v wire.Version) *retryAEAD {
	switch v {
	case wire.Version1:
		return retryV1()
	case wire.Version2:
		return retryV2()
	}
	return nil
}

// RetryIntegrityTag returns the Retry Integrity Tag of the Retry
// Pseudo-Packet pseudoPacket in QUIC version v (RFC 9001, Section 5.8;
// RFC 9369, Section 3.3.3): the output of AEAD_AES_128_GCM with the
// version's fixed key and nonce, an empty plaintext and pseudoPacket as the
// associated data.
//
// The pseudo-packet is the Retry packet without its tag, preceded by "ODCID
// Length (8), Original Destination Connection ID (0..160)";
// [AppendRetryIntegrityTag] and [VerifyRetryIntegrity] build it themselves.
//
// RetryIntegrityTag panics if v is not [wire.Version1] or [wire.Version2].
// It is safe for concurrent use.
func RetryIntegrityTag(v wire.Version, pseudoPacket []byte) [RetryIntegrityTagLen]byte {
	r := retryAEADFor(v)
	if r == nil {
		panic("handshake: RetryIntegrityTag: unsupported QUIC version " + v.String())
	}
	var tag [RetryIntegrityTagLen]byte
	// "The plaintext, P, is empty." RFC 9001, Section 5.8
	copy(tag[:], r.aead.Seal(tag[:0], r.nonce, nil, pseudoPacket))
	return tag
}

// appendPseudoPacket appends the Retry Pseudo-Packet of RFC 9001, Figure 8:
// "It is computed by taking the transmitted Retry packet, removing the
// Retry Integrity Tag, and prepending the two following fields": the ODCID
// Length and the Original Destination Connection ID.
func appendPseudoPacket(b, odcid, retryWithoutTag []byte) []byte {
	b = append(b, byte(len(odcid)))
	b = append(b, odcid...)
	return append(b, retryWithoutTag...)
}

// AppendRetryIntegrityTag appends the Retry Integrity Tag to retry, a Retry
// packet of QUIC version v complete up to its Retry Token, sent in response
// to an Initial packet whose Destination Connection ID was odcid (RFC 9001,
// Section 5.8). It returns the extended slice.
//
// It panics if v is not [wire.Version1] or [wire.Version2] or if odcid is
// longer than 20 bytes.
func AppendRetryIntegrityTag(retry []byte, v wire.Version, odcid []byte) []byte {
	if len(odcid) > wire.MaxConnectionIDLen {
		panic("handshake: AppendRetryIntegrityTag: connection ID longer than 20 bytes")
	}
	pseudo := appendPseudoPacket(make([]byte, 0, 1+len(odcid)+len(retry)), odcid, retry)
	tag := RetryIntegrityTag(v, pseudo)
	return append(retry, tag[:]...)
}

// VerifyRetryIntegrity reports whether retryPacket, a received Retry packet
// of QUIC version v including its final 16-byte Retry Integrity Tag, carries
// a valid tag for odcid, the Destination Connection ID of the client's
// Initial packet that the Retry answers (RFC 9001, Section 5.8; RFC 9369,
// Section 3.3.3). It builds the Retry Pseudo-Packet itself. The comparison
// is the AEAD's constant-time tag check.
//
// RFC 9000, Section 17.2.5.2: "Clients MUST discard Retry packets that have
// a Retry Integrity Tag that cannot be validated." VerifyRetryIntegrity
// returns false, without panicking, for an unknown version, a packet
// shorter than the tag or an odcid longer than 20 bytes. It is safe for
// concurrent use.
func VerifyRetryIntegrity(v wire.Version, odcid []byte, retryPacket []byte) bool {
	r := retryAEADFor(v)
	if r == nil || len(retryPacket) < RetryIntegrityTagLen || len(odcid) > wire.MaxConnectionIDLen {
		return false
	}
	n := len(retryPacket) - RetryIntegrityTagLen
	pseudo := appendPseudoPacket(make([]byte, 0, 1+len(odcid)+n), odcid, retryPacket[:n])
	_, err := r.aead.Open(nil, r.nonce, retryPacket[n:], pseudo)
	return err == nil
}
