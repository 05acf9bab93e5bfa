package congestion

import (
	"testing"
	"time"
)

// rateTestClock drives a rateSampler over a path that delivers a steady
// flow: one packet of size bytes every gap, each acknowledged rtt after it
// was sent.
type rateTestClock struct {
	s        rateSampler
	t0       time.Time
	size     int
	gap, rtt time.Duration
	sent     []AckedPacket
	inflight int64
}

func newRateTestClock(size int, gap, rtt time.Duration) *rateTestClock {
	c := &rateTestClock{t0: time.Unix(0, 0), size: size, gap: gap, rtt: rtt}
	c.s.init()
	return c
}

// run sends n packets, one per gap, and processes each ACK when it is due,
// calling check with each ACK's rate sample.
func (c *rateTestClock) run(n int, check func(i int, rs *rateSample)) {
	next := 0 // next packet to acknowledge
	for i := range n {
		now := c.t0.Add(time.Duration(i) * c.gap)
		for next < len(c.sent) && !c.sent[next].SentTime.Add(c.rtt).After(now) {
			c.ack(next, c.sent[next].SentTime.Add(c.rtt), check)
			next++
		}
		c.inflight += int64(c.size)
		c.s.onPacketSent(now, int64(i), int64(c.size), c.inflight)
		c.sent = append(c.sent, AckedPacket{PacketNumber: int64(i), Bytes: c.size, SentTime: now})
	}
}

func (c *rateTestClock) ack(i int, now time.Time, check func(i int, rs *rateSample)) {
	c.s.initRateSample()
	c.s.onPacketAcked(now, &c.sent[i])
	c.inflight -= int64(c.size)
	c.s.generateRateSample(c.rtt)
	check(i, &c.s.rs)
}

// A steady ACK clock yields the sending rate: draft-ietf-ccwg-bbr, Section
// 4.1.1.2.4: "delivery_rate = data_acked / delivery_elapsed" with
// "delivery_elapsed = max(ack_elapsed, send_elapsed)".
func TestRateSampleSteadyClock(t *testing.T) {
	const size = 1200
	gap := time.Millisecond // 1.2 MB/s
	c := newRateTestClock(size, gap, 50*time.Millisecond)
	want := uint64(size) * uint64(time.Second/gap)
	samples := 0
	c.run(2000, func(i int, rs *rateSample) {
		if !rs.hasData {
			t.Fatalf("ACK of packet %d: no data", i)
		}
		if rs.rtt != 50*time.Millisecond {
			t.Fatalf("ACK of packet %d: rtt %v", i, rs.rtt)
		}
		if rs.newlyAcked != size {
			t.Fatalf("newly_acked %d", rs.newlyAcked)
		}
		if i < 100 { // the first round trip measures the start of the flow
			return
		}
		samples++
		// RS.delivered: the data delivered during the packet's round
		// trip, one packet per gap.
		if rs.deliveryRate == 0 {
			t.Fatalf("ACK of packet %d: no rate (interval %v)", i, rs.interval)
		}
		if d := rateAbsDiff(rs.deliveryRate, want); d > want/50 {
			t.Fatalf("ACK of packet %d: delivery rate %d, want %d ±2%%", i, rs.deliveryRate, want)
		}
	})
	if samples == 0 {
		t.Fatal("no samples")
	}
}

func rateAbsDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// "if (RS.interval < C.min_rtt) return /* no reliable rate sample */"
func TestRateSampleIntervalBelowMinRTT(t *testing.T) {
	var s rateSampler
	s.init()
	t0 := time.Unix(0, 0)
	s.onPacketSent(t0, 0, 1200, 1200)
	s.initRateSample()
	s.onPacketAcked(t0.Add(10*time.Millisecond), &AckedPacket{PacketNumber: 0, Bytes: 1200, SentTime: t0})
	s.generateRateSample(20 * time.Millisecond)
	if s.rs.deliveryRate != 0 || s.rs.delivered != 1200 {
		t.Fatalf("rate %d delivered %d, want no rate and 1200 delivered", s.rs.deliveryRate, s.rs.delivered)
	}
}

