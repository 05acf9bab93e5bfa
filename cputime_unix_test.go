//go:build unix

package quic

import (
	"syscall"
	"time"
)

// processCPUTime returns the user and system CPU time the process used so
// far, for benchmarks that report CPU per byte as well as wall time.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
