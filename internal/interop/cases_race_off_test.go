//go:build !race

package interop

// raceDetector reports whether the tests run under the race detector.
const raceDetector = false
