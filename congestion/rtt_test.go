package congestion

import (
	"math"
	"testing"
	"time"
)

// renoMs is shared by the tests of this helper's files.
const renoMs = time.Millisecond

func TestRTTInitialState(t *testing.T) {
	r := NewRTTStats()
	// RFC 9002, Section 5.3: "smoothed_rtt = kInitialRtt; rttvar = kInitialRtt / 2"
	if r.Smoothed() != InitialRTT || r.MeanDeviation() != InitialRTT/2 {
		t.Fatalf("initial smoothed=%v rttvar=%v, want %v and %v", r.Smoothed(), r.MeanDeviation(), InitialRTT, InitialRTT/2)
	}
	if r.HasSample() || r.Min() != 0 || r.Latest() != 0 {
		t.Fatalf("initial HasSample=%v min=%v latest=%v", r.HasSample(), r.Min(), r.Latest())
	}
	// RFC 9002, Section 6.2.1: "PTO = smoothed_rtt + max(4*rttvar, kGranularity) + max_ack_delay"
	if got, want := r.PTO(false), InitialRTT+4*(InitialRTT/2); got != want {
		t.Fatalf("initial PTO = %v, want %v", got, want)
	}
}

func TestRTTFirstSample(t *testing.T) {
	r := NewRTTStats()
	r.SetMaxAckDelay(25 * renoMs)
	// RFC 9002, Section 5.3: "On the first RTT sample after initialization,
	// the estimator is reset using that sample." Appendix A.7:
	// "smoothed_rtt = latest_rtt; rttvar = latest_rtt / 2"; the ACK delay is
	// not used for the first sample.
	r.Update(100*renoMs, 10*renoMs, true)
	if !r.HasSample() {
		t.Fatal("HasSample = false after a sample")
	}
	if r.Latest() != 100*renoMs || r.Smoothed() != 100*renoMs || r.MeanDeviation() != 50*renoMs {
		t.Fatalf("latest=%v smoothed=%v rttvar=%v, want 100ms, 100ms, 50ms", r.Latest(), r.Smoothed(), r.MeanDeviation())
	}
	// RFC 9002, Section 5.2: "min_rtt MUST be set to the latest_rtt on the
	// first RTT sample."
	if r.Min() != 100*renoMs {
		t.Fatalf("min = %v, want 100ms", r.Min())
	}
}

func TestRTTEWMA(t *testing.T) {
	// RFC 9002, Section 5.3:
	//   rttvar_sample = abs(smoothed_rtt - adjusted_rtt)
	//   rttvar = 3/4 * rttvar + 1/4 * rttvar_sample
	//   smoothed_rtt = 7/8 * smoothed_rtt + 1/8 * adjusted_rtt
	// Values computed by hand, no ACK delay.
	r := NewRTTStats()
	steps := []struct {
		latest           time.Duration
		smoothed, rttvar time.Duration
	}{
		{100 * renoMs, 100 * renoMs, 50 * renoMs},
		// rttvar = (3*50 + |100-200|)/4 = 62.5; srtt = (7*100+200)/8 = 112.5
		{200 * renoMs, 112500 * time.Microsecond, 62500 * time.Microsecond},
		// rttvar = (3*62.5 + |112.5-80|)/4 = (187.5+32.5)/4 = 55;
		// srtt = (7*112.5 + 80)/8 = (787.5+80)/8 = 108.4375
		{80 * renoMs, 108437500 * time.Nanosecond, 55 * renoMs},
		// rttvar = (3*55 + |108.4375-108.4375|)/4 = 41.25; srtt unchanged
		{108437500 * time.Nanosecond, 108437500 * time.Nanosecond, 41250 * time.Microsecond},
	}
	for i, s := range steps {
		r.Update(s.latest, 0, true)
		if r.Smoothed() != s.smoothed || r.MeanDeviation() != s.rttvar {
			t.Fatalf("step %d: smoothed=%v rttvar=%v, want %v %v", i, r.Smoothed(), r.MeanDeviation(), s.smoothed, s.rttvar)
		}
	}
	if r.Min() != 80*renoMs || r.Latest() != 108437500*time.Nanosecond {
		t.Fatalf("min=%v latest=%v", r.Min(), r.Latest())
	}
}

