//go:build !unix

package quic

import "time"

// processCPUTime returns 0 where getrusage is not available: benchmarks
// then report no CPU time.
func processCPUTime() time.Duration { return 0 }
