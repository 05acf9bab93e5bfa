//go:build unix

package http3

import "syscall"

// processCPU returns the CPU time the process has used, user and system,
// in nanoseconds: benchmarks report it per operation (cpu-ns/op), which a
// loaded machine disturbs less than the wall time of ns/op.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
