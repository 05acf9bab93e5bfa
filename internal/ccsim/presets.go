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
//     5 s after the first, for 40 s, measured over seconds 10 to 40.
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
	return []Preset{
		{"1bdp", "100 Mbit/s, 40 ms, 1 BDP", fast("1bdp", 1, 0)},
		{"loss1", "100 Mbit/s, 40 ms, 1 BDP, 1% loss", fast("loss1", 1, 0.01)},
		{"5bdp", "100 Mbit/s, 40 ms, 5 BDP", fast("5bdp", 5, 0)},
		{"fairness", "100 Mbit/s, 40 ms, 1 BDP, 2 flows (+5 s)", func(f congestion.ControllerFactory, seed uint64) Scenario {
			sc := fast("fairness", 1, 0)(f, seed)
			sc.Duration, sc.MeasureFrom = 40*time.Second, 10*time.Second
			sc.Flows = []Flow{{Controller: f}, {Controller: f, Start: 5 * time.Second}}
			return sc
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

// PresetByName returns the preset called name.
func PresetByName(name string) (Preset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
