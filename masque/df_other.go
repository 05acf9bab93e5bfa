//go:build !linux

package masque

import "net"

// setDontFragment does nothing where this package does not know how to
// set the Don't Fragment bit (RFC 9298, Section 3.1: "if possible").
func setDontFragment(c *net.UDPConn, v6 bool) error { return nil }
