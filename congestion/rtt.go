package congestion

import "time"

// Constants of RFC 9002, Section 6.1.2 and Appendix A.2.
const (
	// InitialRTT is the RTT assumed before any sample: "When no previous
	// RTT is available, the initial RTT SHOULD be set to 333 milliseconds."
	InitialRTT = 333 * time.Millisecond
	// Granularity is the system timer granularity kGranularity: "The
	// RECOMMENDED value of the timer granularity (kGranularity) is 1
	// millisecond."
	Granularity = time.Millisecond
)

// RTTStats estimates the round-trip time of a path (RFC 9002, Section 5).
// The zero value is not ready for use; call NewRTTStats.
type RTTStats struct {
	latest, min, smoothed, rttvar time.Duration
	hasSample                     bool
	maxAckDelay                   time.Duration
}

// NewRTTStats returns an estimator in its initial state (RFC 9002,
// Section 5.3): "smoothed_rtt = kInitialRtt; rttvar = kInitialRtt / 2".
func NewRTTStats() *RTTStats {
	r := &RTTStats{}
	r.Reset()
	return r
}

// Reset returns the estimator to its initial state, as for a new path
// (RFC 9000, Section 9.4).
func (r *RTTStats) Reset() {
	mad := r.maxAckDelay
	*r = RTTStats{smoothed: InitialRTT, rttvar: InitialRTT / 2, maxAckDelay: mad}
}

// SetMaxAckDelay records the peer's max_ack_delay transport parameter,
// which bounds the ACK delay subtracted from samples once the handshake is
// confirmed and is part of the PTO.
func (r *RTTStats) SetMaxAckDelay(d time.Duration) { r.maxAckDelay = d }

// MaxAckDelay returns the peer's max_ack_delay.
func (r *RTTStats) MaxAckDelay() time.Duration { return r.maxAckDelay }

// HasSample reports whether at least one RTT sample was taken.
func (r *RTTStats) HasSample() bool { return r.hasSample }

// Latest returns latest_rtt, the most recent sample.
func (r *RTTStats) Latest() time.Duration { return r.latest }

// Min returns min_rtt, the smallest sample seen (0 before any sample).
func (r *RTTStats) Min() time.Duration { return r.min }

// Smoothed returns smoothed_rtt.
func (r *RTTStats) Smoothed() time.Duration { return r.smoothed }

// MeanDeviation returns rttvar.
func (r *RTTStats) MeanDeviation() time.Duration { return r.rttvar }

// Update takes an RTT sample: latest is the time from sending the largest
// newly acknowledged packet to receiving its acknowledgment, ackDelay the
// peer's reported ACK delay, decoded. It follows RFC 9002, Section 5 and
// Appendix A.7:
//
//   - min_rtt is the smallest sample, without adjusting for ACK delay.
//   - "an endpoint ... MAY ignore the acknowledgment delay for Initial
//     packets" and before confirmation; after the handshake is confirmed
//     the delay is bounded by max_ack_delay: "MUST use the lesser of the
//     acknowledgment delay and the peer's max_ack_delay after the handshake
//     is confirmed".
//   - "MUST NOT subtract the acknowledgment delay from the RTT sample if
//     the resulting value is smaller than the min_rtt."
//   - The first sample sets smoothed_rtt = latest and rttvar = latest/2;
//     later ones use the 7/8 and 3/4 EWMA.
func (r *RTTStats) Update(latest, ackDelay time.Duration, handshakeConfirmed bool) {
	if latest <= 0 {
		latest = time.Nanosecond
	}
	r.latest = latest
	if !r.hasSample {
		r.hasSample = true
		r.min = latest
		r.smoothed = latest
		r.rttvar = latest / 2
		return
	}
	r.min = min(r.min, latest)
	ackDelay = max(ackDelay, 0) // a peer's delay is decoded from an unsigned field
	if handshakeConfirmed {
		ackDelay = min(ackDelay, r.maxAckDelay)
	}
	adjusted := latest
	// latest >= min here, so latest-min cannot overflow even when a peer
	// reports an absurd delay before the handshake is confirmed.
	if latest-r.min >= ackDelay {
		adjusted = latest - ackDelay
	}
	r.rttvar = (3*r.rttvar + absDuration(r.smoothed-adjusted)) / 4
	r.smoothed = (7*r.smoothed + adjusted) / 8
}

// PTO returns the probe timeout period without backoff (RFC 9002,
// Section 6.2.1): smoothed_rtt + max(4*rttvar, kGranularity), plus
// max_ack_delay when includeMaxAckDelay is set ("When the PTO is armed for
// Initial or Handshake packet number spaces, the max_ack_delay in the PTO
// period computation is set to 0").
func (r *RTTStats) PTO(includeMaxAckDelay bool) time.Duration {
	pto := r.smoothed + max(4*r.rttvar, Granularity)
	if includeMaxAckDelay {
		pto += r.maxAckDelay
	}
	return pto
}

// OnPersistentCongestion resets min_rtt to the latest sample: "Endpoints
// SHOULD set the min_rtt to the newest RTT sample after persistent
// congestion is established" (RFC 9002, Section 5.2).
func (r *RTTStats) OnPersistentCongestion() {
	if r.hasSample {
		r.min = r.latest
	}
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
