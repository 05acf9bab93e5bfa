// Package netem is a userspace UDP impairment relay for loopback tests: it
// sits between a QUIC client and a server and emulates the QUIC interop
// runner's network simulator (quic-network-simulator, see
// shared/specs/INTEROP.md, Section 3), since tests cannot rely on the
// kernel's netem.
//
// A Proxy listens on a client-facing UDP socket and forwards every client
// flow (client address) to the server through an upstream socket of its
// own, so that the server sees one address per client flow, as behind a
// NAT. Each direction has:
//
//   - a link (link.go): a token-bucket serialiser at Link.Bandwidth in
//     front of which at most Link.Queue datagrams wait (tail drop when
//     full), then a fixed one-way Link.Delay plus optional uniform
//     Link.Jitter;
//   - the simulator's scenarios (decide.go), applied to each datagram as
//     it arrives, before it is queued: droplist (1-based datagram indices
//     per direction), drop-rate with a burst cap, corrupt-rate (one byte
//     among the first 51 replaced by a different value and the datagram
//     delivered, or dropped with CorruptDrops; Version Negotiation packets
//     are never corrupted), blackhole on/off periods, duplication and
//     reordering (an extra delay for some datagrams);
//   - rebind (proxy.go): at Rebind.First and then every Rebind.Every, each
//     flow gets a new upstream socket, so a new source port, and with
//     Rebind.Addr a new source address among 127.0.0.2 to 127.0.0.254;
//     server datagrams sent to the old address are lost with the old
//     socket, as in the simulator's NAT.
//
// Every random decision comes from a PCG generator seeded with
// Config.Seed and the direction, so a run's decisions depend only on the
// sequence of datagrams in each direction: a failure reproduces with the
// same seed. Decisions other than plain delivery are logged through
// Config.Logf.
//
// The proxy records a packet log (Proxy.Log): the arrival time, direction,
// size, verdict and the bytes of each datagram (all of a long-header
// datagram, the first bytes of a short-header one). inspect.go parses
// these with the wire package: packet types, versions, connection IDs and
// tokens of every coalesced long-header packet, and, with the Initial keys
// it derives from the client's Destination Connection IDs, the packet
// numbers and CRYPTO frames of Initial packets.
//
// The proxy bleaches ECN (it relays payloads only) and relays one server
// address.
package netem