// Section 4.1.1.3: "when the algorithm marks a transport flow as
// application-limited, it marks all bandwidth samples for the next round
// trip as application-limited"; GenerateRateSample: "Clear app-limited
// field if bubble is ACKed and gone."
func TestRateSampleAppLimited(t *testing.T) {
	var s rateSampler
	s.init()
	t0 := time.Unix(0, 0)
	var inflight int64
	send := func(pn int64, at time.Duration) {
		inflight += 1200
		s.onPacketSent(t0.Add(at), pn, 1200, inflight)
	}
	ack := func(pn int64, sent, at time.Duration) *rateSample {
		s.initRateSample()
		s.onPacketAcked(t0.Add(at), &AckedPacket{PacketNumber: pn, Bytes: 1200, SentTime: t0.Add(sent)})
		inflight -= 1200
		s.generateRateSample(0)
		return &s.rs
	}
	send(0, 0)
	send(1, time.Millisecond)
	// The application runs out of data with two packets in flight.
	s.markAppLimited(inflight)
	if s.appLimited != 2400 {
		t.Fatalf("C.app_limited = %d, want C.delivered + C.inflight = 2400", s.appLimited)
	}
	send(2, 2*time.Millisecond)
	send(3, 3*time.Millisecond)
	if rs := ack(0, 0, 50*time.Millisecond); rs.isAppLimited {
		t.Fatal("packet sent before the bubble: sample marked app-limited")
	}
	ack(1, time.Millisecond, 51*time.Millisecond)
	if s.appLimited != 2400 {
		t.Fatal("app-limited cleared before the bubble was acknowledged")
	}
	if rs := ack(2, 2*time.Millisecond, 52*time.Millisecond); !rs.isAppLimited {
		t.Fatal("packet sent in the bubble: sample not app-limited")
	}
	if s.appLimited != 0 {
		t.Fatalf("C.app_limited = %d after C.delivered passed it, want 0", s.appLimited)
	}
	send(4, 53*time.Millisecond)
	ack(3, 3*time.Millisecond, 53*time.Millisecond)
	if rs := ack(4, 53*time.Millisecond, 103*time.Millisecond); rs.isAppLimited {
		t.Fatal("packet sent after the bubble: sample app-limited")
	}
}

