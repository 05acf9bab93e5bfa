package congestion

import (
	"testing"
	"time"
)

// hystartDriver feeds a hystart rounds of packets: each batch is sent, then
// acknowledged one packet per ACK, with the next batch sent just before the
// last ACK of the current one, so that each round holds one batch.
type hystartDriver struct {
	h        hystart
	next     int64 // next packet number
	lo, hi   int64 // current batch, inclusive
	growth   int
	exited   bool
	nSamples int
}

func hystartNewDriver(n int) *hystartDriver {
	d := &hystartDriver{}
	d.h.reset()
	d.lo = 0
	d.sendBatch(n)
	return d
}

func (d *hystartDriver) sendBatch(n int) {
	d.lo = d.next
	for range n {
		d.h.onPacketSent(d.next)
		d.next++
	}
	d.hi = d.next - 1
}

func (d *hystartDriver) ack(pn int64, rtt time.Duration) {
	g, exit := d.h.onAck(1200, pn, rtt)
	d.growth += g
	d.exited = d.exited || exit
}

// round acknowledges the current batch with RTT samples rtt and sends a
// batch of next packets before the last ACK.
func (d *hystartDriver) round(rtt time.Duration, next int) {
	lo, hi := d.lo, d.hi
	for pn := lo; pn < hi; pn++ {
		d.ack(pn, rtt)
	}
	d.sendBatch(next)
	d.ack(hi, rtt)
}

func TestHyStartNoExitWithoutRTTIncrease(t *testing.T) {
	d := hystartNewDriver(10)
	n := 10
	for i := range 12 {
		// Jitter below the threshold: +3ms < MIN_RTT_THRESH (4ms).
		rtt := 50 * renoMs
		if i%2 == 1 {
			rtt += 3 * renoMs
		}
		d.growth = 0
		d.round(rtt, 2*n)
		// RFC 9406, Section 4.2: "cwnd = cwnd + min(N, L * SMSS)" in
		// standard slow start.
		if d.growth != n*1200 || d.h.inCSS || d.exited {
			t.Fatalf("round %d: growth %d inCSS %v exited %v", i, d.growth, d.h.inCSS, d.exited)
		}
		n *= 2
	}
}

func TestHyStartExitToCSSOnRTTIncrease(t *testing.T) {
	d := hystartNewDriver(10)
	d.round(50*renoMs, 16)
	d.round(50*renoMs, 16)
	if d.h.inCSS {
		t.Fatal("in CSS without an RTT increase")
	}
	// RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
	// MAX_RTT_THRESH)) = max(4ms, min(6.25ms, 16ms)) = 6.25ms. A round at
	// 56ms stays below 50ms + 6.25ms.
	d.round(56*renoMs, 16)
	if d.h.inCSS {
		t.Fatal("in CSS after an increase below RttThresh")
	}
	// RFC 9406, Section 4.2: "if (currentRoundMinRTT >= (lastRoundMinRTT +
	// RttThresh)) cssBaselineMinRtt = currentRoundMinRTT; exit slow start
	// and enter CSS". The check needs "rttSampleCount >= N_RTT_SAMPLE":
	// after 7 samples at 63ms (>= 56 + 7) nothing happens, the 8th exits.
	lo := d.lo
	for i := range int64(7) {
		d.ack(lo+i, 63*renoMs)
	}
	if d.h.inCSS {
		t.Fatal("in CSS after 7 samples")
	}
	d.ack(lo+7, 63*renoMs)
	if !d.h.inCSS || d.h.cssBaselineMinRTT != 63*renoMs {
		t.Fatalf("inCSS %v baseline %v after 8 samples", d.h.inCSS, d.h.cssBaselineMinRTT)
	}
	// "cwnd = cwnd + (min(N, L * SMSS) / CSS_GROWTH_DIVISOR)"
	d.growth = 0
	for pn := lo + 8; pn < d.hi; pn++ {
		d.ack(pn, 63*renoMs)
	}
	if want := 7 * 1200 / 4; d.growth != want {
		t.Fatalf("CSS growth %d, want %d", d.growth, want)
	}
}

