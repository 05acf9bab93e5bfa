// Package webtransport tests WebTransport over HTTP/3 between this
// library's package webtransport and quic-go's webtransport-go, in both
// directions. It is a module of its own because webtransport-go v0.13
// builds only with quic-go v0.62, older than the quic-go of the interop
// module.
package webtransport
