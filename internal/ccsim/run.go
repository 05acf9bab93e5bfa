package ccsim

import (
	"github.com/quicstack/quic/internal/netsim"
)

// Host numbers of the topology: senders on one side of the bottleneck,
// receivers on the other.
const (
	senderHost   = 1
	receiverHost = 2
	jitterHost   = 3
)

// Run simulates sc and returns what was measured. It panics if sc has no
// Bandwidth, Duration or flows. Run is deterministic: the same Scenario
// gives the same Result, bit for bit. Distinct calls may run in parallel.
func Run(sc Scenario) Result {
	sc = sc.withDefaults()
	if sc.Bandwidth <= 0 || sc.Duration <= 0 || len(sc.Flows) == 0 {
		panic("ccsim: a Scenario needs a Bandwidth, a Duration and flows")
	}
	sim := netsim.NewSim()
	nw := netsim.NewNetwork(sim, sc.Seed)
	bdp := sc.BDP()
	fwd := netsim.LinkConfig{
		Name:          "bottleneck",
		Bandwidth:     sc.Bandwidth,
		Delay:         sc.RTT / 2,
		Overhead:      ipUDPOverhead,
		QueuePackets:  sc.BufferPackets,
		LossProb:      sc.LossProb,
		ReorderProb:   sc.ReorderProb,
		ReorderDelay:  sc.ReorderDelay,
		CEProb:        sc.CEProb,
		StatsInterval: sc.Interval,
	}
	if sc.BufferBDP > 0 {
		fwd.QueueBytes = max(int(sc.BufferBDP*float64(bdp)), sc.MaxDatagramSize+ipUDPOverhead)
	}
	if sc.CEThresholdBDP > 0 {
		fwd.CEThresholdBytes = max(int(sc.CEThresholdBDP*float64(bdp)), 1)
	}
	rev := netsim.LinkConfig{
		Name:          "return",
		Bandwidth:     sc.Bandwidth,
		Delay:         sc.RTT / 2,
		Overhead:      ipUDPOverhead,
		LossProb:      sc.ReverseLossProb,
		StatsInterval: sc.Interval,
	}
	path := nw.Connect(senderHost, receiverHost, fwd, rev)
	for _, c := range sc.BandwidthChanges {
		if c.Bandwidth <= 0 {
			panic("ccsim: a BandwidthChange needs a positive Bandwidth")
		}
		sim.At(netsim.Epoch().Add(c.At), func() {
			cfg := path.AB.Config()
			cfg.Bandwidth = c.Bandwidth
			path.AB.SetConfig(cfg)
		})
	}
	if sc.Jitter > 0 {
		nw.SetRoute(senderHost, jitterHost, nw.NewLink(netsim.LinkConfig{Name: "jitter"}))
	}

	windows := int(sc.Duration/sc.Interval) + 1
	senders := make([]*Sender, len(sc.Flows))
	receivers := make([]*Receiver, len(sc.Flows))
	for i, f := range sc.Flows {
		saddr := netsim.Addr{Host: senderHost, Port: uint16(1000 + i)}
		raddr := netsim.Addr{Host: receiverHost, Port: uint16(1000 + i)}
		peer := raddr
		if sc.Jitter > 0 {
			peer = netsim.Addr{Host: jitterHost, Port: uint16(1000 + i)}
			nw.Attach(peer, newJitterRelay(saddr, raddr, sc.Jitter, flowSeed(sc.Seed^0x6a6974, i)))
		}
		senders[i] = NewSender(SenderConfig{
			Peer:            peer,
			Controller:      f.Controller,
			Seed:            flowSeed(sc.Seed, i),
			MaxDatagramSize: sc.MaxDatagramSize,
			Start:           netsim.Epoch().Add(f.Start),
			Size:            f.Size,
			Interval:        sc.Interval,
			Windows:         windows,
			DisableECN:      f.DisableECN,
			OnMetrics:       f.OnMetrics,
		})
		receivers[i] = NewReceiver()
		nw.Attach(raddr, receivers[i])
		nw.Attach(saddr, senders[i])
	}
	sim.RunFor(sc.Duration)

	from, to := netsim.Epoch().Add(sc.MeasureFrom), netsim.Epoch().Add(sc.MeasureTo)
	link := path.AB.StatsBetween(from, to)
	r := Result{
		Name:          sc.Name,
		Duration:      sc.Duration,
		Interval:      sc.Interval,
		MeasureFrom:   sc.MeasureFrom,
		MeasureTo:     sc.MeasureTo,
		Bandwidth:     sc.Bandwidth,
		BDP:           bdp,
		Utilization:   path.AB.Utilization(from, to),
		AvgQueueDelay: link.AvgQueueDelay(),
		MaxQueueDelay: link.QueueDelayMax,
		Link:          link,
		LinkTotal:     path.AB.Stats(),
		Events:        sim.Processed(),
		Flows:         make([]FlowResult, len(sc.Flows)),
	}
	for i, f := range sc.Flows {
		s := senders[i]
		st := s.Controller().State()
		fr := FlowResult{
			Name:             f.Name,
			Controller:       st.Name,
			Start:            f.Start,
			Size:             f.Size,
			Acked:            append([]int64(nil), s.AckedPerInterval()...),
			Sender:           s.Stats(),
			Receiver:         receivers[i].Stats(),
			MinRTT:           s.RTT().Min(),
			SmoothedRTT:      s.RTT().Smoothed(),
			CongestionWindow: s.Controller().CongestionWindow(),
			Phase:            st.Phase,
			AppLimited:       st.AppLimited,
		}
		if fr.Name == "" {
			fr.Name = st.Name
		}
		if err := s.Err(); err != nil {
			fr.Err = err.Error()
		}
		if fr.Sender.Done {
			fr.CompletionTime = fr.Sender.DoneTime.Sub(netsim.Epoch()) - f.Start
		}
		r.Flows[i] = fr
		if m := fr.MinRTT; m > 0 && (r.MinRTT == 0 || m < r.MinRTT) {
			r.MinRTT = m
		}
	}
	for i := range r.Flows {
		r.Flows[i].Goodput = r.Goodput(i, r.MeasureFrom, r.MeasureTo)
	}
	r.Fairness = r.FairnessBetween(r.MeasureFrom, r.MeasureTo)
	return r
}
