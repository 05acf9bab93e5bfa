//go:build unix

package cli

import (
	"runtime"
	"syscall"
	"time"
)

// CPUTime returns the process's user and system CPU time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MaxRSS returns the process's peak resident set size in bytes.
func MaxRSS() uint64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return uint64(ru.Maxrss) // bytes there
	}
	return uint64(ru.Maxrss) * 1024 // kilobytes on Linux and the BSDs
}
