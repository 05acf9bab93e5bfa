//go:build race

package quic

// followSize is the download of the FollowNetwork namespace tests. Under
// the race detector, whose instrumentation makes a 50 MB transfer take
// most of a minute, it is 6 MB: the network still changes in its middle.
// make test runs the tests again without it (NORACE) with 50 MB.
const followSize = 6 << 20
