package congestion

import (
	"testing"
	"time"
)

// An application-limited flow that goes idle between small flights must
// not grow BBR.extra_acked, and with it BBR.max_inflight and the cwnd, by
// the data of every flight. "BBR.extra_acked_delivered: The volume of
// data marked as delivered since BBR.extra_acked_interval_start"
// (draft-ietf-ccwg-bbr, Section 2.12): when HandleRestartFromIdle moves
// the interval's start to Now() (Section 5.4.1), nothing has been
// delivered since. The draft's pseudocode moves the start only; the
// count kept the data delivered before the idle period, so that an
// interval whose count had run ahead of BBR.bw (the first flight's ACKs
// came back closer together than the bandwidth estimate of the moment)
// was never reset again: expected_delivered restarted from zero at each
// flight while the count went on adding each flight's data. Here the
// first flight is the initial window, acknowledged at the bottleneck's
// rate, then three packets every 100 ms: before the fix BBR.extra_acked
// grew by 3,600 bytes a flight to 362 KB, and the cwnd (Startup: "C.cwnd <
// BBR.max_inflight ... C.cwnd = C.cwnd + RS.newly_acked", Section
// 5.6.4.6) from 58 KB at 1 s to 382 KB at 10 s (a QUIC connection held back by
// flow control: TestSimFlowControlLimitedWindow).
func TestBBRExtraAckedAfterIdleRestart(t *testing.T) {
	const (
		flight = 3
		gap    = 100 * time.Millisecond // longer than the round trip: idle between flights
	)
	p := newBBRTestPath(t, bbrTestRate, bbrTestDelay, 0)
	first := p.cc.CongestionWindow() / p.size // the initial window
	drain := func() {
		for len(p.pkts) > 0 {
			ev, _ := p.nextEvent()
			p.now = ev
			p.receive()
		}
	}
	burst := func(i, n int) {
		for k := range n {
			p.send()
			if k == 0 && i > 0 && !p.b.idleRestart {
				t.Fatalf("flight %d: BBR.idle_restart not set after idle", i)
			}
		}
		p.cc.OnAppLimited(p.now, p.inflight)
		p.check()
		drain()
	}
	burst(0, first)
	var cwndAt1s int
	var maxExtra, maxExtraDeliv int64
	largestFlight := int64(first * p.size)
	for i := 1; i <= 100; i++ {
		p.now = p.t0.Add(time.Duration(i) * gap)
		burst(i, flight)
		if p.b.extraAcked > maxExtra {
			maxExtra, maxExtraDeliv = p.b.extraAcked, p.b.extraAckedDeliv
		}
		if i == 10 {
			cwndAt1s = p.cc.CongestionWindow()
		}
	}
	if maxExtra > largestFlight {
		t.Errorf("BBR.extra_acked reached %d bytes (BBR.extra_acked_delivered %d), more than the largest flight (%d bytes)",
			maxExtra, maxExtraDeliv, largestFlight)
	}
	if cwnd := p.cc.CongestionWindow(); cwnd > cwndAt1s {
		t.Errorf("cwnd grew from %d to %d bytes between 1 s and 10 s of an application-limited flow (%s, BBR.extra_acked %d)",
			cwndAt1s, cwnd, p.b.state, p.b.extraAcked)
	}
}
