//go:build race

package handshake

// raceEnabled is true when tests run under the race detector, which makes
// sync.Pool drop items at random; allocation counts of pooled code are then
// meaningless, so those assertions run in the non-race pass of `make test`.
const raceEnabled = true
