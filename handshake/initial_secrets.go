package handshake

import (
	"crypto/sha256"

	"github.com/quicstack/quic/wire"
)

// InitialSecrets returns the client and server Initial secrets (32 bytes
// each) of QUIC version v for the Destination Connection ID of the client's
// first Initial packet (RFC 9001, Section 5.2; RFC 9369, Section 3.3.1):
//
//	initial_secret = HKDF-Extract(initial_salt, client_dst_connection_id)
//	client_initial_secret = HKDF-Expand-Label(initial_secret,
//	                                          "client in", "", Hash.length)
//	server_initial_secret = HKDF-Expand-Label(initial_secret,
//	                                          "server in", "", Hash.length)
//
// "The hash function for HKDF when deriving initial secrets and keys is
// SHA-256." The connection ID may be 0 to 20 bytes long (after a Retry the
// server chooses it). The labels "client in" and "server in" are the same
// in both versions; only the salt differs.
//
// InitialSecrets panics if v is not [wire.Version1] or [wire.Version2]:
// callers check [wire.Version.IsSupported] when they parse the long header.
// It also panics if crypto/hkdf refuses the connection ID, which only
// happens in GODEBUG=fips140=only mode with a connection ID shorter than
// 14 bytes.
func InitialSecrets(v wire.Version, clientDstConnID []byte) (client, server []byte) {
	p := paramsFor(v)
	if p == nil {
		panic("handshake: InitialSecrets: unsupported QUIC version " + v.String())
	}
	// "The HKDF-Expand-Label function defined in TLS 1.3 MUST be used for
	// Initial packets even where the TLS versions offered do not include
	// TLS 1.3." RFC 9001, Section 5.2
	var initial [maxHashLen]byte
	defer clear(initial[:])
	if err := kdfSHA256.hkdfExtract(&initial, clientDstConnID, p.initialSalt); err != nil {
		panic("handshake: InitialSecrets: " + err.Error())
	}
	secrets := make([]byte, 2*sha256.Size) // one allocation for both
	client, server = secrets[:sha256.Size:sha256.Size], secrets[sha256.Size:]
	if err := kdfSHA256.hkdfExpandLabels(initial[:sha256.Size], labelOut{client, "client in"}, labelOut{server, "server in"}); err != nil {
		panic("handshake: InitialSecrets: " + err.Error())
	}
	return client, server
}
