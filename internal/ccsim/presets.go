package ccsim

import (
	"time"

	"github.com/quicstack/quic/congestion"
)

// A Preset is one of the scenarios of the issue "Recovery, congestion
// control and flow control", for a given controller: the scenarios the
// package's property tests check and example/ccsim tabulates.
type Preset struct {
	// Name is a short name, such as "1bdp".
	Name string
	// Title describes the scenario, such as "100 Mbit/s, 40 ms, 1 BDP".
	Title string
	// Make returns the scenario with every flow using f, seeded with
	// seed.
	Make func(f congestion.ControllerFactory, seed uint64) Scenario
}

// Presets returns the scenarios:
//
//   - 1bdp: 100 Mbit/s, 40 ms RTT, a 1-BDP buffer, one flow for 30 s,
//     measured over seconds 5 to 30.
//   - loss1: the same with 1% random loss toward the receiver.
//   - 5bdp: the same without loss and a 5-BDP buffer.
//   - fairness: the 1bdp link shared by two flows, the second starting
//     5 s after the first, for 40 s, measured over seconds 10 to 40, with
//     FairnessJitter of host jitter on each flow's packets.
//   - fairness-nojitter: the same without jitter, where the perfectly
//     regular simulation shows drop-tail phase effects.
//   - transferloss: the interop runner's transferloss link, 10 Mbit/s,
//     30 ms RTT, a 25-packet queue and 2% loss in each direction, one
//     flow for 30 s, measured over seconds 5 to 30.
func Presets() []Preset {
	fast := func(name string, bdps, loss float64) func(congestion.ControllerFactory, uint64) Scenario {
		return func(f congestion.ControllerFactory, seed uint64) Scenario {
			return Scenario{
				Name: name, Bandwidth: 100_000_000, RTT: 40 * time.Millisecond,
				BufferBDP: bdps, LossProb: loss,
				Duration: 30 * time.Second, MeasureFrom: 5 * time.Second, Seed: seed,
				Flows: []Flow{{Controller: f}},
			}
		}
	}
	twoFlows := func(name string, f congestion.ControllerFactory, seed uint64) Scenario {
		sc := fast(name, 1, 0)(f, seed)
		sc.Duration, sc.MeasureFrom = 40*time.Second, 10*time.Second
		sc.Flows = []Flow{{Controller: f}, {Controller: f, Start: 5 * time.Second}}
		return sc
	}
	return []Preset{
		{"1bdp", "100 Mbit/s, 40 ms, 1 BDP", fast("1bdp", 1, 0)},
		{"loss1", "100 Mbit/s, 40 ms, 1 BDP, 1% loss", fast("loss1", 1, 0.01)},
		{"5bdp", "100 Mbit/s, 40 ms, 5 BDP", fast("5bdp", 5, 0)},
		{"fairness", "100 Mbit/s, 40 ms, 1 BDP, 2 flows (+5 s), 1 ms jitter", func(f congestion.ControllerFactory, seed uint64) Scenario {
			sc := twoFlows("fairness", f, seed)
			sc.Jitter = FairnessJitter
			return sc
		}},
		{"fairness-nojitter", "100 Mbit/s, 40 ms, 1 BDP, 2 flows (+5 s), no jitter", func(f congestion.ControllerFactory, seed uint64) Scenario {
			return twoFlows("fairness-nojitter", f, seed)
		}},
		{"transferloss", "10 Mbit/s, 30 ms, 25 packets, 2% loss", func(f congestion.ControllerFactory, seed uint64) Scenario {
			return Scenario{
				Name: "transferloss", Bandwidth: 10_000_000, RTT: 30 * time.Millisecond,
				BufferPackets: 25, LossProb: 0.02, ReverseLossProb: 0.02,
				Duration: 30 * time.Second, MeasureFrom: 5 * time.Second, Seed: seed,
				Flows: []Flow{{Controller: f}},
			}
		}},
	}
}

// FairnessJitter is the Scenario.Jitter of the fairness preset: each
// packet of a flow is held for a uniformly random time between 0 and 1 ms
// before it reaches the bottleneck.
//
// A real sender's packets never reach a bottleneck at exactly the instants
// its pacer computed: timer wake-ups, scheduling, interrupt coalescing and
// NIC batching on the sending host, and the links before the bottleneck,
// shift each one by tens of microseconds to a millisecond or more. The
// simulator has none of that, and two flows sharing a drop-tail queue then
// fall into phase effects (Floyd and Jacobson, "On Traffic Phase Effects
// in Packet-Switched Gateways", 1992): the few packets dropped at each
// overflow go to the flow whose packets happen to arrive just after a
// departure, not in proportion to the flows' rates. Floyd and Jacobson
// break the effect with a random delay of the order of the bottleneck's
// service time; 1 ms is about eight service times of a 1,480-byte packet at
// 100 Mbit/s and 2.5% of the 40 ms RTT, well within what hosts show.
const FairnessJitter = time.Millisecond

// PresetByName returns the preset called name.
func PresetByName(name string) (Preset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
