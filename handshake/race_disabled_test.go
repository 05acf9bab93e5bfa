//go:build !race

package handshake

// raceEnabled: see race_enabled_test.go.
const raceEnabled = false
