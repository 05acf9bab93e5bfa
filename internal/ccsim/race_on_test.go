//go:build race

package ccsim

// raceEnabled reports that the race detector is on. It slows the
// simulation down about sixteenfold, so the property tests then measure
// over shorter windows.
const raceEnabled = true
