//go:build !linux

package http3

// tcpOpen reports whether the TCP connection on fd is still established;
// ok is false where this cannot be known without reading from the socket
// (here): pre-dialed connections then rely on predialTTL alone.
func tcpOpen(fd uintptr) (open, ok bool) { return false, false }
