package congestion

import (
	"math"
	"time"
)

// PacerBurstPackets is the pacer's burst allowance in full-size datagrams
// at low rates: after an idle period up to this many may leave back to
// back, so that a GSO batch goes out together. RFC 9002, Section 7.7:
// "Senders SHOULD limit bursts to the initial congestion window", which is
// ten datagrams.
const PacerBurstPackets = 10

// PacerBurstInterval and PacerMaxBurstBytes set the burst allowance at high
// rates: what the pacing rate moves in PacerBurstInterval (1 ms), at most
// PacerMaxBurstBytes (64 KiB, one full GSO run), when that is more than
// PacerBurstPackets datagrams (above about 116 Mbit/s with 1,452-byte
// datagrams). It is BBR's send quantum, "the maximum size of these
// transmission aggregates":
//
//	"C.send_quantum = C.pacing_rate * 1ms
//	 C.send_quantum = min(C.send_quantum, 64 KBytes)"
//	draft-ietf-ccwg-bbr, Section 5.6.3
//
// and about what a paced Linux TCP flow puts in one TSO or GSO packet. RFC
// 9002, Section 7.7 allows it: "A sender with knowledge that the network
// path to the receiver can absorb larger bursts MAY use a higher limit."
//
// With ten 1,452-byte datagrams per burst, a sender at Gbit/s rates woke
// and called sendmmsg once per 14.5 KB (about 15 datagrams per GSO run);
// with 1 ms of the rate it sends 70 to 80 per call, and the receiver gets
// larger GRO runs and sends about 4 times fewer ACK packets (issue 28's
// A/B over loopback: 15-25% less CPU per GB for both sides). 128 KiB
// measured no better than 64 KiB.
const (
	PacerBurstInterval = time.Millisecond
	PacerMaxBurstBytes = 64 << 10
)

// pacerMaxRate bounds the rate used in the token arithmetic (1 TiB/s);
// faster rates are effectively unpaced.
const pacerMaxRate = 1 << 40

// pacerScale is the number of token units per byte: tokens are kept in
// nanobytes so that refilling at rate bytes per second adds exactly rate
// units per nanosecond, with no rounding loss however often it is called.
const pacerScale = uint64(time.Second)

// A Pacer spreads a connection's packets over time (RFC 9002, Section 7.7)
// with a token bucket: the bucket holds up to PacerBurstPackets full-size
// datagrams, or at high rates what the rate moves in PacerBurstInterval (at
// most PacerMaxBurstBytes), and refills at the rate the congestion controller asks for
// (Controller.PacingRate). A packet may be sent when the bucket holds at
// least one full-size datagram; sending takes its size out, and the bucket
// may go into debt by at most PacerBurstPackets datagrams. A rate of 0
// means unpaced.
//
// It starts full. It reads no clock: time comes in as now. A Pacer is not
// safe for concurrent use, and its methods do not allocate.
type Pacer struct {
	mds    int
	tokens int64 // in nanobytes (bytes * pacerScale); may be negative
	last   time.Time
	// started reports that last is valid.
	started bool
}

// NewPacer returns a full Pacer for datagrams of at most maxDatagramSize
// bytes (0 or less means 1200).
func NewPacer(maxDatagramSize int) *Pacer {
	p := &Pacer{}
	p.SetMaxDatagramSize(maxDatagramSize)
	p.tokens = p.capacity(0)
	return p
}

// SetMaxDatagramSize changes the maximum datagram size, which sets the
// burst allowance at low rates to PacerBurstPackets of it (0 or less means
// 1200).
func (p *Pacer) SetMaxDatagramSize(n int) {
	if n <= 0 {
		n = renoDefaultDatagramSize
	}
	p.mds = n
	p.tokens = min(p.tokens, p.capacity(0))
}

// capacity returns the size of the bucket, in nanobytes, when pacing at
// rate bytes per second: PacerBurstPackets datagrams, or what rate moves in
// PacerBurstInterval if that is more, up to PacerMaxBurstBytes.
func (p *Pacer) capacity(rate uint64) int64 {
	c := int64(PacerBurstPackets) * int64(p.mds) * int64(pacerScale)
	// rate bytes/s for PacerBurstInterval ns is rate*PacerBurstInterval
	// nanobytes; at most 2^40 * 10^6, no overflow.
	b := min(min(rate, pacerMaxRate)*uint64(PacerBurstInterval), PacerMaxBurstBytes*pacerScale)
	return max(c, int64(b))
}

// available returns the tokens at now after refilling since the last
// update at rate, without changing p.
func (p *Pacer) available(now time.Time, rate uint64) int64 {
	if !p.started || rate == 0 {
		return p.tokens
	}
	cp := p.capacity(rate)
	// A bucket filled at a higher rate holds at most what this one does.
	tokens := min(p.tokens, cp)
	elapsed := now.Sub(p.last)
	if elapsed <= 0 {
		return tokens
	}
	rate = min(rate, pacerMaxRate)
	deficit := uint64(cp - tokens)
	// Time to fill the bucket, rounded up: past it the bucket is full.
	if uint64(elapsed) >= (deficit+rate-1)/rate {
		return cp
	}
	// elapsed*rate < deficit+rate: no overflow.
	return tokens + int64(uint64(elapsed)*rate)
}

// OnPacketSent takes bytes out of the bucket for a packet sent at now while
// pacing at rate bytes per second. Packets sent unpaced (rate 0) keep the
// bucket full.
func (p *Pacer) OnPacketSent(now time.Time, bytes int, rate uint64) {
	if rate == 0 {
		p.tokens = p.capacity(0)
		p.last, p.started = now, true
		return
	}
	t := p.available(now, rate)
	if !p.started || now.After(p.last) {
		p.last = now
	}
	p.started = true
	if bytes > 0 {
		t -= int64(bytes) * int64(pacerScale)
	}
	p.tokens = max(t, -p.capacity(0))
}

// TimeUntilSend returns the earliest time the next full-size packet may be
// sent when pacing at rate bytes per second: now when it may be sent right
// away (the result is never after now in that case), otherwise the time
// at which the bucket will hold one full-size datagram. A rate of 0 means
// unpaced and always returns now.
func (p *Pacer) TimeUntilSend(now time.Time, rate uint64) time.Time {
	if rate == 0 {
		return now
	}
	need := int64(p.mds) * int64(pacerScale)
	if p.tokens >= need {
		// available never returns less than min(p.tokens, capacity), and
		// the capacity is at least PacerBurstPackets datagrams: a packet
		// may go, without the clock arithmetic.
		return now
	}
	t := p.available(now, rate)
	if t >= need {
		return now
	}
	rate = min(rate, pacerMaxRate)
	missing := uint64(need - t) // at most two bursts in nanobytes
	wait := time.Duration((missing + rate - 1) / rate)
	base := now
	if p.started && p.last.After(now) {
		base = p.last
	}
	return base.Add(wait)
}

// Budget returns the number of bytes that may be sent at now when pacing
// at rate bytes per second: the bucket's content, 0 when it is in debt,
// and math.MaxInt when unpaced (rate 0).
func (p *Pacer) Budget(now time.Time, rate uint64) int {
	if rate == 0 {
		return math.MaxInt
	}
	t := p.available(now, rate)
	if t <= 0 {
		return 0
	}
	return int(uint64(t) / pacerScale)
}
