package netem

import (
	"net"
	"time"
)

// Direction is the direction a datagram travels through the proxy.
type Direction uint8

// The two directions.
const (
	ToServer Direction = iota
	ToClient
)

func (d Direction) String() string {
	if d == ToServer {
		return "to-server"
	}
	return "to-client"
}

// LinkConfig describes one direction of the emulated link.
type LinkConfig struct {
	// Bandwidth is the serialisation rate in bits per second; 0 means
	// unlimited (no serialisation delay and no queue).
	Bandwidth int64
	// Queue is how many datagrams may wait for the serialiser; a datagram
	// arriving at a full queue is dropped (tail drop). 0 means unlimited.
	Queue int
	// Delay is the fixed one-way propagation delay.
	Delay time.Duration
	// Jitter, if positive, adds a uniform random delay in [0, Jitter) to
	// each datagram, which may reorder them.
	Jitter time.Duration
}

// Rate is a per-direction random impairment: each datagram is selected
// with probability Percent/100 (the simulator draws a uniform integer in
// 0..99 and selects when it is below the rate), except that after Burst
// consecutive selections the next datagram is let through and the run
// restarts. Burst 0 means no cap.
type Rate struct {
	Percent int
	Burst   int
}

// Blackhole drops every datagram of the chosen directions from On after
// the proxy started, for Off, then lets traffic flow for On again, Repeat
// times (default 1), after which the link stays open.
type Blackhole struct {
	On, Off time.Duration
	Repeat  int
	// ToServer and ToClient select the directions; both false means both.
	ToServer, ToClient bool
}

// Rebind emulates a NAT in front of the client that gives every flow a new
// external port at First and then every Every.
type Rebind struct {
	First, Every time.Duration
	// Addr also changes the external address, to a random one of
	// 127.0.0.2 to 127.0.0.254 (IPv4 flows only).
	Addr bool
}

// Scenario lists the impairments of a run. Arrays are indexed by
// Direction. The zero value impairs nothing.
type Scenario struct {
	// DropList drops the datagrams of these 1-based indices, counted per
	// direction from the proxy's start (the simulator's droplist).
	DropList [2][]int
	// Drop drops datagrams at random (drop-rate).
	Drop [2]Rate
	// Corrupt replaces one byte at a random offset in [0, min(50, len-1)]
	// with a different random value (corrupt-rate). Version Negotiation
	// packets are never corrupted.
	Corrupt [2]Rate
	// CorruptDrops drops the datagrams Corrupt selects instead of
	// delivering them mutated: the behaviour of the current simulator.
	CorruptDrops bool
	// Blackhole, if On is positive, cuts the link for periods.
	Blackhole Blackhole
	// Duplicate delivers selected datagrams twice.
	Duplicate [2]Rate
	// Reorder delays selected datagrams by ReorderDelay more than the
	// others, so that later datagrams overtake them.
	Reorder      [2]Rate
	ReorderDelay time.Duration
	// Rebind, if First is positive, rebinds the client flows.
	Rebind Rebind
}

// Config configures a Proxy.
type Config struct {
	// Server is the server's address.
	Server *net.UDPAddr
	// Listen is the client-facing address, default "127.0.0.1:0" (or
	// "[::1]:0" for an IPv6 Server).
	Listen string
	// Link is the link of each direction, indexed by Direction.
	Link [2]LinkConfig
	// Scenario lists the impairments.
	Scenario Scenario
	// Seed seeds every random decision.
	Seed uint64
	// Logf, if not nil, receives a line per decision other than plain
	// delivery (drops, corruptions, duplicates, rebinds).
	Logf func(format string, args ...any)
	// ECN carries the ECN codepoint of each datagram across the relay
	// (RFC 3168; RFC 9000, Section 13.4): it reads it on receipt
	// (IP_RECVTOS, IPV6_RECVTCLASS) and sends the datagram with it
	// (IP_TOS, IPV6_TCLASS), and records it in the packet log. Linux
	// only: New fails elsewhere. Default false: the relay bleaches ECN,
	// like a path that does not support it.
	ECN bool
	// RecordBytes is how many bytes of a short-header datagram the packet
	// log keeps (long-header datagrams are kept whole); default 64.
	// Negative disables the packet log.
	RecordBytes int
}

// SimpleP2P returns the interop runner's default link for both directions,
// scaled by the caller: bandwidth in bits per second, one-way delay and
// queue length in datagrams ("simple-p2p --delay=15ms
// --bandwidth=10Mbps --queue=25").
func SimpleP2P(bandwidth int64, delay time.Duration, queue int) [2]LinkConfig {
	l := LinkConfig{Bandwidth: bandwidth, Queue: queue, Delay: delay}
	return [2]LinkConfig{l, l}
}
