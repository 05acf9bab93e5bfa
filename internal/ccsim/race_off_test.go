//go:build !race

package ccsim

// raceEnabled reports that the race detector is on.
const raceEnabled = false
