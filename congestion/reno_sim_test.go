package congestion

import (
	"testing"
	"time"
)

// renoSim drives a Controller the way loss detection does: it sends
// packets, acknowledges or loses the oldest ones, feeds RTT samples and
// keeps bytes in flight. Time is explicit.
type renoSim struct {
	t        *testing.T
	c        Controller
	rtt      *RTTStats
	now      time.Time
	mds      int
	nextPN   int64
	inFlight int
	pending  []AckedPacket // sent and not yet acknowledged or lost, by packet number
	ack      AckEvent
	cong     CongestionEvent
}

func renoNewSim(t *testing.T, f ControllerFactory) *renoSim {
	rtt := NewRTTStats()
	s := &renoSim{t: t, rtt: rtt, now: time.Unix(0, 0), mds: 1200}
	s.c = f(ControllerConfig{RTT: rtt, MaxDatagramSize: s.mds})
	return s
}

func (s *renoSim) advance(d time.Duration) { s.now = s.now.Add(d) }

// send sends n full-size packets at the current time.
func (s *renoSim) send(n int) {
	for range n {
		s.sendBytes(s.mds)
	}
}

func (s *renoSim) sendBytes(b int) {
	p := AckedPacket{PacketNumber: s.nextPN, Bytes: b, SentTime: s.now}
	s.nextPN++
	s.inFlight += b
	s.pending = append(s.pending, p)
	s.c.OnPacketSent(s.now, p.PacketNumber, b, s.inFlight)
}

// fill sends full-size packets until the window is used up.
func (s *renoSim) fill() {
	for s.inFlight+s.mds <= s.c.CongestionWindow() {
		s.send(1)
	}
}

// ackOldest acknowledges the n oldest packets in flight at the current
// time, taking an RTT sample from the largest.
func (s *renoSim) ackOldest(n int) {
	n = min(n, len(s.pending))
	if n == 0 {
		return
	}
	acked := s.pending[:n]
	s.ack = AckEvent{Acked: acked, PriorInFlight: s.inFlight, RTT: s.rtt}
	for _, p := range acked {
		s.ack.AckedBytes += p.Bytes
	}
	s.inFlight -= s.ack.AckedBytes
	s.ack.BytesInFlight = s.inFlight
	s.rtt.Update(s.now.Sub(acked[n-1].SentTime), 0, true)
	s.c.OnAck(s.now, &s.ack)
	s.pending = append(s.pending[:0:0], s.pending[n:]...)
}

// loseOldest declares the n oldest packets lost.
func (s *renoSim) loseOldest(n int, persistent bool) {
	n = min(n, len(s.pending))
	lost := make([]LostPacket, n)
	s.cong = CongestionEvent{PriorInFlight: s.inFlight, PersistentCongestion: persistent}
	for i, p := range s.pending[:n] {
		lost[i] = LostPacket(p)
		s.cong.LostBytes += p.Bytes
		s.cong.SentTime = p.SentTime
	}
	s.cong.Lost = lost
	s.inFlight -= s.cong.LostBytes
	s.cong.BytesInFlight = s.inFlight
	s.c.OnCongestionEvent(s.now, &s.cong)
	s.pending = append(s.pending[:0:0], s.pending[n:]...)
}

// ecn reports an ECN-CE increase for an ACK whose largest packet was sent
// at sent.
func (s *renoSim) ecn(sent time.Time) {
	s.cong = CongestionEvent{ECN: true, SentTime: sent, PriorInFlight: s.inFlight, BytesInFlight: s.inFlight}
	s.c.OnCongestionEvent(s.now, &s.cong)
}

// round sends a window, waits rtt and acknowledges all of it.
func (s *renoSim) round(rtt time.Duration) {
	s.fill()
	s.advance(rtt)
	s.ackOldest(len(s.pending))
}

func (s *renoSim) wantCwnd(want int) {
	s.t.Helper()
	if got := s.c.CongestionWindow(); got != want {
		s.t.Fatalf("cwnd = %d, want %d", got, want)
	}
}

func (s *renoSim) wantPhase(phase string) {
	s.t.Helper()
	if got := s.c.State().Phase; got != phase {
		s.t.Fatalf("phase = %q, want %q (state %+v, cwnd %d)", got, phase, s.c.State(), s.c.CongestionWindow())
	}
}
