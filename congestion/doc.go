// Package congestion holds RTT estimation, congestion controllers and the
// pacer of a QUIC connection (RFC 9002).
//
// A connection chooses its controller through a ControllerFactory. The
// package provides NewReno (RFC 9002, Section 7, the reference), Cubic
// (RFC 9438 with HyStart++, RFC 9406; the default) and BBR
// (draft-ietf-ccwg-bbr, BBRv3, with two documented departures in its loss
// response outside bandwidth probing; see NewBBR), and applications may
// implement Controller themselves.
//
// Nothing here reads the clock: every method that depends on time takes
// now. Controllers are owned by one connection goroutine and are not safe
// for concurrent use. Their per-packet methods allocate nothing.
package congestion
