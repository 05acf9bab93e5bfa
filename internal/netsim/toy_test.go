package netsim

import (
	"encoding/binary"
	"testing"
	"time"
)

// The toy transport shows how a transport sits on the simulator: a sender
// that keeps window datagrams in flight, and a receiver
// that answers every datagram with a small acknowledgement carrying
// its sequence number and ECN codepoint. A datagram not acknowledged
// within rto of being sent is declared lost. The real stack replaces this
// with ackhandler (sent-packet records, ACK frames, loss detection) and a
// congestion.Controller deciding the window.

// toyAckSize is the size of the receiver's acknowledgements.
const toyAckSize = 9

// toyRing is the number of sequence numbers the sender tracks; it never
// has more than this many unresolved.
const toyRing = 1 << 14

type toySender struct {
	to     Addr
	window int
	size   int
	rto    time.Duration

	next     uint64 // next sequence number to send
	oldest   uint64 // oldest sequence number neither acked nor lost
	sentAt   [toyRing]time.Time
	state    [toyRing]uint8 // 0 in flight, 1 acked, 2 lost
	inFlight int

	acked, lost int64
	ceAcked     int64
	rttSum      time.Duration
	rttMin      time.Duration
	buf         []byte
}

func newToySender(to Addr, window, size int, rto time.Duration) *toySender {
	return &toySender{to: to, window: window, size: size, rto: rto, rttMin: time.Hour}
}

func (s *toySender) HandleDatagram(now time.Time, d *Datagram) {
	if len(d.Payload) < toyAckSize {
		return
	}
	seq := binary.BigEndian.Uint64(d.Payload)
	if seq < s.oldest || seq >= s.next || s.state[seq%toyRing] != 0 {
		return // old, lost already, or a duplicate acknowledgement
	}
	s.state[seq%toyRing] = 1
	s.inFlight--
	s.acked++
	if ECN(d.Payload[8]) == CE {
		s.ceAcked++
	}
	rtt := now.Sub(s.sentAt[seq%toyRing])
	s.rttSum += rtt
	s.rttMin = min(s.rttMin, rtt)
	s.advance()
}

// advance moves oldest past resolved sequence numbers.
func (s *toySender) advance() {
	for s.oldest < s.next && s.state[s.oldest%toyRing] != 0 {
		s.oldest++
	}
}

func (s *toySender) HandleTimeout(now time.Time) {
	for s.oldest < s.next && !s.sentAt[s.oldest%toyRing].Add(s.rto).After(now) {
		s.state[s.oldest%toyRing] = 2
		s.inFlight--
		s.lost++
		s.oldest++
		s.advance()
	}
}

func (s *toySender) PollTransmit(now time.Time, out *Outbox) {
	if s.buf == nil {
		s.buf = make([]byte, s.size)
	}
	for s.inFlight < s.window && s.next-s.oldest < toyRing {
		i := s.next % toyRing
		s.sentAt[i], s.state[i] = now, 0
		tsPut(s.buf, s.next, now)
		out.Send(s.to, s.buf, ECT0)
		s.next++
		s.inFlight++
	}
}

func (s *toySender) NextDeadline() time.Time {
	if s.oldest == s.next {
		return time.Time{}
	}
	return s.sentAt[s.oldest%toyRing].Add(s.rto)
}

// toyReceiver acknowledges every datagram with its sequence number and
// the ECN codepoint it arrived with.
type toyReceiver struct {
	acks     []byte // toyAckSize bytes per pending acknowledgement
	to       []Addr
	received int64
}

func (r *toyReceiver) HandleDatagram(now time.Time, d *Datagram) {
	if len(d.Payload) < 8 {
		return
	}
	r.received++
	r.acks = append(r.acks, d.Payload[:8]...)
	r.acks = append(r.acks, byte(d.ECN))
	r.to = append(r.to, d.Src)
}

func (r *toyReceiver) HandleTimeout(time.Time) {}

func (r *toyReceiver) PollTransmit(now time.Time, out *Outbox) {
	for i, to := range r.to {
		out.Send(to, r.acks[i*toyAckSize:(i+1)*toyAckSize], NotECT)
	}
	r.acks, r.to = r.acks[:0], r.to[:0]
}

func (r *toyReceiver) NextDeadline() time.Time { return time.Time{} }

