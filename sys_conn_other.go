//go:build !linux

package quic

import (
	"errors"
	"net"
)

// Platforms other than Linux use the portable socket layer (basicConn):
// one datagram per system call, no offloads, no ECN.

// txScratch is empty: the portable layer needs no per-batch state.
type txScratch struct{}

func newTxScratch(int) txScratch { return txScratch{} }

var errNoOptimizedConn = errors.New("quic: no optimized socket layer on this platform")

func newOptimizedConn(*net.UDPConn, socketOptions) (sysConn, error) { return nil, errNoOptimizedConn }

// socketBufferSizes is not known on this platform.
func socketBufferSizes(net.PacketConn) (rcv, snd int) { return 0, 0 }

// isMsgTooBig is false: on this platform the connection learns of a path
// MTU probe that was too large from its loss.
func isMsgTooBig(error) bool { return false }
