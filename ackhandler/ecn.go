package ackhandler

import "github.com/quicstack/quic/wire"

// An ECNMark is the ECN codepoint of an IP packet. The values are the two
// ECN bits of the IP header (RFC 3168, Section 5), so that a socket layer
// can convert them directly.
type ECNMark uint8

// The ECN codepoints.
const (
	NotECT ECNMark = 0b00 // Not ECN-Capable Transport
	ECT1   ECNMark = 0b01 // ECN-Capable Transport (1)
	ECT0   ECNMark = 0b10 // ECN-Capable Transport (0)
	CE     ECNMark = 0b11 // Congestion Experienced
)

// String returns "Not-ECT", "ECT(1)", "ECT(0)" or "CE".
func (m ECNMark) String() string {
	switch m {
	case NotECT:
		return "Not-ECT"
	case ECT1:
		return "ECT(1)"
	case ECT0:
		return "ECT(0)"
	case CE:
		return "CE"
	}
	return "invalid"
}

// An ECNState is the state of ECN validation of the path (RFC 9000,
// Appendix A.4): "The path is assigned an ECN state that is one of
// "testing", "unknown", "failed", or "capable"."
type ECNState uint8

// The ECN validation states.
const (
	// ECNTesting is the initial state: the first ECNTestingPackets
	// packets are marked ECT(0).
	ECNTesting ECNState = iota
	// ECNUnknown follows the testing period until an ACK frame validates
	// the counts; packets are not marked.
	ECNUnknown
	// ECNCapable means the path and the peer passed validation; packets
	// are marked ECT(0).
	ECNCapable
	// ECNFailed means validation failed (or ECN was disabled); packets
	// are not marked and ECN counts are ignored.
	ECNFailed
)

// String returns the qlog name of the state.
func (s ECNState) String() string {
	switch s {
	case ECNTesting:
		return "testing"
	case ECNUnknown:
		return "unknown"
	case ECNCapable:
		return "capable"
	case ECNFailed:
		return "failed"
	}
	return "invalid"
}

// ECNTestingPackets is the number of packets marked ECT(0) while testing a
// path (RFC 9000, Section 13.4.2): "the endpoint could set an ECT codepoint
// for only the first ten outgoing packets on a path".
const ECNTestingPackets = 10

// ecnValidator runs ECN validation for the connection's path. The counts
// that ACK frames are compared against are per packet number space and
// live in spaceState.
type ecnValidator struct {
	state ECNState
	// testingLeft is the number of packets still to mark while testing.
	testingLeft int
	// Marked packets sent since validation started: outstanding ones,
	// acknowledged ones, and those declared lost, of which lostPending
	// still have a record that a late acknowledgment can find.
	outstanding, acked, lost, lostPending int
}

func (v *ecnValidator) reset(disabled bool) {
	*v = ecnValidator{state: ECNTesting, testingLeft: ECNTestingPackets}
	if disabled {
		v.state = ECNFailed
	}
}

// marking returns the codepoint for the next packet: "On paths with a
// "testing" or "capable" state, the endpoint sends packets with an ECT
// marking -- ECT(0) by default; otherwise, the endpoint sends unmarked
// packets."
func (v *ecnValidator) marking() ECNMark {
	if v.state == ECNTesting || v.state == ECNCapable {
		return ECT0
	}
	return NotECT
}

func ecnMarked(m ECNMark) bool { return m == ECT0 || m == ECT1 }

// The counters below may already be 0 for packets sent before
// RestartECNValidation: they never go negative.

func (v *ecnValidator) onSent(m ECNMark) {
	if !ecnMarked(m) {
		return
	}
	v.outstanding++
	if v.state == ECNTesting {
		v.testingLeft--
		if v.testingLeft <= 0 {
			v.state = ECNUnknown
		}
	}
}

// onPTO ends the testing period at a probe timeout if no marked packet
// was acknowledged yet: on a path that drops ECT(0) packets nothing else
// would, since nothing is acknowledged and each PTO doubles the wait
// (RFC 9002, Section 6.2.1) for the few packets each may send, and "If
// all packets marked with non-zero ECN codepoints are subsequently lost,
// it can disable marking on the assumption that the marking caused the
// loss" (RFC 9000, Section 13.4.2). The probes go unmarked; the state is
// unknown until the marked packets are acknowledged (capable) or lost
// (failed). A PTO once a marked packet was acknowledged says nothing of
// the marking.
func (v *ecnValidator) onPTO() {
	if v.state == ECNTesting && v.acked == 0 && v.outstanding > 0 {
		v.state = ECNUnknown
	}
}

