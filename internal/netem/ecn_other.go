//go:build !linux

package netem

import (
	"errors"
	"net"
)

// ecnSupported reports whether the relay can carry ECN marks here.
const ecnSupported = false

func enableECN(*net.UDPConn, bool) error { return errors.New("netem: ECN relaying needs Linux") }

func parseECN([]byte) byte { return 0 }

func ecnControl(byte, bool) []byte { return nil }
