package quic

import "github.com/quicstack/quic/wire"

// A Version is a QUIC version number (RFC 9000, Section 15), as in
// Config.Versions and ConnectionState.Version. It is the same type as
// wire.Version.
type Version = wire.Version

// The QUIC versions this package implements.
const (
	// Version1 is QUIC version 1 (RFC 9000).
	Version1 = wire.Version1
	// Version2 is QUIC version 2 (RFC 9369).
	Version2 = wire.Version2
)
