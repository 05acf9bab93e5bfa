package ccsim

import (
	"time"

	"github.com/quicstack/quic/congestion"
)

// A Scenario describes a simulation: a bottleneck link, the flows that
// share it, how long to run and what to measure.
type Scenario struct {
	// Name labels the scenario in results and tables.
	Name string

	// Bandwidth is the bottleneck's rate in bits per second; required.
	Bandwidth int64
	// RTT is the round-trip propagation delay; each direction gets half.
	RTT time.Duration
	// BufferBDP sets the bottleneck's drop-tail queue limit in multiples
	// of the bandwidth-delay product, Bandwidth*RTT/8 bytes (wire bytes,
	// IP and UDP headers included). BufferPackets limits it in packets.
	// If both are set, both limits apply; if neither, the queue holds
	// one BDP.
	BufferBDP     float64
	BufferPackets int

	// LossProb is the probability that a datagram toward the receivers
	// is lost; ReverseLossProb that an ACK datagram is.
	LossProb        float64
	ReverseLossProb float64
	// ReorderProb is the probability that a datagram toward the
	// receivers is held back by ReorderDelay (default RTT/8) so that
	// later ones overtake it.
	ReorderProb  float64
	ReorderDelay time.Duration
	// CEProb is the probability that an ECN-capable datagram toward the
	// receivers is marked CE; CEThresholdBDP, if positive, marks those
	// that find at least that many BDPs queued ahead of them (step
	// marking, as DCTCP-style AQMs do).
	CEProb         float64
	CEThresholdBDP float64

	// BandwidthChanges change the bottleneck's Bandwidth during the run,
	// in order of At: from each change on, datagrams entering the
	// bottleneck are serialized at the new rate (as when a wireless or
	// cellular link changes its rate, or cross traffic takes a share of
	// a link). The queue limit stays the number of bytes computed from
	// the initial Bandwidth. Utilization is reported relative to the
	// Bandwidth at the end of the run, so a measurement window should not
	// span a change.
	BandwidthChanges []BandwidthChange

	// Jitter, if positive, holds each datagram toward the receivers for
	// a uniformly random time up to Jitter before it enters the
	// bottleneck, keeping their order: the scheduling jitter of real
	// hosts, which breaks the phase effects of a perfectly regular
	// simulation (Floyd and Jacobson, "On Traffic Phase Effects in
	// Packet-Switched Gateways", 1992). 0 means none.
	Jitter time.Duration

	// Flows are the flows sharing the link, at least one.
	Flows []Flow

	// Duration is the simulated time to run; required.
	Duration time.Duration
	// MeasureFrom and MeasureTo bound the window over which utilisation,
	// queueing delay, goodput and fairness are reported, as offsets from
	// the start. Defaults: 5 seconds (0 if Duration is 10 seconds or
	// less) and Duration.
	MeasureFrom, MeasureTo time.Duration
	// Interval is the width of the goodput windows; 0 means
	// DefaultInterval. MeasureFrom and MeasureTo are rounded down to a
	// multiple of it.
	Interval time.Duration

	// Seed seeds the link's randomness and, mixed with each flow's
	// index, the flows' controllers and packet number skipping. Runs
	// with the same seed give identical results.
	Seed uint64
	// MaxDatagramSize is the flows' datagram size (UDP payload); 0
	// means DefaultMaxDatagramSize.
	MaxDatagramSize int
}

// A BandwidthChange sets the bottleneck's rate to Bandwidth bits per
// second At the given offset from the start of the run.
type BandwidthChange struct {
	At        time.Duration
	Bandwidth int64
}

// A Flow is one bulk transfer of a Scenario.
type Flow struct {
	// Name labels the flow; default the controller's name.
	Name string
	// Controller makes the flow's congestion controller; nil means
	// congestion.NewCubic.
	Controller congestion.ControllerFactory
	// Start is when the flow starts sending, from the start of the run.
	Start time.Duration
	// Size is the number of stream bytes to transfer; 0 means unlimited.
	Size int64
	// DisableECN makes the flow send Not-ECT packets only.
	DisableECN bool
	// OnMetrics, if not nil, receives the flow's congestion control and
	// RTT figures whenever they change (SenderConfig.OnMetrics); times
	// start at netsim.Epoch.
	OnMetrics func(now time.Time, m Metrics)
}

// BDP returns the scenario's bandwidth-delay product in bytes.
func (sc *Scenario) BDP() int {
	return int(sc.Bandwidth / 8 * int64(sc.RTT) / int64(time.Second))
}

// withDefaults returns sc with its zero fields defaulted.
func (sc Scenario) withDefaults() Scenario {
	if sc.Interval <= 0 {
		sc.Interval = DefaultInterval
	}
	if sc.MaxDatagramSize == 0 {
		sc.MaxDatagramSize = DefaultMaxDatagramSize
	}
	if sc.BufferBDP <= 0 && sc.BufferPackets <= 0 {
		sc.BufferBDP = 1
	}
	if sc.ReorderDelay <= 0 {
		sc.ReorderDelay = sc.RTT / 8
	}
	if sc.MeasureTo <= 0 || sc.MeasureTo > sc.Duration {
		sc.MeasureTo = sc.Duration
	}
	if sc.MeasureFrom <= 0 && sc.Duration > 10*time.Second {
		sc.MeasureFrom = 5 * time.Second
	}
	sc.MeasureFrom = min(max(sc.MeasureFrom, 0), sc.MeasureTo)
	return sc
}

// flowSeed derives the seed of flow i from the scenario's seed
// (SplitMix64 of both), so that flows never share a seed.
func flowSeed(seed uint64, i int) uint64 {
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return z
}
