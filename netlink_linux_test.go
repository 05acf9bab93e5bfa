package quic

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// routeReply builds the kernel's answer to a route query: an RTM_NEWROUTE
// message with the given attributes.
func routeReply(seq uint32, attrs map[uint16][]byte) []byte {
	var a []byte
	for typ, v := range attrs {
		l := unix.SizeofRtAttr + len(v)
		h := make([]byte, unix.SizeofRtAttr)
		binary.NativeEndian.PutUint16(h[0:2], uint16(l))
		binary.NativeEndian.PutUint16(h[2:4], typ)
		a = append(a, h...)
		a = append(a, v...)
		for len(a)%4 != 0 {
			a = append(a, 0)
		}
	}
	n := unix.SizeofNlMsghdr + unix.SizeofRtMsg + len(a)
	b := make([]byte, unix.SizeofNlMsghdr+unix.SizeofRtMsg, n)
	binary.NativeEndian.PutUint32(b[0:4], uint32(n))
	binary.NativeEndian.PutUint16(b[4:6], unix.RTM_NEWROUTE)
	binary.NativeEndian.PutUint32(b[8:12], seq)
	return append(b, a...)
}

func TestParseRouteReply(t *testing.T) {
	oif := binary.NativeEndian.AppendUint32(nil, 7)
	b := routeReply(5, map[uint16][]byte{unix.RTA_PREFSRC: {10, 2, 0, 2}, unix.RTA_OIF: oif})
	src, i, ok, err := parseRouteReply(b, 5)
	if err != nil || !ok || src != netip.MustParseAddr("10.2.0.2") || i != 7 {
		t.Fatalf("got %v %d %v %v", src, i, ok, err)
	}
	if _, _, _, err := parseRouteReply(b, 6); err == nil {
		t.Fatal("reply to another query accepted")
	}
	// No route: the kernel answers with an error message.
	e := make([]byte, unix.SizeofNlMsghdr+4)
	binary.NativeEndian.PutUint32(e[0:4], uint32(len(e)))
	binary.NativeEndian.PutUint16(e[4:6], unix.NLMSG_ERROR)
	binary.NativeEndian.PutUint32(e[8:12], 9)
	if _, _, ok, err := parseRouteReply(e, 9); ok || err != nil {
		t.Fatalf("no route: %v %v", ok, err)
	}
	// The query as `ip route get` sends it.
	q := routeQuery(3, netip.MustParseAddr("10.9.0.1"))
	msgs, err := parseNetlink(q, 8)
	if err != nil || len(msgs) != 1 || msgs[0].typ != unix.RTM_GETROUTE || msgs[0].seq != 3 {
		t.Fatalf("query %x: %+v %v", q, msgs, err)
	}
}

// The route query and the reply parser against this system's kernel: the
// route to the loopback address leaves from it.
func TestRouteSourceLoopback(t *testing.T) {
	src, ok := (&netEnv{nsfd: -1}).routeSource(netip.MustParseAddr("127.0.0.1"))
	if !ok || src != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("route source of 127.0.0.1: %v %v", src, ok)
	}
}

// FuzzParseNetlink checks that the netlink parsers never panic or read
// out of bounds, whatever the datagram.
func FuzzParseNetlink(f *testing.F) {
	f.Add(routeReply(1, map[uint16][]byte{unix.RTA_PREFSRC: {10, 2, 0, 2}}), uint32(1))
	f.Add(routeReply(1, map[uint16][]byte{unix.RTA_PREFSRC: netip.MustParseAddr("2001:db8::1").AsSlice(), unix.RTA_OIF: {1, 0, 0, 0}}), uint32(1))
	f.Add(routeQuery(2, netip.MustParseAddr("192.0.2.1")), uint32(2))
	f.Fuzz(func(t *testing.T, b []byte, seq uint32) {
		msgs, _ := parseNetlink(b, maxNetlinkMessages)
		if len(msgs) > maxNetlinkMessages {
			t.Fatalf("%d messages", len(msgs))
		}
		for _, m := range msgs {
			netlinkAttrs(m.data, func(uint16, []byte) bool { return true })
			isNetworkChange(m.typ)
		}
		if src, _, ok, err := parseRouteReply(b, seq); ok && (err != nil || !src.IsValid()) {
			t.Fatalf("route %v ok with error %v", src, err)
		}
	})
}
