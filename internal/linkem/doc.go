// Package linkem emulates a network link that real kernel TCP and UDP
// cross alike: two network namespaces, A and B, joined through TUN
// devices by a forwarder that delays, loses, rate-limits, reorders and
// duplicates the IP packets between them, with its own parameters in each
// direction. The kernel here has no netem qdisc, and package netem relays
// UDP only; this is the way to compare QUIC with TCP under the same
// conditions. docs/linkem.md describes the model, the profiles and their
// sources, and the measured accuracy.
//
// The emulation itself is Link, a state machine that is handed time: it
// takes packets and the time they arrive, and returns the packets whose
// time has come and the next deadline. Each direction passes a packet
// through duplication, a FIFO byte queue in front of a serialiser at the
// rate, random and Gilbert-Elliott loss, the propagation delay with its
// jitter, and reordering (see Params). Every decision is seeded.
//
// Pair (Linux, root) makes the namespaces and the TUN devices and runs one
// Link per direction in a forwarding process of real-time threads, which
// wait for the next deadline with a nanosecond timeout; Do, Command,
// Listen, ListenPacket and Dial reach inside the namespaces, Ping measures
// the round trip, SetParams changes a direction while it runs. The
// program example/linkem is the command-line front end.
package linkem
