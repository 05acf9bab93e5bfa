package congestion

import (
	"math"
	"math/bits"
	"time"
)

// This file implements the delivery rate sampling algorithm of
// draft-ietf-ccwg-bbr, Section 4.1 ("Delivery Rate Samples"): "a generic
// algorithm for a transport protocol sender to estimate the current
// delivery rate of its data on the fly".
//
// The Controller interface reports packets by number, size and send time
// only, so the sampler keeps the per-packet (P) state of Section 4.1.2.1.2
// itself, in rateRing, for the packets in flight.

// rateMaxTracked bounds the packets whose delivery state the sampler keeps.
// When more packets are in flight (or the connection forgot to report some
// as acknowledged or lost), the oldest entries are dropped: their ACKs
// still count as delivered data but give no rate sample. At 1200-byte
// packets the bound covers about 78 MB in flight.
const rateMaxTracked = 1 << 16

// rateInitialTracked is the ring's capacity at the first packet sent (not
// before: a connection that never sends, or is released idle, holds none);
// it doubles as needed up to rateMaxTracked and never shrinks while
// packets are in flight, so that the steady state does not allocate. 16
// covers a handshake's packets (a ring of 64 was 4.6 KB of each
// connection's handshake allocations, issue 28).
const rateInitialTracked = 16

// ratePacket is the per-packet (P) state of Section 4.1.2.1.2. Times are
// nanoseconds since the sampler's epoch.
type ratePacket struct {
	pn            int64 // P.packet_id: "for QUIC it is the packet number"
	sendTime      int64 // P.send_time
	size          int64 // P.data_length
	delivered     int64 // P.delivered: "C.delivered when the packet was sent"
	deliveredTime int64 // P.delivered_time: "C.delivered_time when the packet was sent"
	firstSendTime int64 // P.first_send_time: "C.first_send_time when the packet was sent"
	lost          int64 // P.lost: "C.lost when the packet was sent"
	txInFlight    int64 // P.tx_in_flight: "C.inflight immediately after the transmission"
	isAppLimited  bool  // P.is_app_limited: "true if C.app_limited was non-zero"
	done          bool  // acknowledged, lost or forgotten; removed lazily
}

// rateRing holds the ratePacket of each packet in flight in send order. It
// is a ring buffer whose length is a power of two. Acknowledged and lost
// entries are marked done and popped once they reach the front, so that
// the front entry is always live (or the ring is empty).
//
// Entries are found by (send time, packet number) with a binary search:
// send times are nondecreasing in the ring as the connection's clock is
// monotonic (a packet reported with an earlier time than its predecessor
// may not be found again, and then counts as delivered without a sample),
// and the pair stays unambiguous even though QUIC's three packet number
// spaces reuse packet numbers.
type rateRing struct {
	buf       []ratePacket
	head      int   // index in buf of the oldest entry
	n         int   // entries from head, live or done
	live      int   // entries not done
	liveBytes int64 // sum of size over live entries
}

