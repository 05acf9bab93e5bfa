//go:build !race

package quic

// connIDRaceEnabled: see conn_id_race_enabled_test.go.
const connIDRaceEnabled = false
