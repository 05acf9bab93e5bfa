//go:build !linux

package quic

import "os"

// ListenReusePort needs Linux; elsewhere it returns an error.
func ListenReusePort(network, address string, cfg ReusePortConfig) (*ReusePortGroup, error) {
	return nil, errReusePortUnsupported
}

// InheritReusePort needs Linux; elsewhere it returns an error.
func InheritReusePort(files []*os.File, prevGen int, mode InheritMode, cfg ReusePortConfig) (*ReusePortGroup, error) {
	return nil, errReusePortUnsupported
}

func (g *ReusePortGroup) attach(base, count int) error { return errReusePortUnsupported }
