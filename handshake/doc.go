// Package handshake holds the cryptographic side of a QUIC connection:
// packet protection, header protection, key derivation and key update
// (RFC 9001 for QUIC version 1, RFC 9369 for QUIC version 2).
//
// # Scope
//
// The package currently provides packet protection:
//
//   - HKDF-Expand-Label of TLS 1.3 as QUIC uses it (RFC 9001, Section 5.1).
//   - Initial secrets derived from the client's Destination Connection ID
//     (RFC 9001, Section 5.2; RFC 9369, Section 3.3.1): [InitialSecrets] and
//     [NewInitialKeys].
//   - AEAD packet protection and header protection for the three TLS 1.3
//     cipher suites QUIC can use (RFC 9001, Sections 5.3 and 5.4):
//     [Sealer] protects packets this endpoint sends, [Opener] removes
//     protection from packets it receives.
//   - The next generation of 1-RTT secrets for key update (RFC 9001,
//     Section 6.1): [NextSecret], and the AEAD usage limits of Section 6.6.
//   - The Retry Integrity Tag (RFC 9001, Section 5.8; RFC 9369, Section
//     3.3.3): [RetryIntegrityTag], [AppendRetryIntegrityTag] and
//     [VerifyRetryIntegrity].
//
// The TLS driver built on the QUIC API of crypto/tls (which hands this
// package the traffic secrets of each encryption level) and the key-phase
// state machine of RFC 9001, Section 6 come later; this package only
// supplies the primitives they use.
//
// # Versions
//
// Every function that depends on the QUIC version takes a [wire.Version].
// Only [wire.Version1] and [wire.Version2] are known; they differ in the
// Initial salt, the HKDF labels ("quic key" versus "quicv2 key" and so on)
// and the Retry integrity key.
//
// # In-place protection
//
// Protection works in place on the caller's packet buffer: [Sealer.Seal]
// encrypts the payload where it lies, appends the 16-byte tag into spare
// capacity and masks the header; [Opener.RemoveHeaderProtection] and
// [Opener.Open] undo that, also in place. None of the three allocates.
//
// # Concurrency
//
// A [Sealer] or [Opener] keeps a small scratch area for the nonce and the
// header-protection mask, so a single one must not be used by several
// goroutines at once; a connection's goroutine owns its keys. The functions
// without a receiver are safe for concurrent use.
package handshake
