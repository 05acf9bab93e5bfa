package netsim

import (
	"slices"
	"testing"
	"time"
)

func TestPingPongRTT(t *testing.T) {
	// RTT = propagation both ways + serialization both ways: 1250 bytes
	// take 1 ms at 10 Mbit/s and 0.5 ms at 20 Mbit/s.
	for _, tc := range []struct {
		name   string
		ab, ba LinkConfig
		want   time.Duration
	}{
		{"symmetric", LinkConfig{Bandwidth: 10e6, Delay: 25 * time.Millisecond}, LinkConfig{Bandwidth: 10e6, Delay: 25 * time.Millisecond}, 52 * time.Millisecond},
		{"asymmetric", LinkConfig{Bandwidth: 10e6, Delay: 5 * time.Millisecond}, LinkConfig{Bandwidth: 20e6, Delay: 40 * time.Millisecond}, 46500 * time.Microsecond},
		{"ideal", LinkConfig{}, LinkConfig{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := NewSim()
			n := NewNetwork(sim, 1)
			n.Connect(1, 2, tc.ab, tc.ba)
			ping := &tsPinger{to: Addr{2, 7}, size: 1250, count: 10, gap: 100 * time.Millisecond}
			n.Attach(Addr{1, 7}, ping)
			n.Attach(Addr{2, 7}, &tsEcho{})
			sim.RunFor(10 * time.Second)
			if len(ping.rtts) != 10 {
				t.Fatalf("%d pongs", len(ping.rtts))
			}
			for _, r := range ping.rtts {
				if r != tc.want {
					t.Fatalf("RTT %v, want %v", r, tc.want)
				}
			}
		})
	}
}

func TestEndpointTimers(t *testing.T) {
	sim := NewSim()
	n := NewNetwork(sim, 1)
	ms := func(m int) time.Time { return at(time.Duration(m) * time.Millisecond) }
	ep := &tsTimers{deadlines: []time.Time{ms(0), ms(1000), ms(1500), ms(1500), ms(2000).Add(1), ms(60_000)}}
	sim.RunFor(300 * time.Millisecond)
	n.Attach(Addr{1, 1}, ep) // attached at 300 ms: its 0 ms deadline is due at once
	sim.At(ms(1700), func() { n.Node(Addr{1, 1}).Wake() })
	sim.RunFor(time.Hour)
	want := []time.Time{ms(300), ms(1000), ms(1500), ms(2000).Add(1), ms(60_000)}
	if !slices.EqualFunc(ep.fired, want, time.Time.Equal) {
		t.Errorf("HandleTimeout at %v, want %v", ep.fired, want)
	}
	// PollTransmit follows every timeout, and the Wake.
	wantPolls := []time.Time{ms(300), ms(1000), ms(1500), ms(1700), ms(2000).Add(1), ms(60_000)}
	if !slices.EqualFunc(ep.polls, wantPolls, time.Time.Equal) {
		t.Errorf("PollTransmit at %v, want %v", ep.polls, wantPolls)
	}
	if sim.Pending() != 0 {
		t.Errorf("%d events pending with no deadline", sim.Pending())
	}
}

func TestWakeAfterApplicationCommand(t *testing.T) {
	// A CBR sender that starts only when woken: the application
	// "writes" at 2 s.
	sim := NewSim()
	n := NewNetwork(sim, 1)
	n.Connect(1, 2, LinkConfig{Delay: 10 * time.Millisecond}, LinkConfig{})
	o := &tsOnce{to: Addr{2, 1}, sizes: []int{100}, done: true}
	nd := n.Attach(Addr{1, 1}, o)
	sink := &tsSink{record: true}
	n.Attach(Addr{2, 1}, sink)
	sim.At(at(2*time.Second), func() { o.done = false; nd.Wake() })
	sim.RunFor(5 * time.Second)
	if len(sink.arrivals) != 1 || sink.arrivals[0].sent != at(2*time.Second) || sink.arrivals[0].arrived != at(2010*time.Millisecond) {
		t.Fatalf("arrivals %+v", sink.arrivals)
	}
}