// toyScenario is a sender on host 1 and a receiver on host 2 over a
// symmetric path.
type toyScenario struct {
	sim  *Sim
	net  *Network
	path Path
	snd  *toySender
	rcv  *toyReceiver
}

func newToyScenario(seed uint64, cfg LinkConfig, window int) *toyScenario {
	sim := NewSim()
	n := NewNetwork(sim, seed)
	ts := &toyScenario{sim: sim, net: n, path: n.Connect(1, 2, cfg, cfg)}
	ts.rcv = &toyReceiver{}
	ts.snd = newToySender(Addr{2, 443}, window, 1500, 4*cfg.Delay+100*time.Millisecond)
	n.Attach(Addr{1, 1000}, ts.snd)
	n.Attach(Addr{2, 443}, ts.rcv)
	return ts
}

func TestToyWindowFillsPipe(t *testing.T) {
	// 100 Mbit/s, 2 × 10 ms: the bandwidth-delay product is 100e6 ×
	// 0.02 / 8 = 250,000 bytes, 166.7 datagrams of 1500 bytes; a window
	// of 200 fills the pipe with a standing queue of about 33 datagrams.
	// The queue holds the initial burst of 200.
	cfg := LinkConfig{Bandwidth: 100e6, Delay: 10 * time.Millisecond, QueuePackets: 200}
	ts := newToyScenario(1, cfg, 200)
	ts.sim.RunFor(10 * time.Second)

	from, to := Epoch().Add(2*time.Second), Epoch().Add(10*time.Second)
	if u := ts.path.AB.Utilization(from, to); u < 0.99 || u > 1.0001 {
		t.Errorf("utilization %.4f, want ~1", u)
	}
	st := ts.path.AB.StatsBetween(from, to)
	// Standing queue: (200 − 166.7) datagrams × 120 µs = 4.0 ms.
	if q := st.AvgQueueDelay(); q < 3500*time.Microsecond || q > 4500*time.Microsecond {
		t.Errorf("average queueing delay %v, want ~4 ms", q)
	}
	if ts.snd.lost != 0 || st.Dropped() != 0 {
		t.Errorf("lost %d dropped %d, want none", ts.snd.lost, st.Dropped())
	}
	// RTT: 20 ms propagation + 120 µs + 0.72 µs serialization.
	if ts.snd.rttMin < 20120*time.Microsecond || ts.snd.rttMin > 20130*time.Microsecond {
		t.Errorf("min RTT %v", ts.snd.rttMin)
	}
}

func TestToyWindowOverflowsQueue(t *testing.T) {
	// A window larger than the pipe plus the queue (166.7 + 50) loses
	// datagrams at the queue; the toy sender detects them by timeout and
	// keeps going.
	cfg := LinkConfig{Bandwidth: 100e6, Delay: 10 * time.Millisecond, QueuePackets: 50}
	ts := newToyScenario(1, cfg, 300)
	ts.sim.RunFor(5 * time.Second)
	st := ts.path.AB.Stats()
	if st.DroppedQueue == 0 || ts.snd.lost == 0 {
		t.Fatalf("dropped %d lost %d, want losses", st.DroppedQueue, ts.snd.lost)
	}
	if ts.snd.lost > st.DroppedQueue {
		t.Errorf("sender lost %d > dropped %d", ts.snd.lost, st.DroppedQueue)
	}
	if st.QueueDelayMax > 50*120*time.Microsecond {
		t.Errorf("max queueing delay %v above the queue limit", st.QueueDelayMax)
	}
	if ts.rcv.received != st.DeliveredPackets {
		t.Errorf("receiver got %d, link delivered %d", ts.rcv.received, st.DeliveredPackets)
	}
}

func TestToyECNEcho(t *testing.T) {
	// The receiver reports CE marks back to the sender.
	cfg := LinkConfig{Bandwidth: 100e6, Delay: 10 * time.Millisecond, QueuePackets: 100, CEThresholdBytes: 20 * 1500}
	ts := newToyScenario(1, cfg, 200)
	ts.sim.RunFor(2 * time.Second)
	if ts.snd.ceAcked == 0 || ts.snd.ceAcked > ts.path.AB.Stats().MarkedCE {
		t.Errorf("CE acknowledged %d, marked %d", ts.snd.ceAcked, ts.path.AB.Stats().MarkedCE)
	}
}
