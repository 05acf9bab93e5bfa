//go:build !unix

package cli

import "time"

// CPUTime returns the process's CPU time; 0 where it is not measured.
func CPUTime() time.Duration { return 0 }

// MaxRSS returns the process's peak resident set size; 0 where it is not
// measured.
func MaxRSS() uint64 { return 0 }
