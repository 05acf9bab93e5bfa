package linkem

import (
	"fmt"
	"net/netip"
	"os"
	"sync/atomic"
)

// pairCount numbers the pairs this process makes, for their default names.
var pairCount atomic.Uint64

// Side names one of the two namespaces of a Pair. A plays the user's
// device and B the server in the profiles, but nothing else tells them
// apart.
type Side int

// The two sides.
const (
	A Side = 0
	B Side = 1
)

func (s Side) String() string {
	if s == A {
		return "A"
	}
	return "B"
}

// Dir names a direction of a Pair's link.
type Dir int

// The two directions: AB carries packets from A to B (the uplink in the
// profiles), BA from B to A.
const (
	AB Dir = 0
	BA Dir = 1
)

func (d Dir) String() string {
	if d == AB {
		return "A→B"
	}
	return "B→A"
}

// Config configures a Pair. The zero value is a perfect link between
// 10.77.0.1 and 10.77.0.2 with an MTU of 1,500 bytes.
type Config struct {
	// Name names the pair: its namespaces are Name+"-a" and Name+"-b".
	// Default "linkem<pid>-<n>", n counting the pairs this process made.
	// At most 40 bytes of letters, digits, '-', '_' and '.'.
	Name string
	// AddrA and AddrB are the addresses of the TUN devices in A and B,
	// IPv4, in one subnet. Default 10.77.0.1/24 and 10.77.0.2/24.
	AddrA, AddrB netip.Prefix
	// MTU is the MTU of the TUN devices. Default 1,500; at least 576 and
	// at most 65,535.
	MTU int
	// AB and BA are the parameters of the two directions.
	AB, BA Params
	// Seed seeds the random decisions of the links; direction BA uses
	// Seed+1.
	Seed uint64
	// InProcess runs the forwarding threads in this process instead of
	// a process of their own (see New). The emulation is then only as
	// punctual as this process's scheduler lets it be: a busy program
	// delays its packets by milliseconds.
	InProcess bool
	// NoRealTime leaves the forwarding threads in the normal scheduling
	// class. By default they ask for real-time scheduling (SCHED_FIFO,
	// priority 20), which root gets, so that the emulated delays hold on
	// a loaded machine; Stats.RealTime tells whether they got it.
	NoRealTime bool
	// MaxPackets bounds the packets each direction holds
	// (LinkOptions.MaxPackets); default DefaultMaxPackets. With MTU
	// bytes each, it bounds the memory of the pair.
	MaxPackets int
}

// setDefaults fills in the defaults and checks the rest.
func (c *Config) setDefaults() error {
	if c.Name == "" {
		c.Name = fmt.Sprintf("linkem%d-%d", os.Getpid(), pairCount.Add(1))
	}
	if len(c.Name) > 40 {
		return fmt.Errorf("linkem: name %q longer than 40 bytes", c.Name)
	}
	for _, r := range c.Name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("linkem: name %q: only letters, digits, '-', '_' and '.'", c.Name)
		}
	}
	if !c.AddrA.IsValid() {
		c.AddrA = netip.MustParsePrefix("10.77.0.1/24")
	}
	if !c.AddrB.IsValid() {
		c.AddrB = netip.MustParsePrefix("10.77.0.2/24")
	}
	if !c.AddrA.Addr().Is4() || !c.AddrB.Addr().Is4() || c.AddrA.Masked() != c.AddrB.Masked() || c.AddrA.Addr() == c.AddrB.Addr() {
		return fmt.Errorf("linkem: addresses %v and %v: want two IPv4 addresses of one subnet", c.AddrA, c.AddrB)
	}
	if c.MTU == 0 {
		c.MTU = 1500
	}
	if c.MTU < 576 || c.MTU > 65535 {
		return fmt.Errorf("linkem: MTU %d out of [576, 65535]", c.MTU)
	}
	if err := c.AB.Validate(); err != nil {
		return fmt.Errorf("A→B: %w", err)
	}
	if err := c.BA.Validate(); err != nil {
		return fmt.Errorf("B→A: %w", err)
	}
	if c.MaxPackets <= 0 {
		c.MaxPackets = DefaultMaxPackets
	}
	return nil
}

// Stats are the counters of one direction of a Pair.
type Stats struct {
	LinkStats
	// Late is how late the forwarder wrote the packets compared with the
	// times the link gave them.
	Late Lateness
	// ReadErrors and WriteErrors count failed reads and writes of the TUN
	// devices, LastError is the last of them.
	ReadErrors, WriteErrors uint64
	LastError               error
	// RealTime reports whether the forwarding thread runs with real-time
	// scheduling (Config.NoRealTime).
	RealTime bool
}
