package ccsim

import (
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// A finite transfer over a lossy link completes: every stream byte is
// acknowledged exactly once, lost ranges having been sent again, and
// then the sender is idle and tells its controller so.
func TestFiniteTransferCompletes(t *testing.T) {
	t.Parallel()
	const size = 3 << 20
	for _, c := range controllers {
		p, _ := PresetByName("transferloss")
		sc := p.Make(c.f, 3)
		sc.Flows[0].Size = size
		sc.Flows[0].Start = 500 * time.Millisecond
		r := runChecked(t, sc)
		f := r.Flows[0]
		if !f.Sender.Done || f.Sender.AckedBytes != size {
			t.Fatalf("%s: done %v, %d of %d bytes acknowledged", c.name, f.Sender.Done, f.Sender.AckedBytes, size)
		}
		if f.Sender.RetransmittedBytes == 0 || f.Sender.LostPackets == 0 {
			t.Fatalf("%s: no loss recovery on a 2%% loss link: %+v", c.name, f.Sender)
		}
		var sum int64
		for _, b := range f.Acked {
			sum += b
		}
		if sum != size {
			t.Fatalf("%s: windows hold %d bytes, want %d", c.name, sum, size)
		}
		if f.CompletionTime <= 0 || f.CompletionTime > 25*time.Second {
			t.Fatalf("%s: completion time %v", c.name, f.CompletionTime)
		}
		// RFC 9002, Section 7.8: with nothing left to send, the sender is
		// application-limited.
		if !f.AppLimited {
			t.Errorf("%s: not application-limited after the transfer (phase %q)", c.name, f.Phase)
		}
		t.Logf("%s: %d bytes in %v, %d packets lost, %d retransmitted (%d bytes), %d PTOs",
			c.name, size, f.CompletionTime, f.Sender.LostPackets, f.Sender.RetransmittedPackets, f.Sender.RetransmittedBytes, f.Sender.PTOs)
	}
}

// A flow sends nothing before its start time.
func TestFlowStartTime(t *testing.T) {
	t.Parallel()
	r := runChecked(t, Scenario{
		Bandwidth: 10_000_000, RTT: 30 * time.Millisecond, Duration: 4 * time.Second, Seed: 1,
		Flows: []Flow{{Controller: congestion.NewCubic, Start: 2 * time.Second}},
	})
	acked := r.Flows[0].Acked
	for i := range int(2 * time.Second / r.Interval) {
		if i < len(acked) && acked[i] != 0 {
			t.Fatalf("%d bytes acknowledged in window %d, before the start", acked[i], i)
		}
	}
	if r.Goodput(0, 2*time.Second, 4*time.Second) == 0 {
		t.Fatal("nothing acknowledged after the start")
	}
}

// pathSetup is a sender and a receiver on a 10 Mbit/s, 30 ms path whose
// links a test can reconfigure.
type pathSetup struct {
	sim  *netsim.Sim
	path netsim.Path
	s    *Sender
	r    *Receiver
	fwd  netsim.LinkConfig
}

func newPathSetup(f congestion.ControllerFactory, size int64) *pathSetup {
	sim := netsim.NewSim()
	nw := netsim.NewNetwork(sim, 1)
	cfg := netsim.LinkConfig{Bandwidth: 10_000_000, Delay: 15 * time.Millisecond, Overhead: ipUDPOverhead, QueuePackets: 50}
	p := &pathSetup{sim: sim, path: nw.Connect(1, 2, cfg, cfg), fwd: cfg}
	raddr := netsim.Addr{Host: 2, Port: 443}
	p.s = NewSender(SenderConfig{Peer: raddr, Controller: f, Seed: 1, Size: size})
	p.r = NewReceiver()
	nw.Attach(raddr, p.r)
	nw.Attach(netsim.Addr{Host: 1, Port: 1000}, p.s)
	return p
}

// When the path goes black, the probe timeout fires with exponential
// backoff and each expiry sends two probes despite the full window
// (RFC 9002, Sections 6.2.1 and 7.5); when the path comes back, the
// lost data is declared lost, persistent congestion is established
// (Section 7.6) and the transfer completes.
func TestProbeTimeoutDuringBlackout(t *testing.T) {
	t.Parallel()
	const size = 2 << 20
	p := newPathSetup(congestion.NewNewReno, size)
	p.sim.RunFor(500 * time.Millisecond)
	black := p.fwd
	black.LossProb = 1
	p.path.AB.SetConfig(black)
	// The ACKs already on their way still open the window for a while.
	p.sim.RunFor(200 * time.Millisecond)
	before := p.s.Stats()
	p.sim.RunFor(3 * time.Second)
	during := p.s.Stats()
	ptos := during.PTOs - before.PTOs
	probes := during.ProbePackets - before.ProbePackets
	if ptos < 3 || ptos > 8 {
		t.Fatalf("%d probe timeouts in 3 s of blackout, want a backed-off handful", ptos)
	}
	if probes != 2*ptos {
		t.Fatalf("%d probes for %d probe timeouts, want 2 each", probes, ptos)
	}
	if sent := during.SentPackets - before.SentPackets; sent != probes {
		t.Fatalf("%d packets sent during the blackout, %d of them probes", sent, probes)
	}
	p.path.AB.SetConfig(p.fwd)
	p.sim.RunFor(20 * time.Second)
	st := p.s.Stats()
	if p.s.Err() != nil {
		t.Fatal(p.s.Err())
	}
	if st.PersistentCongestion == 0 {
		t.Errorf("no persistent congestion after a 3 s blackout: %+v", st)
	}
	if !st.Done || st.AckedBytes != size || st.DoubleAcked != 0 {
		t.Fatalf("transfer after the blackout: done %v, %d of %d bytes, %d ranges acknowledged twice", st.Done, st.AckedBytes, size, st.DoubleAcked)
	}
}

// The receiver's PINGs get its ACK frames acknowledged, so that it stops
// acknowledging old packets (RFC 9000, Section 13.2.4): with steady loss
// its ACK frames stay small instead of growing to the range limit.
func TestAckOfAckBoundsRanges(t *testing.T) {
	t.Parallel()
	p := newPathSetup(congestion.NewCubic, 0)
	lossy := p.fwd
	lossy.LossProb = 0.02
	p.path.AB.SetConfig(lossy)
	p.sim.RunFor(10 * time.Second)
	if n := len(p.r.ack.Ranges); n > 16 {
		t.Errorf("the receiver's last ACK frame has %d ranges", n)
	}
	rs, ss := p.r.Stats(), p.s.Stats()
	if rs.PingsSent == 0 || ss.AcksSent == 0 {
		t.Fatalf("receiver sent %d PINGs, sender %d ACKs", rs.PingsSent, ss.AcksSent)
	}
	t.Logf("receiver: %d ACKs, %d PINGs, last ACK frame %d ranges; sender: %d ACKs", rs.AcksSent, rs.PingsSent, len(p.r.ack.Ranges), ss.AcksSent)
}

func TestJainIndex(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0, 0}, 1},
		{[]float64{5, 5, 5}, 1},
		{[]float64{1, 0}, 0.5},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{2, 1}, 0.9},
	} {
		if got := JainIndex(c.x); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("JainIndex(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

func TestParseFrames(t *testing.T) {
	var ack wire.AckFrame
	stream := make([]byte, streamFrameOverhead+3)
	putStreamFrame(stream, 7, 3)
	ackBytes := (&wire.AckFrame{Ranges: []wire.AckRange{{Smallest: 1, Largest: 4}}}).Append(nil)
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	for _, c := range []struct {
		name                  string
		p                     []byte
		ok, eliciting, hasAck bool
	}{
		{"stream", stream, true, true, false},
		{"ping", []byte{pingFrameType}, true, true, false},
		{"ack", ackBytes, true, false, true},
		{"ack ping", cat(ackBytes, []byte{pingFrameType}), true, true, true},
		{"padding", cat(ackBytes, []byte{0, 0, 9}), true, false, true},
		{"two acks", cat(ackBytes, ackBytes), false, false, true},
		{"truncated stream", stream[:len(stream)-1], false, false, false},
		{"unknown", []byte{0x1e}, false, false, false},
		{"truncated ack", ackBytes[:2], false, false, false},
	} {
		pf, ok := parseFrames(c.p, &ack, maxAckRanges)
		if ok != c.ok || (ok && (pf.ackEliciting != c.eliciting || pf.hasAck != c.hasAck)) {
			t.Errorf("%s: got %+v, %v", c.name, pf, ok)
		}
	}
	if _, ok := readHeader([]byte{1, 2, 3}); ok {
		t.Error("short header accepted")
	}
}

// OnMetrics reports each change of the sender's figures, in time order
// from the flow's start, and only changes: the window grows in slow start,
// bytes in flight stay within the largest window, and the RTT
// samples are the link's.
func TestOnMetrics(t *testing.T) {
	t.Parallel()
	p, _ := PresetByName("transferloss")
	sc := p.Make(congestion.NewCubic, 1)
	sc.Duration = 3 * time.Second
	var got []Metrics
	var times []time.Time
	sc.Flows[0].OnMetrics = func(now time.Time, m Metrics) {
		times = append(times, now)
		got = append(got, m)
	}
	runChecked(t, sc)
	if len(got) < 100 {
		t.Fatalf("%d metrics updates in 3 s of a bulk flow", len(got))
	}
	maxCwnd := 0
	for i, m := range got {
		if times[i].Before(netsim.Epoch()) || (i > 0 && times[i].Before(times[i-1])) {
			t.Fatalf("update %d at %v, after %v", i, times[i], times[max(i-1, 0)])
		}
		if i > 0 && m == got[i-1] {
			t.Fatalf("update %d repeats the one before: %+v", i, m)
		}
		maxCwnd = max(maxCwnd, m.CongestionWindow)
		// A loss cuts the window below what is in flight, never more.
		if m.BytesInFlight > maxCwnd+2*DefaultMaxDatagramSize {
			t.Fatalf("update %d: %d bytes in flight, window %d at most", i, m.BytesInFlight, maxCwnd)
		}
		if m.LatestRTT > 0 && m.LatestRTT < sc.RTT {
			t.Fatalf("update %d: RTT sample %v below the link's %v", i, m.LatestRTT, sc.RTT)
		}
	}
	if maxCwnd <= congestion.InitialWindow(DefaultMaxDatagramSize, 0) || got[len(got)-1].PacingRate == 0 {
		t.Fatalf("window never grew (max %d) or no pacing rate: last %+v", maxCwnd, got[len(got)-1])
	}
}
