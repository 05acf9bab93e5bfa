//go:build linux

package netem

import (
	"encoding/binary"
	"net"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ecnSupported reports whether the relay can carry ECN marks here.
const ecnSupported = true

// enableECN asks the kernel to report the TOS byte (IPv4) or traffic
// class (IPv6) of each datagram received on c: IP_RECVTOS,
// IPV6_RECVTCLASS. The low two bits are the ECN codepoint (RFC 3168,
// Section 5).
func enableECN(c *net.UDPConn, v6 bool) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		if v6 {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1)
		} else {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
		}
	}); err != nil {
		return err
	}
	return serr
}

// parseECN returns the ECN codepoint in the control messages of a
// received datagram, 0 (Not-ECT) if there is none.
func parseECN(oob []byte) byte {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) >= 1:
			return m.Data[0] & 0b11
		case m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_TCLASS && len(m.Data) >= 4:
			return byte(binary.NativeEndian.Uint32(m.Data)) & 0b11
		}
	}
	return 0
}

// ecnControl returns the control message that sends a datagram with ECN
// codepoint ecn (IP_TOS or IPV6_TCLASS), nil for Not-ECT.
func ecnControl(ecn byte, v6 bool) []byte {
	if ecn == 0 {
		return nil
	}
	b := make([]byte, unix.CmsgSpace(4))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.IPPROTO_IP, unix.IP_TOS
	if v6 {
		h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_TCLASS
	}
	h.SetLen(unix.CmsgLen(4))
	binary.NativeEndian.PutUint32(b[unix.CmsgLen(0):], uint32(ecn))
	return b
}
