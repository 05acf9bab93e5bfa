//go:build !race

package quiclb

// raceEnabled: see race_enabled_test.go.
const raceEnabled = false