func (r *rateRing) at(i int) *ratePacket { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

// push appends an entry and returns it for the caller to fill in. It grows
// the ring, or drops the oldest entry once the ring holds rateMaxTracked.
func (r *rateRing) push(p ratePacket) {
	if r.n == len(r.buf) {
		if len(r.buf) >= rateMaxTracked {
			r.dropOldest()
		} else {
			r.grow()
		}
	}
	*r.at(r.n) = p
	r.n++
	r.live++
	r.liveBytes += p.size
}

func (r *rateRing) grow() {
	size := max(2*len(r.buf), rateInitialTracked)
	buf := make([]ratePacket, size)
	for i := range r.n {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}

// release frees the ring's storage if it holds no entry; the next push
// allocates it again at its initial capacity.
func (r *rateRing) release() {
	if r.n == 0 {
		r.buf, r.head = nil, 0
	}
}

// find returns the position of the live entry with the given send time and
// packet number, or -1. ACKs report packets in ascending order and
// acknowledged entries are popped from the front, so in a steady transfer
// the packet is the front entry: that is checked first, before the binary
// search (which took 3% of a bulk sender's CPU at 1,452-byte packets,
// issue 28).
func (r *rateRing) find(sendTime, pn int64) int {
	if r.n == 0 {
		return -1
	}
	if p := r.at(0); p.sendTime == sendTime && p.pn == pn && !p.done {
		return 0
	}
	lo, hi := 0, r.n
	for lo < hi { // first position with sendTime >= the one searched
		mid := int(uint(lo+hi) >> 1)
		if r.at(mid).sendTime < sendTime {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for i := lo; i < r.n; i++ {
		p := r.at(i)
		if p.sendTime != sendTime {
			break
		}
		if p.pn == pn && !p.done {
			return i
		}
	}
	return -1
}

// remove marks the entry at position i done and pops done entries from the
// front.
func (r *rateRing) remove(i int) {
	p := r.at(i)
	p.done = true
	r.live--
	r.liveBytes -= p.size
	r.compact()
}

func (r *rateRing) compact() {
	for r.n > 0 && r.at(0).done {
		r.head = (r.head + 1) & (len(r.buf) - 1)
		r.n--
	}
}

// dropOldest forgets the oldest live entry.
func (r *rateRing) dropOldest() {
	if r.n == 0 {
		return
	}
	r.remove(0)
}

// rateSample is the per-ACK rate sample RS of Sections 2.3 and 4.1.2.1.3.
type rateSample struct {
	deliveryRate   uint64        // RS.delivery_rate, bytes per second; 0: no sample
	isAppLimited   bool          // RS.is_app_limited
	interval       time.Duration // RS.interval
	delivered      int64         // RS.delivered
	priorDelivered int64         // RS.prior_delivered
	priorTime      int64         // RS.prior_time (valid when hasData)
	sendElapsed    time.Duration // RS.send_elapsed
	ackElapsed     time.Duration // RS.ack_elapsed
	lastAckedPN    int64         // RS.last_acked_packet_id
	rtt            time.Duration // RS.rtt; -1: none
	hasData        bool          // RS.has_data
	txInFlight     int64         // RS.tx_in_flight
	lost           int64         // RS.lost
	priorLost      int64         // P.lost of the most recently sent packet acknowledged
	newlyAcked     int64         // RS.newly_acked
	newlyLost      int64         // RS.newly_lost
	newestSent     time.Time     // send time of the most recently sent packet acknowledged
}

// rateSampler is the delivery rate sampler: the per-connection (C) state of
// Section 4.1.2.1.1, the per-packet state of the packets in flight and the
// rate sample of the ACK being processed. It does not track C.inflight: the
// caller passes the connection's bytes in flight.
type rateSampler struct {
	epoch    time.Time // time origin of the int64 times
	hasEpoch bool

	delivered     int64 // C.delivered
	deliveredTime int64 // C.delivered_time
	firstSendTime int64 // C.first_send_time
	appLimited    int64 // C.app_limited: "The index of the last transmitted packet marked as application-limited, or 0"
	lost          int64 // C.lost

	packets rateRing
	rs      rateSample
}

func (s *rateSampler) init() {
	s.rs.rtt = -1 // the ring grows at the first push
}

// ts converts now to nanoseconds since the epoch, which is the first time
// the sampler sees.
func (s *rateSampler) ts(now time.Time) int64 {
	if !s.hasEpoch {
		s.epoch, s.hasEpoch = now, true
	}
	return int64(now.Sub(s.epoch))
}

// onPacketSent snapshots the delivery state in the packet's state
// (Section 4.1.2.2). inflight is C.inflight including the packet.
//
//	OnPacketSent(Packet P):
//	  if (C.inflight == 0)
//	    C.first_send_time  = C.delivered_time = P.send_time
//	  P.first_send_time = C.first_send_time
//	  P.delivered_time  = C.delivered_time
//	  P.delivered       = C.delivered
//	  P.is_app_limited  = (C.app_limited != 0)
//	  P.tx_in_flight    = C.inflight    /* includes data in P */
//	  P.lost            = C.lost
func (s *rateSampler) onPacketSent(now time.Time, pn int64, size, inflight int64) {
	t := s.ts(now)
	if inflight-size <= 0 {
		s.firstSendTime, s.deliveredTime = t, t
	}
	s.packets.push(ratePacket{
		pn:            pn,
		sendTime:      t,
		size:          size,
		delivered:     s.delivered,
		deliveredTime: s.deliveredTime,
		firstSendTime: s.firstSendTime,
		lost:          s.lost,
		txInFlight:    inflight,
		isAppLimited:  s.appLimited != 0,
	})
	s.trim(inflight)
}

// initRateSample starts the rate sample of an ACK (Section 4.1.2.3).
//
//	InitRateSample():
//	  RS.rtt           = -1
//	  RS.has_data      = false
//	  RS.prior_time    = 0
//	  RS.interval      = 0
//	  RS.delivery_rate = 0
func (s *rateSampler) initRateSample() {
	s.rs = rateSample{rtt: -1}
}

// onPacketAcked is UpdateRateSample(P) of Section 4.1.2.3 for one newly
// acknowledged packet. It also takes RS.rtt: "RS.rtt = Now() -
// P.send_time" for "the most recently-sent packet of the packets that have
// just been ACKed" (Sections 2.3 and 4.2). A packet the sampler does not
// know (forgotten beyond rateMaxTracked) counts as delivered but gives no
// sample.
func (s *rateSampler) onPacketAcked(now time.Time, ap *AckedPacket) {
	rs := &s.rs
	size := int64(ap.Bytes)
	rs.newlyAcked += size
	if rs.rtt < 0 || ap.SentTime.After(rs.newestSent) {
		rs.newestSent = ap.SentTime
		rs.rtt = max(now.Sub(ap.SentTime), 0)
	}
	t := s.ts(now)
	sent := s.ts(ap.SentTime)
	// "C.delivered += P.data_length; C.delivered_time = Now()"
	s.delivered += size
	s.deliveredTime = t
	i := s.packets.find(sent, ap.PacketNumber)
	if i < 0 {
		return
	}
	p := s.packets.at(i)
	// "Update info using the newest packet:"
	if !rs.hasData || s.isNewestPacket(p) {
		rs.hasData = true
		rs.priorDelivered = p.delivered
		rs.priorTime = p.deliveredTime
		rs.isAppLimited = p.isAppLimited
		rs.sendElapsed = time.Duration(p.sendTime - p.firstSendTime)
		rs.ackElapsed = time.Duration(s.deliveredTime - p.deliveredTime)
		rs.lastAckedPN = p.pn
		rs.txInFlight = p.txInFlight
		rs.priorLost = p.lost
		s.firstSendTime = p.sendTime
	}
	// "Mark the packet as delivered once it's acknowledged."
	s.packets.remove(i)
}

// isNewestPacket reports whether p is the most recently sent packet that
// has been delivered:
//
//	return (P.send_time > C.first_send_time ||
//	        (P.send_time == C.first_send_time &&
//	         P.packet_id > RS.last_acked_packet_id))
func (s *rateSampler) isNewestPacket(p *ratePacket) bool {
	return p.sendTime > s.firstSendTime ||
		(p.sendTime == s.firstSendTime && p.pn > s.rs.lastAckedPN)
}

// generateRateSample finishes the rate sample once all the packets of the
// ACK were processed (GenerateRateSample of Section 4.1.2.3). minRTT is
// C.min_rtt, "The minimum observed RTT over the lifetime of the
// connection".
func (s *rateSampler) generateRateSample(minRTT time.Duration) {
	rs := &s.rs
	// "Clear app-limited field if bubble is ACKed and gone."
	if s.appLimited != 0 && s.delivered > s.appLimited {
		s.appLimited = 0
	}
	if !rs.hasData {
		return // "nothing delivered on this ACK"
	}
	// "Use the longer of the send_elapsed and ack_elapsed"
	rs.interval = max(rs.sendElapsed, rs.ackElapsed)
	rs.delivered = s.delivered - rs.priorDelivered
	rs.lost = s.lost - rs.priorLost
	// "Normally we expect interval >= MinRTT."
	if rs.interval < minRTT {
		return // "no reliable rate sample"
	}
	if rs.interval != 0 {
		// "RS.delivery_rate = RS.delivered / RS.interval"
		rs.deliveryRate = rateMulDiv(uint64(max(rs.delivered, 0)), uint64(time.Second), uint64(rs.interval))
	}
}

// onPacketLost accounts a packet declared lost: C.lost, "The total amount
// of data marked as lost so far", and RS.newly_lost. It returns the
// packet's state, which it forgets, and whether it knew the packet.
func (s *rateSampler) onPacketLost(lp *LostPacket) (ratePacket, bool) {
	size := int64(lp.Bytes)
	s.lost += size
	s.rs.newlyLost += size
	i := s.packets.find(s.ts(lp.SentTime), lp.PacketNumber)
	if i < 0 {
		return ratePacket{}, false
	}
	p := *s.packets.at(i)
	s.packets.remove(i)
	return p, true
}

// markAppLimited is MarkConnectionAppLimited of Section 4.1.2.4:
//
//	C.app_limited = max(C.delivered + C.inflight, 1)
func (s *rateSampler) markAppLimited(inflight int64) {
	s.appLimited = max(s.delivered+inflight, 1)
}

// trim drops the oldest tracked packets while the tracked bytes exceed the
// connection's bytes in flight. That happens when the connection stops
// counting packets without reporting them acknowledged or lost, as when it
// discards a packet number space (RFC 9002, Section 6.4: "the sender MUST
// discard all recovery state associated with those packets and MUST remove
// them from the count of bytes in flight").
func (s *rateSampler) trim(inflight int64) {
	for s.packets.liveBytes > max(inflight, 0) && s.packets.live > 0 {
		s.packets.dropOldest()
	}
}

// rateMulDiv returns a*b/c rounded down, computed without overflow, and
// saturated at math.MaxUint64 (also for c == 0).
func rateMulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if c == 0 || hi >= c {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, c)
	return q
}
