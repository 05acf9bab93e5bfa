//go:build race

package http3

// raceEnabled is true under the race detector, whose instrumentation makes
// some values escape to the heap and sync.Pool drop items at random;
// allocation counts are asserted in the non-race pass of `make test` only.
const raceEnabled = true
