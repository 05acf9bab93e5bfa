// Package tsharktest checks, with Wireshark's tshark, that the key logs
// the example programs write let a packet capture of this library's QUIC
// be decrypted down to STREAM frames. Its test is built only with the
// "tshark" build tag and needs tshark and the right to capture on the
// loopback interface; run it with `make check-tshark`, which installs
// Debian's tshark when missing.
package tsharktest
