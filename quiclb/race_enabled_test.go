//go:build race

package quiclb

// raceEnabled is true under the race detector, which makes sync.Pool
// drop items at random; allocation counts are asserted without it (the
// second pass of make test).
const raceEnabled = true