// The sample uses "the information from the most recently sent packet"
// when one ACK acknowledges several; RS.rtt is taken from it too (Section
// 2.3: "The RTT sample calculated based on the most recently-sent packet
// of the packets that have just been ACKed").
func TestRateSampleStretchAck(t *testing.T) {
	var s rateSampler
	s.init()
	t0 := time.Unix(0, 0)
	for i := range 4 {
		s.onPacketSent(t0.Add(time.Duration(i)*time.Millisecond), int64(i), 1000, int64(1000*(i+1)))
	}
	s.initRateSample()
	now := t0.Add(40 * time.Millisecond)
	for i := range 4 {
		s.onPacketAcked(now, &AckedPacket{PacketNumber: int64(i), Bytes: 1000, SentTime: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	s.generateRateSample(0)
	rs := &s.rs
	if rs.lastAckedPN != 3 || rs.txInFlight != 4000 || rs.rtt != 37*time.Millisecond {
		t.Fatalf("last acked %d tx_in_flight %d rtt %v; want 3, 4000, 37ms", rs.lastAckedPN, rs.txInFlight, rs.rtt)
	}
	if rs.delivered != 4000 || rs.newlyAcked != 4000 {
		t.Fatalf("delivered %d newly_acked %d, want 4000", rs.delivered, rs.newlyAcked)
	}
	// interval = max(send_elapsed 3ms, ack_elapsed 40ms) = 40ms.
	if rs.interval != 40*time.Millisecond || rs.deliveryRate != 100000 {
		t.Fatalf("interval %v rate %d, want 40ms and 100000 B/s", rs.interval, rs.deliveryRate)
	}
	if s.packets.n != 0 || s.packets.live != 0 || s.packets.liveBytes != 0 {
		t.Fatalf("ring not empty: %+v", s.packets)
	}
}

// P.lost and C.lost give RS.lost, "The volume of data that was declared
// lost between the transmission and acknowledgment of the packet".
func TestRateSampleLost(t *testing.T) {
	var s rateSampler
	s.init()
	t0 := time.Unix(0, 0)
	for i := range 3 {
		s.onPacketSent(t0, int64(i), 1000, int64(1000*(i+1)))
	}
	p, ok := s.onPacketLost(&LostPacket{PacketNumber: 0, Bytes: 1000, SentTime: t0})
	if !ok || p.txInFlight != 1000 || s.lost != 1000 {
		t.Fatalf("lost packet %+v %v, C.lost %d", p, ok, s.lost)
	}
	s.initRateSample()
	s.onPacketAcked(t0.Add(time.Second), &AckedPacket{PacketNumber: 2, Bytes: 1000, SentTime: t0})
	s.generateRateSample(0)
	if s.rs.lost != 1000 {
		t.Fatalf("RS.lost %d, want 1000", s.rs.lost)
	}
	if _, ok := s.onPacketLost(&LostPacket{PacketNumber: 0, Bytes: 1000, SentTime: t0}); ok {
		t.Fatal("packet found after it was lost")
	}
}

// QUIC's packet number spaces reuse packet numbers: packets are found by
// send time and number.
func TestRateRingSpaces(t *testing.T) {
	var s rateSampler
	s.init()
	t0 := time.Unix(0, 0)
	s.onPacketSent(t0, 0, 1200, 1200)                         // Initial 0
	s.onPacketSent(t0.Add(time.Millisecond), 0, 1200, 2400)   // Handshake 0
	s.onPacketSent(t0.Add(2*time.Millisecond), 0, 1200, 3600) // 1-RTT 0
	s.onPacketSent(t0.Add(2*time.Millisecond), 1, 1200, 4800) // 1-RTT 1
	if i := s.packets.find(int64(time.Millisecond), 0); i != 1 {
		t.Fatalf("find Handshake 0 = %d, want 1", i)
	}
	if i := s.packets.find(int64(2*time.Millisecond), 1); i != 3 {
		t.Fatalf("find 1-RTT 1 = %d, want 3", i)
	}
	if i := s.packets.find(int64(3*time.Millisecond), 0); i != -1 {
		t.Fatalf("find unknown = %d", i)
	}
	// The Initial space is discarded: the connection removes its packet
	// from bytes in flight without reporting it, and the sampler drops
	// the oldest entry.
	s.trim(3600)
	if s.packets.live != 3 || s.packets.at(0).sendTime != int64(time.Millisecond) {
		t.Fatalf("after trim: live %d, front %+v", s.packets.live, *s.packets.at(0))
	}
}

// find checks the front entry first (ACKs come in packet number order);
// it must still tell apart packets of the spaces that share a send time
// and a packet number (an Initial and a Handshake packet coalesced in one
// datagram), and find later entries behind the front.
func TestRateRingFindFront(t *testing.T) {
	var s rateSampler
	s.init()
	t0 := time.Now()
	s.onPacketSent(t0, 0, 1200, 1200) // Initial 0
	s.onPacketSent(t0, 0, 1200, 2400) // Handshake 0, same datagram
	s.onPacketSent(t0, 1, 1200, 3600)
	s.onPacketSent(t0.Add(time.Millisecond), 2, 1200, 4800)
	ts := int64(0) // t0 is the sampler's epoch
	if i := s.packets.find(ts, 0); i != 0 {
		t.Fatalf("find(t0, 0) = %d, want the front", i)
	}
	if i := s.packets.find(ts, 1); i != 2 {
		t.Fatalf("find(t0, 1) = %d, want 2", i)
	}
	if i := s.packets.find(int64(time.Millisecond), 2); i != 3 {
		t.Fatalf("find(t0+1ms, 2) = %d, want 3", i)
	}
	if i := s.packets.find(int64(time.Millisecond), 0); i != -1 {
		t.Fatalf("find of an unsent pair = %d, want -1", i)
	}
	s.packets.remove(0)
	if i := s.packets.find(ts, 0); i != 0 || s.packets.at(0).done {
		t.Fatalf("after the front was acknowledged: find(t0, 0) = %d, want the other space's packet at the front", i)
	}
	s.packets.remove(2) // out of order: a hole behind the front
	if i := s.packets.find(ts, 1); i != 1 {
		t.Fatalf("find(t0, 1) = %d, want 1", i)
	}
	if i := s.packets.find(int64(time.Millisecond), 2); i != -1 {
		t.Fatalf("find of an acknowledged packet = %d, want -1", i)
	}
}

// The ring grows to rateMaxTracked and then forgets the oldest packets.
func TestRateRingBound(t *testing.T) {
	var s rateSampler
	s.init()
	t0 := time.Unix(0, 0)
	n := rateMaxTracked + 100
	for i := range n {
		s.onPacketSent(t0.Add(time.Duration(i)), int64(i), 1, int64(i+1))
	}
	if s.packets.n != rateMaxTracked || len(s.packets.buf) != rateMaxTracked {
		t.Fatalf("ring holds %d of %d slots, want %d", s.packets.n, len(s.packets.buf), rateMaxTracked)
	}
	if got := s.packets.at(0).pn; got != 100 {
		t.Fatalf("oldest packet %d, want 100", got)
	}
	// An ACK of a forgotten packet counts as delivered, without a sample.
	s.initRateSample()
	s.onPacketAcked(t0.Add(time.Second), &AckedPacket{PacketNumber: 5, Bytes: 1, SentTime: t0.Add(5)})
	s.generateRateSample(0)
	if s.delivered != 1 || s.rs.hasData {
		t.Fatalf("delivered %d hasData %v", s.delivered, s.rs.hasData)
	}
	// Acknowledging out of order leaves holes that are popped once the
	// front is acknowledged.
	s.initRateSample()
	for _, pn := range []int64{102, 101, 100} {
		s.onPacketAcked(t0.Add(time.Second), &AckedPacket{PacketNumber: pn, Bytes: 1, SentTime: t0.Add(time.Duration(pn))})
		if pn == 101 && s.packets.n != rateMaxTracked {
			t.Fatal("holes popped before the front")
		}
	}
	if s.packets.n != rateMaxTracked-3 || s.packets.at(0).pn != 103 {
		t.Fatalf("n %d front %d", s.packets.n, s.packets.at(0).pn)
	}
}

func TestRateMulDiv(t *testing.T) {
	for _, c := range []struct{ a, b, c, want uint64 }{
		{10, 20, 3, 66},
		{1 << 40, 1e9, 1e6, 1 << 40 * 1000},
		{1 << 63, 4, 2, 1<<64 - 1}, // saturates
		{1, 1, 0, 1<<64 - 1},
	} {
		if got := rateMulDiv(c.a, c.b, c.c); got != c.want {
			t.Errorf("rateMulDiv(%d, %d, %d) = %d, want %d", c.a, c.b, c.c, got, c.want)
		}
	}
}

// ReleaseIdle frees BBR's per-packet records only when none is live, and
// sampling goes on as before once packets flow again.
func TestBBRReleaseIdle(t *testing.T) {
	b := NewBBR(ControllerConfig{MaxDatagramSize: 1200}).(*bbr)
	r := IdleReleaser(b)
	c := newRateTestClock(1200, time.Millisecond, 50*time.Millisecond)
	c.s = b.rate
	var samples int
	count := func(_ int, rs *rateSample) {
		if rs.hasData {
			samples++
		}
	}
	c.run(100, count)
	b.rate = c.s
	if b.rate.packets.live == 0 {
		t.Fatal("no packet in flight")
	}
	r.ReleaseIdle()
	if b.rate.packets.buf == nil {
		t.Fatal("released the records of packets in flight")
	}
	// run acknowledged the packets older than an RTT; the rest now.
	for i := range c.sent {
		if c.sent[i].SentTime.Add(c.rtt).After(c.t0.Add(99 * time.Millisecond)) {
			c.ack(i, c.sent[i].SentTime.Add(c.rtt), count)
		}
	}
	b.rate = c.s
	if b.rate.packets.live != 0 {
		t.Fatalf("%d packets still in flight", b.rate.packets.live)
	}
	r.ReleaseIdle()
	if b.rate.packets.buf != nil {
		t.Fatal("nothing in flight, records kept")
	}
	before := samples
	c.s = b.rate
	c.t0 = c.t0.Add(time.Second)
	c.sent = nil
	c.run(100, count)
	if samples-before < 40 {
		t.Fatalf("%d rate samples after the release, want about 50", samples-before)
	}
}

// BenchmarkRateSamplerAckInOrder is the sampler's per-packet cost in a
// bulk transfer: a window of 4096 packets in flight, each acknowledged in
// order (found at the ring's front) while a new one is sent.
func BenchmarkRateSamplerAckInOrder(b *testing.B) {
	var s rateSampler
	s.init()
	t0 := time.Unix(0, 0)
	const window = 4096
	for i := range window {
		s.onPacketSent(t0.Add(time.Duration(i)), int64(i), 1452, int64(i+1)*1452)
	}
	pn := int64(0)
	for b.Loop() {
		now := t0.Add(time.Duration(pn + window))
		s.initRateSample()
		s.onPacketAcked(now, &AckedPacket{PacketNumber: pn, Bytes: 1452, SentTime: t0.Add(time.Duration(pn))})
		s.generateRateSample(time.Millisecond)
		s.onPacketSent(now, pn+window, 1452, window*1452)
		pn++
	}
	if s.packets.live != window {
		b.Fatalf("%d packets live, want %d", s.packets.live, window)
	}
}
