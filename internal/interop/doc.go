// Package interop tests quicstack/quic against other QUIC implementations
// (quic-go and golang.org/x/net/quic) in both roles. It is a separate
// module so that the library's own dependency list stays clean.
package interop