func (v *ecnValidator) onAcked(m ECNMark) {
	if ecnMarked(m) {
		v.outstanding = max(v.outstanding-1, 0)
		v.acked++
	}
}

// onGone accounts for a marked packet declared lost (lost), or discarded
// with its packet number space or abandoned (!lost).
func (v *ecnValidator) onGone(m ECNMark, lost bool) {
	if !ecnMarked(m) {
		return
	}
	v.outstanding = max(v.outstanding-1, 0)
	if lost {
		v.lost++
		v.lostPending++
	}
	v.checkAllLost()
}

// onLateAck accounts for a marked packet acknowledged after it was
// declared lost: the marking did not make it lose.
func (v *ecnValidator) onLateAck(m ECNMark) {
	if ecnMarked(m) && v.lostPending > 0 {
		v.lostPending--
		v.lost--
		v.acked++
	}
}

// onLostExpired accounts for the record of a marked lost packet being
// forgotten: the loss is final.
func (v *ecnValidator) onLostExpired(m ECNMark) {
	if ecnMarked(m) && v.lostPending > 0 {
		v.lostPending--
		v.checkAllLost()
	}
}

// checkAllLost fails validation when every marked packet of a finished
// testing period was lost: "If all packets marked with non-zero ECN
// codepoints are subsequently lost, it can disable marking on the
// assumption that the marking caused the loss" (RFC 9000, Section
// 13.4.2). Losses count as final once their records expire, so that
// packets declared lost by reordering and acknowledged late do not fail
// validation.
func (v *ecnValidator) checkAllLost() {
	if v.state == ECNUnknown && v.outstanding == 0 && v.lostPending == 0 && v.acked == 0 && v.lost > 0 {
		v.state = ECNFailed
	}
}

// validate checks the ECN counts of an ACK frame for space s that newly
// acknowledged newECT0 and newECT1 packets sent with those codepoints
// (RFC 9000, Section 13.4.2.1), and updates the space's counts. It
// reports whether the ECN-CE count increased in a valid frame.
func (v *ecnValidator) validate(s *spaceState, f *wire.AckFrame, largestIncreased bool, newECT0, newECT1 uint64) (ce bool) {
	if v.state == ECNFailed {
		return false
	}
	// "An endpoint MUST NOT fail ECN validation as a result of processing
	// an ACK frame that does not increase the largest acknowledged packet
	// number." Such a frame's counts are not used either: the next frame
	// that increases the largest acknowledged carries them cumulatively.
	if !largestIncreased {
		return false
	}
	if !f.HasECN {
		// "If an ACK frame newly acknowledges a packet that the endpoint
		// sent with either the ECT(0) or ECT(1) codepoint set, ECN
		// validation fails if the corresponding ECN counts are not
		// present in the ACK frame."
		if newECT0+newECT1 > 0 {
			v.state = ECNFailed
		}
		return false
	}
	c, prev := f.ECN, s.ecnCounts
	// Counts are totals since the start of the connection: a decrease
	// is an inconsistent report.
	if c.ECT0 < prev.ECT0 || c.ECT1 < prev.ECT1 || c.CE < prev.CE ||
		// "ECN validation can fail if the received total count for
		// either ECT(0) or ECT(1) exceeds the total number of packets
		// sent with each corresponding ECT codepoint."
		c.ECT0 > s.ect0Sent || c.ECT1 > s.ect1Sent {
		v.state = ECNFailed
		return false
	}
	dECT0, dECT1, dCE := c.ECT0-prev.ECT0, c.ECT1-prev.ECT1, c.CE-prev.CE
	// "ECN validation also fails if the sum of the increase in ECT(0) and
	// ECN-CE counts is less than the number of newly acknowledged packets
	// that were originally sent with an ECT(0) marking. Similarly, ECN
	// validation fails if the sum of the increases to ECT(1) and ECN-CE
	// counts is less than the number of newly acknowledged packets sent
	// with an ECT(1) marking."
	if dECT0+dCE < newECT0 || dECT1+dCE < newECT1 {
		v.state = ECNFailed
		return false
	}
	s.ecnCounts = c
	// "From the "unknown" state, successful validation of the ECN counts
	// in an ACK frame ... causes the ECN state for the path to become
	// "capable", unless no marked packet has been acknowledged." A
	// successful validation during testing ends testing the same way.
	if (v.state == ECNTesting || v.state == ECNUnknown) && newECT0+newECT1 > 0 {
		v.state = ECNCapable
	}
	return dCE > 0
}
