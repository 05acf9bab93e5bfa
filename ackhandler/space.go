package ackhandler

// A Space is a packet number space (RFC 9000, Section 12.3): "Initial
// space", "Handshake space" and "application data space", the last shared
// by 0-RTT and 1-RTT packets.
type Space uint8

// The packet number spaces, in the order RFC 9002, Appendix A iterates
// them.
const (
	SpaceInitial Space = iota
	SpaceHandshake
	SpaceApplication
)

// spaceCount is the number of packet number spaces.
const spaceCount = 3

// String returns "initial", "handshake" or "application_data", the names
// qlog uses.
func (s Space) String() string {
	switch s {
	case SpaceInitial:
		return "initial"
	case SpaceHandshake:
		return "handshake"
	case SpaceApplication:
		return "application_data"
	}
	return "invalid"
}
