//go:build !unix

package http3

// processCPU is not measured on this platform.
func processCPU() int64 { return 0 }
