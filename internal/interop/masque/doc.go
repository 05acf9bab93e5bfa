// Package masque tests CONNECT-UDP (RFC 9298) between this library's
// package masque and quic-go's masque-go, in both roles: masque-go's
// client through our proxy and our client through masque-go's proxy,
// with plain UDP and with QUIC inside the tunnel. It is a module of its
// own because masque-go pins a quic-go release older than the interop
// module's, and masque-go is vendored here (masque-go/ORIGIN.md) because
// the module proxy used to develop this project refuses it.
package masque