func TestHyStartRTTThresh(t *testing.T) {
	for _, tc := range []struct {
		last, noExit, exit time.Duration
	}{
		// max(MIN_RTT_THRESH, ...): 10ms/8 = 1.25ms is raised to 4ms.
		{10 * renoMs, 13900 * time.Microsecond, 14 * renoMs},
		// min(..., MAX_RTT_THRESH): 200ms/8 = 25ms is capped at 16ms.
		{200 * renoMs, 215 * renoMs, 216 * renoMs},
	} {
		for _, c := range []struct {
			rtt  time.Duration
			want bool
		}{{tc.noExit, false}, {tc.exit, true}} {
			d := hystartNewDriver(10)
			d.round(tc.last, 10)
			d.round(c.rtt, 10)
			if d.h.inCSS != c.want {
				t.Errorf("last %v, then %v: inCSS %v, want %v", tc.last, c.rtt, d.h.inCSS, c.want)
			}
		}
	}
}

func TestHyStartCSSRoundsThenAvoidance(t *testing.T) {
	d := hystartNewDriver(10)
	d.round(50*renoMs, 10)
	d.round(60*renoMs, 10) // enters CSS in this round, which counts as the first
	if !d.h.inCSS {
		t.Fatal("not in CSS")
	}
	// RFC 9406, Section 4.2: "If CSS_ROUNDS rounds are complete, enter
	// congestion avoidance by setting the ssthresh to the current cwnd."
	for i := 2; i <= hystartCSSRounds; i++ {
		if d.exited {
			t.Fatalf("exited after %d CSS rounds", i-1)
		}
		d.round(60*renoMs, 10)
	}
	if !d.exited || !d.h.done {
		t.Fatalf("exited %v done %v after %d CSS rounds", d.exited, d.h.done, hystartCSSRounds)
	}
	// "An implementation SHOULD use HyStart++ only for the initial slow
	// start": afterwards growth is standard slow start.
	if g, _ := d.h.onAck(1200, d.next, 100*renoMs); g != 1200 {
		t.Fatalf("growth after HyStart++ = %d", g)
	}
}

func TestHyStartCSSSpuriousExit(t *testing.T) {
	d := hystartNewDriver(10)
	d.round(50*renoMs, 10)
	d.round(60*renoMs, 10)
	if !d.h.inCSS {
		t.Fatal("not in CSS")
	}
	// RFC 9406, Section 4.2: "if (currentRoundMinRTT < cssBaselineMinRtt)
	// cssBaselineMinRtt = infinity; resume slow start including HyStart++"
	d.round(55*renoMs, 10)
	if d.h.inCSS || d.h.done || d.exited {
		t.Fatalf("inCSS %v done %v exited %v after an RTT drop", d.h.inCSS, d.h.done, d.exited)
	}
	d.growth = 0
	d.round(55*renoMs, 10)
	if d.growth != 10*1200 {
		t.Fatalf("slow start growth after resuming = %d", d.growth)
	}
}

func TestHyStartOnlyLargestNewlyAckedCountsAsSample(t *testing.T) {
	d := hystartNewDriver(20)
	d.round(50*renoMs, 20)
	// RFC 9002, Section 5.1: an RTT sample needs "the largest acknowledged
	// packet number is newly acknowledged". ACKs for older packets than the
	// largest acknowledged carry no new sample.
	d.ack(d.hi-1, 80*renoMs)
	for pn := d.lo; pn < d.hi-1; pn++ {
		d.ack(pn, 80*renoMs)
	}
	if d.h.rttSampleCount != 1 || d.h.inCSS {
		t.Fatalf("samples %d inCSS %v", d.h.rttSampleCount, d.h.inCSS)
	}
}

func TestHyStartStopsOnCongestion(t *testing.T) {
	d := hystartNewDriver(10)
	d.round(50*renoMs, 10)
	// RFC 9406, Section 4.2: "If loss or ECN-marking is observed anytime
	// during standard slow start or CSS, enter congestion avoidance".
	d.h.onCongestion()
	d.round(100*renoMs, 10)
	if d.h.inCSS || !d.h.done {
		t.Fatalf("inCSS %v done %v", d.h.inCSS, d.h.done)
	}
}
