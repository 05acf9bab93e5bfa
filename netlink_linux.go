package quic

import (
	"encoding/binary"
	"errors"
	"net/netip"

	"golang.org/x/sys/unix"
)

// Netlink (rtnetlink, RFC 3549; the Linux kernel's
// include/uapi/linux/netlink.h and rtnetlink.h) as FollowNetwork uses it:
// the messages that announce address and route changes, and the route
// query that tells which local address the kernel would use to reach the
// peer. These parsers read what the kernel sends; they are bounded and
// fuzzed all the same.

// netlinkAlign rounds n up to the netlink alignment, 4 bytes (NLMSG_ALIGN,
// RTA_ALIGN).
func netlinkAlign(n int) int { return (n + 3) &^ 3 }

var errNetlink = errors.New("quic: malformed netlink message")

// netlinkMessage is one message of a netlink datagram.
type netlinkMessage struct {
	typ  uint16
	seq  uint32
	data []byte // the payload after the header
}

// parseNetlink splits a netlink datagram into its messages (at most max).
func parseNetlink(b []byte, max int) ([]netlinkMessage, error) {
	var msgs []netlinkMessage
	for len(b) >= unix.SizeofNlMsghdr {
		if len(msgs) == max {
			return msgs, nil
		}
		l := int(binary.NativeEndian.Uint32(b[0:4]))
		if l < unix.SizeofNlMsghdr || l > len(b) {
			return msgs, errNetlink
		}
		msgs = append(msgs, netlinkMessage{
			typ:  binary.NativeEndian.Uint16(b[4:6]),
			seq:  binary.NativeEndian.Uint32(b[8:12]),
			data: b[unix.SizeofNlMsghdr:l],
		})
		b = b[min(netlinkAlign(l), len(b)):]
	}
	return msgs, nil
}

// netlinkAttrs calls f for each route attribute (struct rtattr) in b,
// until f returns false.
func netlinkAttrs(b []byte, f func(typ uint16, v []byte) bool) error {
	for len(b) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		if l < unix.SizeofRtAttr || l > len(b) {
			return errNetlink
		}
		if !f(binary.NativeEndian.Uint16(b[2:4]), b[unix.SizeofRtAttr:l]) {
			return nil
		}
		b = b[min(netlinkAlign(l), len(b)):]
	}
	return nil
}

// routeQuery builds an RTM_GETROUTE request for the route to dst, as
// `ip route get` sends it.
func routeQuery(seq uint32, dst netip.Addr) []byte {
	family, alen := unix.AF_INET, 4
	if dst.Is6() && !dst.Is4In6() {
		family, alen = unix.AF_INET6, 16
	}
	dst = dst.Unmap()
	attrLen := unix.SizeofRtAttr + alen
	n := unix.SizeofNlMsghdr + unix.SizeofRtMsg + netlinkAlign(attrLen)
	b := make([]byte, n)
	binary.NativeEndian.PutUint32(b[0:4], uint32(n))
	binary.NativeEndian.PutUint16(b[4:6], unix.RTM_GETROUTE)
	binary.NativeEndian.PutUint16(b[6:8], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(b[8:12], seq)
	rt := b[unix.SizeofNlMsghdr:]
	rt[0] = byte(family)   // rtm_family
	rt[1] = byte(alen * 8) // rtm_dst_len
	a := rt[unix.SizeofRtMsg:]
	binary.NativeEndian.PutUint16(a[0:2], uint16(attrLen))
	binary.NativeEndian.PutUint16(a[2:4], unix.RTA_DST)
	copy(a[unix.SizeofRtAttr:], dst.AsSlice())
	return b
}

// parseRouteReply reads the answer to routeQuery number seq: the
// preferred source address of the route (RTA_PREFSRC) and its output
// interface (RTA_OIF). ok is false if the kernel has no route (its error
// message, ENETUNREACH), or the reply holds no source.
func parseRouteReply(b []byte, seq uint32) (src netip.Addr, oif int, ok bool, err error) {
	msgs, err := parseNetlink(b, 8)
	if err != nil {
		return netip.Addr{}, 0, false, err
	}
	for _, m := range msgs {
		if m.seq != seq {
			continue
		}
		switch m.typ {
		case unix.NLMSG_ERROR:
			return netip.Addr{}, 0, false, nil
		case unix.RTM_NEWROUTE:
			if len(m.data) < unix.SizeofRtMsg {
				return netip.Addr{}, 0, false, errNetlink
			}
			err := netlinkAttrs(m.data[unix.SizeofRtMsg:], func(typ uint16, v []byte) bool {
				switch typ {
				case unix.RTA_PREFSRC:
					if a, good := netip.AddrFromSlice(v); good {
						src = a.Unmap()
					}
				case unix.RTA_OIF:
					if len(v) == 4 {
						oif = int(binary.NativeEndian.Uint32(v))
					}
				}
				return true
			})
			if err != nil {
				return netip.Addr{}, 0, false, err
			}
			return src, oif, src.IsValid(), nil
		}
	}
	return netip.Addr{}, 0, false, errNetlink
}

// isNetworkChange reports whether a netlink message announces a change of
// addresses or routes.
func isNetworkChange(typ uint16) bool {
	switch typ {
	case unix.RTM_NEWADDR, unix.RTM_DELADDR, unix.RTM_NEWROUTE, unix.RTM_DELROUTE, unix.RTM_NEWLINK, unix.RTM_DELLINK:
		return true
	}
	return false
}
