package masque

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
)

// ErrTargetProhibited is the error of DefaultPolicy for a target it
// refuses; the proxy answers 403 with "Proxy-Status: ...;
// error=destination_ip_prohibited" (RFC 9209, Section 2.3.5).
var ErrTargetProhibited = errors.New("masque: target address prohibited")

// DefaultPolicy refuses the targets through which a client could reach
// what the proxy's own network trusts: "the UDP proxy disallows UDP
// proxying requests to vulnerable targets, such as the UDP proxy's own
// addresses and localhost, link-local, multicast, and broadcast addresses"
// (RFC 9298, Section 7). It also refuses private (RFC 1918, RFC 4193),
// shared (100.64.0.0/10), unspecified and IPv4-mapped addresses of those,
// and the addresses of the proxy's network interfaces. It allows
// everything else: a proxy that only authenticated users may use sets
// Proxy.Authenticate too.
func DefaultPolicy(r *http.Request, target netip.AddrPort) error {
	a := target.Addr().Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsMulticast() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() ||
		a == netip.IPv4Unspecified() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) ||
		sharedAddressSpace.Contains(a) || isOwnAddress(a) {
		return ErrTargetProhibited
	}
	return nil
}

// sharedAddressSpace is 100.64.0.0/10 (RFC 6598), carrier-grade NAT.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// isOwnAddress reports whether a is an address of one of this host's
// network interfaces, or a broadcast address of one of their networks.
func isOwnAddress(a netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: refuse rather than risk it
	}
	for _, ia := range addrs {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if ip == a {
			return true
		}
		if ip.Is4() && a.Is4() && len(n.Mask) >= 4 {
			m := n.Mask[len(n.Mask)-4:]
			b, i := a.As4(), ip.As4()
			bcast := true
			for k := range 4 {
				if b[k]&m[k] != i[k]&m[k] || b[k]|m[k] != 0xff {
					bcast = false
				}
			}
			if bcast {
				return true
			}
		}
	}
	return false
}
