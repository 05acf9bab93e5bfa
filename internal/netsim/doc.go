// Package netsim is a deterministic, packet-level network simulator with a
// simulated clock, for testing the QUIC stack's loss recovery, congestion
// control and whole connections without sockets, sleeps or goroutines.
//
// # Pieces
//
//   - Sim (sim.go, sim_heap.go, timer.go) is the clock and a discrete-event
//     scheduler: a binary heap ordered by time, then by order of
//     scheduling, so ties are deterministic. Run, RunFor and RunUntil
//     advance it; Stop ends a run early; At, After and Timer schedule
//     scenario steps ("at 10 s, halve the bandwidth").
//   - Endpoint and Node (endpoint.go): an endpoint is a state machine that
//     is handed time and datagrams (HandleDatagram, HandleTimeout) and is
//     polled for output (PollTransmit through an Outbox) and for its next
//     deadline (NextDeadline), the same shape as the connection core.
//   - Datagram and Addr (datagram.go): addresses are a host number and a
//     port; payload buffers are pooled and recycled, so steady-state
//     simulation does not allocate.
//   - Link (link.go): one direction of a path, with bandwidth
//     (serialization delay), propagation delay, a drop-tail queue limit in
//     bytes or packets, MTU, and seeded random loss, reordering,
//     duplication, ECN-CE marking (random or above a queue threshold) and
//     corruption.
//   - Network (network.go): hosts connected by links (Connect, SetRoute),
//     endpoints attached at addresses, NAT bindings that tests can
//     rebind, and a Trace hook.
//   - LinkStats (stats.go): totals and per-window counters (delivered
//     bytes, drops, CE marks, queueing delay), for example the utilisation
//     averaged over seconds 5 to 30 of a run.
//
// # Determinism
//
// All randomness comes from PCG generators (math/rand/v2) seeded from the
// Network's seed or a link's own Seed, and drawn in event order; events of
// equal time run in the order they were scheduled; nothing iterates over a
// map. The same seed and inputs therefore give the same sequence of
// events, deliveries and drops, bit for bit.
//
// # Writing an endpoint
//
// An endpoint keeps its own state and outputs nothing until polled. A
// receiver that acknowledges every datagram with a 4-byte message:
//
//	type acker struct {
//		pending []netsim.Addr // whom we owe an ack
//		seqs    []uint32
//	}
//
//	func (a *acker) HandleDatagram(now time.Time, d *netsim.Datagram) {
//		a.pending = append(a.pending, d.Src)
//		a.seqs = append(a.seqs, binary.BigEndian.Uint32(d.Payload))
//	}
//
//	func (a *acker) HandleTimeout(now time.Time) {}
//
//	func (a *acker) PollTransmit(now time.Time, out *netsim.Outbox) {
//		var b [4]byte
//		for i, to := range a.pending {
//			binary.BigEndian.PutUint32(b[:], a.seqs[i])
//			out.Send(to, b[:], netsim.NotECT) // the Network copies b
//		}
//		a.pending, a.seqs = a.pending[:0], a.seqs[:0]
//	}
//
//	func (a *acker) NextDeadline() time.Time { return time.Time{} }
//
// A sender built on the loss-recovery and congestion packages would, in
// PollTransmit, send while the congestion window and the pacer allow,
// recording each packet with the sent-packet tracker; in HandleDatagram
// parse the ACK frame (wire.AckFrame) and feed it to loss detection; in
// HandleTimeout run the loss/PTO timer; and return the earlier of the
// loss timer and the pacer's next send time from NextDeadline. A whole
// QUIC connection is wrapped the same way: handleDatagram, handleTimeout,
// pollTransmit and nextDeadline map one to one.
//
// # Putting it together
//
//	sim := netsim.NewSim()
//	net := netsim.NewNetwork(sim, 1) // seed
//	cfg := netsim.LinkConfig{
//		Bandwidth:    100_000_000,           // 100 Mbit/s
//		Delay:        20 * time.Millisecond, // one way
//		QueuePackets: 200,                   // drop-tail
//		LossProb:     0.001,
//	}
//	path := net.Connect(1, 2, cfg, cfg) // hosts 1 and 2, symmetric
//	net.Attach(netsim.Addr{Host: 1, Port: 1000}, sender)
//	net.Attach(netsim.Addr{Host: 2, Port: 443}, &acker{})
//	sim.RunFor(30 * time.Second)
//	util := path.AB.Utilization(netsim.Epoch().Add(5*time.Second), sim.Now())
//	qdelay := path.AB.StatsBetween(netsim.Epoch().Add(5*time.Second), sim.Now()).AvgQueueDelay()
//
// The package Example is a complete program. 60 simulated seconds of a
// fully loaded 100 Mbit/s path (a million datagrams counting
// acknowledgements) take about 0.2 s of CPU time
// (BenchmarkSimulate60sAt100Mbps), and steady-state simulation allocates
// nothing.
//
// A Sim and everything attached to it is used from one goroutine: the
// simulation is single-threaded by design.
package netsim
