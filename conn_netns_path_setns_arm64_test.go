//go:build linux

package quic

// pathSysSetns is the setns(2) system call number on linux/arm64.
const pathSysSetns = 268
