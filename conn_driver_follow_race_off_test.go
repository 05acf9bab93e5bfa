//go:build !race

package quic

// followSize is the download of the FollowNetwork namespace tests: 50 MB
// (6 MB under the race detector, see conn_driver_follow_race_on_test.go).
const followSize = 50 << 20
