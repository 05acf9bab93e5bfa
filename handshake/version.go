package handshake

import "github.com/quicstack/quic/wire"

// versionParams holds what the key schedule of a QUIC version changes.
type versionParams struct {
	// initialSalt is the HKDF-Extract salt of the Initial secrets.
	initialSalt []byte
	// Labels of HKDF-Expand-Label for the AEAD key, the IV, the header
	// protection key and the key update.
	keyLabel, ivLabel, hpLabel, kuLabel string
}

var (
	// RFC 9001, Section 5.2: "initial_salt =
	// 0x38762cf7f55934b34d179ae6a4c80cadccbb7f0a".
	// RFC 9001, Sections 5.1 and 6.1: labels "quic key", "quic iv",
	// "quic hp" and "quic ku".
	paramsV1 = versionParams{
		initialSalt: []byte{
			0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
			0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
		},
		keyLabel: "quic key",
		ivLabel:  "quic iv",
		hpLabel:  "quic hp",
		kuLabel:  "quic ku",
	}
	// RFC 9369, Section 3.3.1: "initial_salt =
	// 0x0dede3def700a6db819381be6e269dcbf9bd2ed9".
	// RFC 9369, Section 3.3.2: the labels "change from "quic key" to
	// "quicv2 key", from "quic iv" to "quicv2 iv", from "quic hp" to
	// "quicv2 hp", and from "quic ku" to "quicv2 ku"".
	paramsV2 = versionParams{
		initialSalt: []byte{
			0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
			0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9,
		},
		keyLabel: "quicv2 key",
		ivLabel:  "quicv2 iv",
		hpLabel:  "quicv2 hp",
		kuLabel:  "quicv2 ku",
	}
)

// paramsFor returns the key schedule parameters of v, or nil if v is
// neither QUIC version 1 nor QUIC version 2.
func paramsFor(v wire.Version) *versionParams {
	switch v {
	case wire.Version1:
		return &paramsV1
	case wire.Version2:
		return &paramsV2
	}
	return nil
}