func TestUnroutableAndNoEndpoint(t *testing.T) {
	sim := NewSim()
	n := NewNetwork(sim, 1)
	n.Connect(1, 2, LinkConfig{}, LinkConfig{})
	var kinds []TraceKind
	n.Trace = func(ev TraceEvent) { kinds = append(kinds, ev.Kind) }
	n.Attach(Addr{1, 1}, &tsOnce{to: Addr{3, 1}, sizes: []int{100}}) // no route to host 3
	n.Attach(Addr{1, 2}, &tsOnce{to: Addr{2, 9}, sizes: []int{100}}) // nobody at port 9
	sim.RunFor(time.Second)
	st := n.Stats()
	if st.Sent != 2 || st.Unroutable != 1 || st.NoEndpoint != 1 || st.Outstanding != 0 {
		t.Errorf("stats %+v", st)
	}
	if !slices.Equal(kinds, []TraceKind{TraceDropUnroutable, TraceSend, TraceDropNoEndpoint}) {
		t.Errorf("trace %v", kinds)
	}
}

func TestDetach(t *testing.T) {
	// A pinger whose peer detaches at 1 s: its pings go unanswered.
	sim := NewSim()
	n := NewNetwork(sim, 1)
	n.Connect(1, 2, LinkConfig{Delay: 10 * time.Millisecond}, LinkConfig{Delay: 10 * time.Millisecond})
	ping := &tsPinger{to: Addr{2, 7}, size: 100, count: 1000, gap: 80 * time.Millisecond}
	n.Attach(Addr{1, 7}, ping)
	echo := n.Attach(Addr{2, 7}, &tsEcho{})
	sim.At(at(time.Second), echo.Detach)
	sim.RunFor(3 * time.Second)
	// Pings every 100 ms from 0 to 900 ms are answered; the one sent at
	// 1 s is not, and no more follow.
	if len(ping.rtts) != 10 || ping.sent != 11 || n.Stats().NoEndpoint != 1 {
		t.Errorf("%d answered of %d sent; stats %+v", len(ping.rtts), ping.sent, n.Stats())
	}
	echo.Wake() // no effect
	if n.Node(Addr{2, 7}) != nil || sim.Pending() != 0 {
		t.Errorf("node still attached, %d events pending", sim.Pending())
	}
}

func TestAttachTwicePanics(t *testing.T) {
	n := NewNetwork(NewSim(), 1)
	n.Attach(Addr{1, 1}, &tsSink{})
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	n.Attach(Addr{1, 1}, &tsSink{})
}

func TestNATRebinding(t *testing.T) {
	// The client (10 pings/s) sits behind a NAT. At 1 s the NAT rebinds
	// it to a new port: the server sees the new source address, and its
	// replies still in flight to the old one are lost.
	sim := NewSim()
	n := NewNetwork(sim, 1)
	n.Connect(1, 2, LinkConfig{Delay: 20 * time.Millisecond}, LinkConfig{Delay: 20 * time.Millisecond})
	client := Addr{1, 5000}
	cbr := newCBR(Addr{2, 443}, 100, 8000) // every 100 ms
	cbr.stop = at(2 * time.Second)
	n.Attach(client, cbr)
	n.Attach(Addr{2, 443}, &tsEcho{})
	var serverSaw []Addr
	n.Trace = func(ev TraceEvent) {
		if ev.Kind == TraceDeliver && ev.Datagram.Dst == (Addr{2, 443}) && !slices.Contains(serverSaw, ev.Datagram.Src) {
			serverSaw = append(serverSaw, ev.Datagram.Src)
		}
	}
	n.SetNAT(client, Addr{1, 40000})
	sim.At(at(1030*time.Millisecond), func() { n.SetNAT(client, Addr{1, 40001}) })
	sim.RunFor(3 * time.Second)
	if !slices.Equal(serverSaw, []Addr{{1, 40000}, {1, 40001}}) {
		t.Errorf("server saw sources %v", serverSaw)
	}
	// The datagram sent at 1.0 s reached the server at 1.02 s; its echo,
	// addressed to port 40000, arrived at 1.04 s, after the rebinding.
	if st := n.Stats(); st.NoEndpoint != 1 {
		t.Errorf("NoEndpoint %d, want 1", st.NoEndpoint)
	}
	if out, ok := n.NAT(client); !ok || out != (Addr{1, 40001}) {
		t.Errorf("NAT(client) = %v, %v", out, ok)
	}
	n.ClearNAT(client)
	if _, ok := n.NAT(client); ok {
		t.Error("binding survived ClearNAT")
	}
}

