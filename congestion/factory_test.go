package congestion

import (
	"testing"
	"time"
)

func TestNewDefaults(t *testing.T) {
	// nil factory: Cubic, with MaxDatagramSize 0 filled in as 1200.
	c := New(nil, ControllerConfig{})
	if st := c.State(); st.Name != "cubic" || st.Phase != "slow_start" {
		t.Fatalf("New(nil) state %+v", st)
	}
	if c.CongestionWindow() != 12000 {
		t.Fatalf("New(nil) cwnd %d, want 12000", c.CongestionWindow())
	}
	var got ControllerConfig
	c = New(func(cfg ControllerConfig) Controller {
		got = cfg
		return NewNewReno(cfg)
	}, ControllerConfig{InitialWindowPackets: 4})
	if c.State().Name != "newreno" {
		t.Fatalf("factory ignored: %+v", c.State())
	}
	if got.MaxDatagramSize != 1200 || got.RTT == nil || got.InitialWindowPackets != 4 {
		t.Fatalf("factory got %+v", got)
	}
	if c.CongestionWindow() != 4800 {
		t.Fatalf("cwnd %d, want 4800", c.CongestionWindow())
	}
	rtt := NewRTTStats()
	c = New(NewNewReno, ControllerConfig{RTT: rtt, MaxDatagramSize: 1452})
	if c.CongestionWindow() != 14520 {
		t.Fatalf("cwnd %d, want 14520", c.CongestionWindow())
	}
	// A factory returning nil falls back to Cubic.
	if c := New(func(ControllerConfig) Controller { return nil }, ControllerConfig{}); c.State().Name != "cubic" {
		t.Fatalf("nil from factory: %+v", c.State())
	}
}

// renoAllocRound is one steady-state round of a controller's per-packet
// path: ten packets sent, an ACK of ten packets, a congestion event.
type renoAllocRound struct {
	c     Controller
	rtt   *RTTStats
	now   time.Time
	pn    int64
	acked [10]AckedPacket
	lost  [1]LostPacket
	ack   AckEvent
	cong  CongestionEvent
}

func renoNewAllocRound(f ControllerFactory) *renoAllocRound {
	r := &renoAllocRound{rtt: NewRTTStats(), now: time.Unix(0, 0)}
	r.c = f(ControllerConfig{RTT: r.rtt, MaxDatagramSize: 1200})
	return r
}

func (r *renoAllocRound) run() {
	sent := r.now
	for i := range r.acked {
		r.c.OnPacketSent(r.now, r.pn, 1200, (i+1)*1200)
		r.acked[i] = AckedPacket{PacketNumber: r.pn, Bytes: 1200, SentTime: sent}
		r.pn++
	}
	r.c.OnPacketSent(r.now, r.pn, 1200, 11*1200)
	r.lost[0] = LostPacket{PacketNumber: r.pn, Bytes: 1200, SentTime: sent}
	r.pn++
	r.now = r.now.Add(20 * time.Millisecond)
	r.rtt.Update(20*time.Millisecond, 0, true)
	r.ack = AckEvent{Acked: r.acked[:], AckedBytes: 12000, PriorInFlight: 13200, BytesInFlight: 1200, RTT: r.rtt}
	r.c.OnAck(r.now, &r.ack)
	r.cong = CongestionEvent{Lost: r.lost[:], LostBytes: 1200, SentTime: sent, PriorInFlight: 1200}
	r.c.OnCongestionEvent(r.now, &r.cong)
	_ = r.c.PacingRate()
	_ = r.c.State()
	r.now = r.now.Add(time.Millisecond)
}

func TestControllersAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    ControllerFactory
	}{{"newreno", NewNewReno}, {"cubic", NewCubic}, {"bbr", NewBBR}} {
		r := renoNewAllocRound(tc.f)
		for range 100 {
			r.run()
		}
		if n := testing.AllocsPerRun(1000, r.run); n != 0 {
			t.Errorf("%s: %v allocs per OnPacketSent+OnAck+OnCongestionEvent round", tc.name, n)
		}
	}
}

func BenchmarkCubicOnAck(b *testing.B) {
	rtt := NewRTTStats()
	rtt.Update(20*time.Millisecond, 0, true)
	c := NewCubic(ControllerConfig{RTT: rtt, MaxDatagramSize: 1200})
	now := time.Unix(0, 0)
	// Leave slow start so that the cubic function runs.
	c.OnCongestionEvent(now, &CongestionEvent{SentTime: now, ECN: true})
	var acked [10]AckedPacket
	ev := AckEvent{Acked: acked[:], AckedBytes: 12000, RTT: rtt}
	var pn int64
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(100 * time.Microsecond)
		sent := now.Add(-20 * time.Millisecond)
		for i := range acked {
			acked[i] = AckedPacket{PacketNumber: pn, Bytes: 1200, SentTime: sent}
			pn++
		}
		c.OnAck(now, &ev)
	}
}

func BenchmarkNewRenoOnAck(b *testing.B) {
	rtt := NewRTTStats()
	rtt.Update(20*time.Millisecond, 0, true)
	c := NewNewReno(ControllerConfig{RTT: rtt, MaxDatagramSize: 1200})
	now := time.Unix(0, 0)
	c.OnCongestionEvent(now, &CongestionEvent{SentTime: now, ECN: true})
	var acked [10]AckedPacket
	ev := AckEvent{Acked: acked[:], AckedBytes: 12000, RTT: rtt}
	var pn int64
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(100 * time.Microsecond)
		sent := now.Add(-20 * time.Millisecond)
		for i := range acked {
			acked[i] = AckedPacket{PacketNumber: pn, Bytes: 1200, SentTime: sent}
			pn++
		}
		c.OnAck(now, &ev)
	}
}
