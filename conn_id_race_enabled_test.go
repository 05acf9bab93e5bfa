//go:build race

package quic

// connIDRaceEnabled is true when tests run under the race detector, whose
// instrumentation makes some values escape to the heap; allocation counts
// are then asserted in the non-race pass of `make test` only.
const connIDRaceEnabled = true