func TestSecondAddressAndRouteChange(t *testing.T) {
	// The client has a second address on host 3 whose path to the server
	// is slower; SendFrom picks the path. Then the route from host 1 is
	// switched to a new link.
	sim := NewSim()
	n := NewNetwork(sim, 1)
	n.Connect(1, 2, LinkConfig{Delay: 10 * time.Millisecond}, LinkConfig{Delay: 10 * time.Millisecond})
	n.Connect(3, 2, LinkConfig{Delay: 30 * time.Millisecond}, LinkConfig{Delay: 30 * time.Millisecond})
	sender := &tsMulti{to: Addr{2, 443}}
	nd := n.Attach(Addr{1, 1}, sender)
	nd.AddAddr(Addr{3, 1})
	sink := &tsSink{record: true}
	n.Attach(Addr{2, 443}, sink)
	sim.RunFor(time.Second)
	slow := n.NewLink(LinkConfig{Delay: 100 * time.Millisecond})
	n.SetRoute(1, 2, slow)
	if n.Route(1, 2) != slow {
		t.Fatal("Route does not return the new link")
	}
	nd.Wake()
	sim.RunFor(time.Second)
	nd.RemoveAddr(Addr{1, 1})
	if nd.Addr() != (Addr{3, 1}) || !slices.Equal(nd.Addrs(), []Addr{{3, 1}}) {
		t.Errorf("addresses %v", nd.Addrs())
	}
	type arr struct {
		src   Addr
		delay time.Duration
	}
	var got []arr
	for _, a := range sink.arrivals {
		got = append(got, arr{a.src, a.arrived.Sub(a.sent)})
	}
	want := []arr{{Addr{1, 1}, 10 * time.Millisecond}, {Addr{3, 1}, 30 * time.Millisecond}, {Addr{3, 1}, 30 * time.Millisecond}, {Addr{1, 1}, 100 * time.Millisecond}}
	if !slices.Equal(got, want) {
		t.Errorf("arrivals %v, want %v", got, want)
	}
}

// tsMulti sends one datagram from each of its addresses whenever polled
// after a Wake (and once at the start).
type tsMulti struct {
	to   Addr
	seq  uint64
	sent int
}

func (m *tsMulti) HandleDatagram(time.Time, *Datagram) {}
func (m *tsMulti) HandleTimeout(time.Time)             {}
func (m *tsMulti) NextDeadline() time.Time             { return time.Time{} }

func (m *tsMulti) PollTransmit(now time.Time, out *Outbox) {
	b := make([]byte, 100)
	for _, from := range out.node.Addrs() {
		tsPut(b, m.seq, now)
		m.seq++
		out.SendFrom(from, m.to, b, NotECT)
	}
}

func TestTraceAndNoLeaks(t *testing.T) {
	// Every datagram is accounted for: sent = delivered + dropped, and
	// the pool gets every buffer back.
	sim := NewSim()
	n := NewNetwork(sim, 7)
	cfg := LinkConfig{Bandwidth: 50e6, Delay: 5 * time.Millisecond, QueuePackets: 20, MTU: 1400,
		LossProb: 0.01, ReorderProb: 0.01, ReorderDelay: time.Millisecond, DuplicateProb: 0.01, CEProb: 0.01}
	n.Connect(1, 2, cfg, cfg)
	counts := map[TraceKind]int{}
	n.Trace = func(ev TraceEvent) { counts[ev.Kind]++ }
	cbr := newCBR(Addr{2, 1}, 1400, 60e6)
	cbr.stop = at(2 * time.Second)
	n.Attach(Addr{1, 1}, cbr)
	n.Attach(Addr{1, 2}, &tsOnce{to: Addr{2, 1}, sizes: []int{1401, 3000}})
	n.Attach(Addr{2, 1}, &tsEcho{max: 40})
	sim.RunFor(3 * time.Second)
	st := n.Stats()
	var dup, drops int64
	for _, l := range n.Links() {
		s := l.Stats()
		dup += s.Duplicated
		drops += s.Dropped()
		if l.InFlight() != 0 {
			t.Errorf("link %d has %d in flight", l.index, l.InFlight())
		}
	}
	if st.Outstanding != 0 {
		t.Errorf("%d datagrams not returned to the pool", st.Outstanding)
	}
	if int64(counts[TraceSend]) != st.Sent || int64(counts[TraceDeliver])+drops != st.Sent+dup {
		t.Errorf("trace %v; sent %d, duplicated %d, dropped %d", counts, st.Sent, dup, drops)
	}
	if counts[TraceDropMTU] == 0 || counts[TraceDropLoss] == 0 || counts[TraceDropQueue] == 0 {
		t.Errorf("trace %v", counts)
	}
}
