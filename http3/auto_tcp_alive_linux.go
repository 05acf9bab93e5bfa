package http3

import "golang.org/x/sys/unix"

// tcpOpen reports whether the TCP connection on fd is still established:
// the peer has sent neither FIN nor RST. It reads the kernel's state of
// the connection (TCP_INFO), so it neither blocks nor consumes the bytes
// waiting on the socket (the server's SETTINGS, a session ticket), which
// belong to the TLS connection and net/http. ok is false if the state
// cannot be read.
func tcpOpen(fd uintptr) (open, ok bool) {
	info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return false, false
	}
	return info.State == tcpEstablished, true
}

// tcpEstablished is TCP_ESTABLISHED of Linux's include/net/tcp_states.h.
const tcpEstablished = 1
