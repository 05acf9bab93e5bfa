//go:build windows

package quic

import "syscall"

// On Windows an ICMP port unreachable for a datagram sent earlier makes
// the next read of the socket fail with WSAECONNRESET, whether the socket
// is connected or not.
func init() {
	transientSocketErrors = append(transientSocketErrors, syscall.WSAECONNRESET, syscall.Errno(10040) /* WSAEMSGSIZE */)
}
