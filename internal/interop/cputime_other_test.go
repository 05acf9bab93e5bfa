//go:build !unix

package interop

import "time"

// cpuTime returns 0 where getrusage(2) is not available; benchmarks then
// report no CPU time per operation.
func cpuTime() time.Duration { return 0 }
