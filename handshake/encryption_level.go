package handshake

import "crypto/tls"

// An EncryptionLevel is one of the four sets of keys a QUIC connection uses
// in turn (RFC 9001, Section 4.1.4). Initial, Handshake and Application
// each have their own packet number space; EarlyData (0-RTT) shares the
// Application space.
type EncryptionLevel uint8

const (
	// LevelInitial protects Initial packets with keys derived from the
	// client's first destination connection ID.
	LevelInitial EncryptionLevel = iota
	// LevelEarlyData protects 0-RTT packets.
	LevelEarlyData
	// LevelHandshake protects Handshake packets.
	LevelHandshake
	// LevelApplication protects 1-RTT packets.
	LevelApplication
)

// String returns "Initial", "0-RTT", "Handshake" or "1-RTT".
func (l EncryptionLevel) String() string {
	switch l {
	case LevelInitial:
		return "Initial"
	case LevelEarlyData:
		return "0-RTT"
	case LevelHandshake:
		return "Handshake"
	case LevelApplication:
		return "1-RTT"
	}
	return "unknown"
}

func levelFromTLS(l tls.QUICEncryptionLevel) EncryptionLevel {
	switch l {
	case tls.QUICEncryptionLevelEarly:
		return LevelEarlyData
	case tls.QUICEncryptionLevelHandshake:
		return LevelHandshake
	case tls.QUICEncryptionLevelApplication:
		return LevelApplication
	}
	return LevelInitial
}

func (l EncryptionLevel) tls() tls.QUICEncryptionLevel {
	switch l {
	case LevelEarlyData:
		return tls.QUICEncryptionLevelEarly
	case LevelHandshake:
		return tls.QUICEncryptionLevelHandshake
	case LevelApplication:
		return tls.QUICEncryptionLevelApplication
	}
	return tls.QUICEncryptionLevelInitial
}
