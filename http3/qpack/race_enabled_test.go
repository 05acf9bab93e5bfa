//go:build race

package qpack

// raceEnabled is true under the race detector, whose instrumentation makes
// some values escape to the heap; allocation counts are asserted in the
// non-race pass of `make test` only.
const raceEnabled = true
