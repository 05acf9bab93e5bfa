//go:build !linux

// Command linkem needs Linux: network namespaces and TUN devices.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "linkem: needs Linux (network namespaces and TUN devices)")
	os.Exit(1)
}