func TestRTTMinIgnoresAckDelay(t *testing.T) {
	// RFC 9002, Section 5.2: "An endpoint uses only locally observed times in
	// computing the min_rtt and does not adjust for acknowledgment delays
	// reported by the peer."
	r := NewRTTStats()
	r.SetMaxAckDelay(25 * renoMs)
	r.Update(100*renoMs, 0, true)
	r.Update(90*renoMs, 20*renoMs, true)
	if r.Min() != 90*renoMs {
		t.Fatalf("min = %v, want 90ms (ack delay not subtracted)", r.Min())
	}
	// "min_rtt MUST be set to the lesser of min_rtt and latest_rtt
	// (Section 5.1) on all other samples."
	r.Update(120*renoMs, 0, true)
	if r.Min() != 90*renoMs {
		t.Fatalf("min = %v after a larger sample, want 90ms", r.Min())
	}
}

func TestRTTAckDelayAdjustment(t *testing.T) {
	// RFC 9002, Section 5.3: "MUST use the lesser of the acknowledgment
	// delay and the peer's max_ack_delay after the handshake is confirmed".
	r := NewRTTStats()
	r.SetMaxAckDelay(10 * renoMs)
	r.Update(50*renoMs, 0, true)
	r.Update(100*renoMs, 30*renoMs, true) // delay capped at 10ms: adjusted = 90ms
	// srtt = (7*50 + 90)/8 = 55; rttvar = (3*25 + |50-90|)/4 = 28.75
	if r.Smoothed() != 55*renoMs || r.MeanDeviation() != 28750*time.Microsecond {
		t.Fatalf("confirmed: smoothed=%v rttvar=%v, want 55ms 28.75ms", r.Smoothed(), r.MeanDeviation())
	}

	// "SHOULD ignore the peer's max_ack_delay until the handshake is
	// confirmed": the full delay is subtracted before confirmation.
	r = NewRTTStats()
	r.SetMaxAckDelay(10 * renoMs)
	r.Update(50*renoMs, 0, false)
	r.Update(100*renoMs, 30*renoMs, false) // adjusted = 70ms
	// srtt = (350 + 70)/8 = 52.5; rttvar = (75 + 20)/4 = 23.75
	if r.Smoothed() != 52500*time.Microsecond || r.MeanDeviation() != 23750*time.Microsecond {
		t.Fatalf("unconfirmed: smoothed=%v rttvar=%v, want 52.5ms 23.75ms", r.Smoothed(), r.MeanDeviation())
	}
}

func TestRTTAckDelayNotBelowMin(t *testing.T) {
	// RFC 9002, Section 5.3: "MUST NOT subtract the acknowledgment delay from
	// the RTT sample if the resulting value is smaller than the min_rtt."
	r := NewRTTStats()
	r.SetMaxAckDelay(100 * renoMs)
	r.Update(50*renoMs, 0, true)
	r.Update(60*renoMs, 20*renoMs, true) // 60-20 = 40 < min 50: use 60
	// srtt = (350+60)/8 = 51.25; rttvar = (75 + 10)/4 = 21.25
	if r.Smoothed() != 51250*time.Microsecond || r.MeanDeviation() != 21250*time.Microsecond {
		t.Fatalf("smoothed=%v rttvar=%v, want 51.25ms 21.25ms", r.Smoothed(), r.MeanDeviation())
	}
	// Exactly min_rtt is allowed: "if (latest_rtt >= min_rtt + ack_delay)".
	r = NewRTTStats()
	r.SetMaxAckDelay(100 * renoMs)
	r.Update(50*renoMs, 0, true)
	r.Update(60*renoMs, 10*renoMs, true) // adjusted = 50
	if r.Smoothed() != 50*renoMs {
		t.Fatalf("smoothed=%v, want 50ms", r.Smoothed())
	}
}

