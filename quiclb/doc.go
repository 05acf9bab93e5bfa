// Package quiclb makes and reads QUIC-LB connection IDs
// (draft-ietf-quic-load-balancers): connection IDs that carry the ID of
// the server that issued them, so that a load balancer in front of a
// fleet routes every packet of a connection to the same server even when
// the client's address changes.
//
// A server plugs a Generator into quic.Transport.ConnectionIDGenerator; a
// load balancer written in Go reads the server ID of a packet's
// destination connection ID with a Decoder. NFTablesRuleset writes a Linux
// nftables ruleset that routes by the server ID of plaintext
// configurations in the kernel.
//
// A Config is what the draft calls a configuration: a config rotation
// codepoint (0 to 6), server ID and nonce lengths, and optionally a
// 16-byte AES key. Without a key the server ID is in plaintext: anyone
// can tell which server a connection ID belongs to, which is what a
// balancer that cannot decrypt (nftables, LVS with a hash on fixed
// bytes) needs. With a key, server ID and nonce are encrypted: with AES
// once when they make exactly 16 bytes (Section 5.4.1), otherwise with a
// four-pass Feistel network whose round function is AES (Section 5.4.2).
//
// Generating and decoding a connection ID allocate nothing, and both are
// safe for concurrent use.
package quiclb