func TestRTTHugeAckDelay(t *testing.T) {
	// wire.AckDelayToDuration saturates a peer's huge ACK Delay at
	// math.MaxInt64; before handshake confirmation it is not capped by
	// max_ack_delay. RFC 9002, Section 5.3: "MUST NOT subtract the
	// acknowledgment delay from the RTT sample if the resulting value is
	// smaller than the min_rtt."
	r := NewRTTStats()
	r.Update(50*renoMs, 0, false)
	r.Update(60*renoMs, time.Duration(math.MaxInt64), false)
	r.Update(60*renoMs, -time.Second, false)
	if r.Smoothed() < 50*renoMs || r.Smoothed() > 60*renoMs || r.MeanDeviation() <= 0 {
		t.Fatalf("smoothed=%v rttvar=%v after a huge and a negative ACK delay", r.Smoothed(), r.MeanDeviation())
	}
}

func TestRTTPTO(t *testing.T) {
	r := NewRTTStats()
	r.SetMaxAckDelay(25 * renoMs)
	r.Update(100*renoMs, 0, true) // srtt 100, rttvar 50
	// RFC 9002, Section 6.2.1: "PTO = smoothed_rtt + max(4*rttvar,
	// kGranularity) + max_ack_delay"
	if got, want := r.PTO(true), 100*renoMs+200*renoMs+25*renoMs; got != want {
		t.Fatalf("PTO(true) = %v, want %v", got, want)
	}
	// "When the PTO is armed for Initial or Handshake packet number spaces,
	// the max_ack_delay in the PTO period computation is set to 0"
	if got, want := r.PTO(false), 300*renoMs; got != want {
		t.Fatalf("PTO(false) = %v, want %v", got, want)
	}
	// "The PTO period MUST be at least kGranularity": with a tiny rttvar the
	// variance term is kGranularity.
	r = NewRTTStats()
	r.Update(100*time.Microsecond, 0, true) // srtt 100us, rttvar 50us: 4*rttvar = 200us < 1ms
	if got, want := r.PTO(false), 100*time.Microsecond+Granularity; got != want {
		t.Fatalf("PTO with small rttvar = %v, want %v", got, want)
	}
}

func TestRTTResetKeepsMaxAckDelay(t *testing.T) {
	r := NewRTTStats()
	r.SetMaxAckDelay(25 * renoMs)
	r.Update(100*renoMs, 0, true)
	r.Update(80*renoMs, 0, true)
	r.Reset()
	// RFC 9002, Section 5.3: "Before any RTT samples are available for a new
	// path or when the estimator is reset, the estimator is initialized using
	// the initial RTT". max_ack_delay is the peer's transport parameter and
	// survives a reset.
	if r.HasSample() || r.Smoothed() != InitialRTT || r.MeanDeviation() != InitialRTT/2 || r.Min() != 0 {
		t.Fatalf("after Reset: HasSample=%v smoothed=%v rttvar=%v min=%v", r.HasSample(), r.Smoothed(), r.MeanDeviation(), r.Min())
	}
	if r.MaxAckDelay() != 25*renoMs {
		t.Fatalf("MaxAckDelay after Reset = %v, want 25ms", r.MaxAckDelay())
	}
	// The next sample is again a first sample.
	r.Update(40*renoMs, 5*renoMs, true)
	if r.Smoothed() != 40*renoMs || r.MeanDeviation() != 20*renoMs || r.Min() != 40*renoMs {
		t.Fatalf("first sample after Reset: smoothed=%v rttvar=%v min=%v", r.Smoothed(), r.MeanDeviation(), r.Min())
	}
}

func TestRTTOnPersistentCongestion(t *testing.T) {
	r := NewRTTStats()
	r.OnPersistentCongestion() // no sample: nothing to do
	if r.Min() != 0 {
		t.Fatalf("min = %v without a sample", r.Min())
	}
	r.Update(50*renoMs, 0, true)
	r.Update(200*renoMs, 0, true)
	// RFC 9002, Section 5.2: "Endpoints SHOULD set the min_rtt to the newest
	// RTT sample after persistent congestion is established."
	r.OnPersistentCongestion()
	if r.Min() != 200*renoMs {
		t.Fatalf("min = %v after persistent congestion, want 200ms", r.Min())
	}
}

func TestRTTNonPositiveSample(t *testing.T) {
	r := NewRTTStats()
	r.Update(0, 0, true)
	if !r.HasSample() || r.Latest() <= 0 || r.Min() <= 0 {
		t.Fatalf("zero sample: latest=%v min=%v", r.Latest(), r.Min())
	}
}
