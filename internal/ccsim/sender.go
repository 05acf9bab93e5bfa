package ccsim

import (
	"errors"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// DefaultMaxDatagramSize is the datagram size senders use when
// SenderConfig.MaxDatagramSize is 0: 1452 bytes, the largest UDP payload
// of a 1500-byte IPv6 packet, which is what QUIC stacks commonly use on
// Ethernet paths.
const DefaultMaxDatagramSize = 1452

// DefaultInterval is the width of the goodput windows when
// SenderConfig.Interval or Scenario.Interval is 0.
const DefaultInterval = 100 * time.Millisecond

// maxAckRanges bounds the ranges of the ACK frames a sender parses.
const maxAckRanges = 256

// SenderConfig configures a Sender.
type SenderConfig struct {
	// Peer is the address of the flow's Receiver.
	Peer netsim.Addr
	// Controller makes the congestion controller; nil means
	// congestion.NewCubic (see congestion.New).
	Controller congestion.ControllerFactory
	// Seed seeds the controller (congestion.ControllerConfig.Seed) and
	// the handler's packet number skipping (ackhandler.Config.Seed).
	Seed uint64
	// MaxDatagramSize is the size of the datagrams sent, UDP payload;
	// 0 means DefaultMaxDatagramSize. It is kept between 1200 and 9000.
	MaxDatagramSize int
	// Start is when the flow starts sending; the zero time means at
	// once.
	Start time.Time
	// Size is the number of stream bytes to transfer; 0 means an
	// unlimited (bulk) flow.
	Size int64
	// Interval is the width of the windows in which acknowledged bytes
	// are counted (Sender.AckedPerInterval), aligned to netsim.Epoch;
	// 0 means DefaultInterval.
	Interval time.Duration
	// Windows, if positive, preallocates that many windows.
	Windows int
	// DisableECN makes the sender send Not-ECT packets only.
	DisableECN bool
	// OnMetrics, if not nil, is called with the sender's congestion
	// control and RTT figures whenever they changed during a callback
	// (HandleDatagram, HandleTimeout, PollTransmit), as a connection's
	// quic.Tracer.MetricsUpdated is: for qlog traces and plots.
	OnMetrics func(now time.Time, m Metrics)
}

// Metrics are a sender's figures at one time, those of the qlog
// recovery_metrics_updated event.
type Metrics struct {
	MinRTT, SmoothedRTT, LatestRTT, RTTVariation time.Duration
	CongestionWindow, BytesInFlight              int
	// PacingRate is in bytes per second.
	PacingRate uint64
}

// SenderStats counts what a Sender did. Bytes are UDP payload bytes
// unless they are stream bytes.
type SenderStats struct {
	SentPackets int64 // packets sent, probes and retransmissions included
	SentBytes   int64
	// RetransmittedPackets counts packets carrying stream data sent
	// before; RetransmittedBytes counts that data, in stream bytes.
	RetransmittedPackets int64
	RetransmittedBytes   int64
	// ProbePackets counts packets sent because of a probe timeout, and
	// PTOs the probe timeouts (RFC 9002, Section 6.2).
	ProbePackets int64
	PTOs         int64
	// LostPackets and LostBytes are the packets loss detection declared
	// lost (RFC 9002, Section 6.1), spurious ones included.
	LostPackets int64
	LostBytes   int64
	// CongestionEvents counts the controller's OnCongestionEvent calls;
	// ECNEvents those signalled by ECN-CE, PersistentCongestion those
	// that established persistent congestion (RFC 9002, Section 7.6).
	CongestionEvents     int64
	ECNEvents            int64
	PersistentCongestion int64
	// AcksReceived counts the ACK frames processed; AcksSent the
	// ACK-only packets sent to acknowledge the receiver's PINGs.
	AcksReceived int64
	AcksSent     int64
	// AckedBytes is the stream data acknowledged, each byte once;
	// DoubleAcked counts stream ranges acknowledged a second time, which
	// is a bug in loss recovery.
	AckedBytes  int64
	DoubleAcked int64
	// Done reports that a finite transfer was completely acknowledged,
	// at DoneTime.
	Done     bool
	DoneTime time.Time
}

// streamRange is a range of stream data to send again.
type streamRange struct {
	offset uint64
	length uint64
}

// A Sender is a netsim.Endpoint sending one bulk flow: a
// SentPacketHandler for loss detection and the probe timeout, a
// congestion.Controller and a congestion.Pacer.
//
// It sends a full-size datagram whenever the bytes in flight plus one
// datagram fit in the congestion window (RFC 9002, Section 7: "An
// endpoint MUST NOT send a packet if it would cause bytes_in_flight ... to
// be larger than the congestion window, unless the packet is sent on a PTO
// timer expiration") and the pacer allows. Lost stream ranges are sent
// again before new data, whole and in new packets. After a probe timeout
// it sends the probes the handler asks for, bypassing the window and the
// pacer, carrying data when there is some and a PING otherwise. When it
// has nothing to send although the window has room, it tells the
// controller it is application-limited. The handshake counts as
// confirmed when the flow starts.
//
// A Sender is used by one netsim.Network; its methods are not safe for
// concurrent use. In steady state it allocates only to grow its
// accounting of acknowledged data (a bit per full packet of stream data).
type Sender struct {
	peer  netsim.Addr
	start time.Time
	size  int64
	mds   int
	chunk int // stream bytes in a full packet

	rtt   *congestion.RTTStats
	cc    *countingController
	h     *ackhandler.SentPacketHandler
	pacer *congestion.Pacer

	started        bool
	now            time.Time // time of the callback in progress
	nextOffset     int64
	retx           []streamRange
	retxHead       int
	pacingDeadline time.Time

	buf []byte
	ack wire.AckFrame // the receiver's ACK frame being parsed
	// recv tracks the receiver's packets, which are ack-eliciting when
	// they carry a PING; ackOut is the ACK frame sent for them.
	recv   *ackhandler.ReceivedPackets
	ackOut wire.AckFrame

	interval time.Duration
	acked    []int64  // stream bytes acknowledged per interval
	ackedMap []uint64 // bit per chunk: acknowledged
	stats    SenderStats
	err      error

	onMetrics func(time.Time, Metrics)
	metrics   Metrics // the last reported
}

// NewSender returns a Sender for cfg.
func NewSender(cfg SenderConfig) *Sender {
	mds := cfg.MaxDatagramSize
	if mds == 0 {
		mds = DefaultMaxDatagramSize
	}
	mds = min(max(mds, 1200), 9000)
	s := &Sender{
		peer:     cfg.Peer,
		start:    cfg.Start,
		size:     max(cfg.Size, 0),
		mds:      mds,
		chunk:    mds - HeaderLen - streamFrameOverhead,
		rtt:      congestion.NewRTTStats(),
		pacer:    congestion.NewPacer(mds),
		buf:      make([]byte, mds),
		recv:     ackhandler.NewReceivedPackets(ackhandler.SpaceApplication),
		interval: cfg.Interval,

		onMetrics: cfg.OnMetrics,
	}
	if s.interval <= 0 {
		s.interval = DefaultInterval
	}
	if cfg.Windows > 0 {
		s.acked = make([]int64, 0, cfg.Windows)
	}
	s.rtt.SetMaxAckDelay(ackhandler.DefaultMaxAckDelay)
	ctl := congestion.New(cfg.Controller, congestion.ControllerConfig{
		RTT:             s.rtt,
		MaxDatagramSize: mds,
		Seed:            cfg.Seed,
	})
	s.cc = &countingController{Controller: ctl, stats: &s.stats}
	s.h = ackhandler.New(ackhandler.Config{
		Role:       wire.RoleClient,
		RTT:        s.rtt,
		Controller: s.cc,
		Frames:     (*senderFrames)(s),
		Seed:       cfg.Seed,
		DisableECN: cfg.DisableECN,
	})
	return s
}

// Stats returns the sender's counters.
func (s *Sender) Stats() SenderStats { return s.stats }

// Err returns the first error processing an ACK frame, or nil. Any error
// is a bug: the receiver is this package's.
func (s *Sender) Err() error { return s.err }

// RTT returns the sender's RTT estimator.
func (s *Sender) RTT() *congestion.RTTStats { return s.rtt }

// Controller returns the sender's congestion controller.
func (s *Sender) Controller() congestion.Controller { return s.cc.Controller }

// Handler returns the sender's loss-recovery state.
func (s *Sender) Handler() *ackhandler.SentPacketHandler { return s.h }

// AckedPerInterval returns the stream bytes first acknowledged in each
// window of the configured interval, window i covering
// [Epoch + i*interval, Epoch + (i+1)*interval). It is the sender's own
// slice, up to the last window with an acknowledgment.
func (s *Sender) AckedPerInterval() []int64 { return s.acked }

// errMalformed is the error of a datagram from the receiver that does
// not parse.
var errMalformed = errors.New("ccsim: malformed packet from the receiver")

// HandleDatagram processes a datagram from the receiver: its ACK frame,
// and the packet itself for the sender's own acknowledgments.
func (s *Sender) HandleDatagram(now time.Time, d *netsim.Datagram) {
	s.now = now
	defer s.reportMetrics(now)
	if s.err != nil {
		return
	}
	pn, ok := readHeader(d.Payload)
	if !ok {
		s.err = errMalformed
		return
	}
	if s.recv.IsDuplicate(pn) {
		return
	}
	pf, ok := parseFrames(d.Payload[HeaderLen:], &s.ack, maxAckRanges)
	if !ok {
		s.err = errMalformed
		return
	}
	s.recv.OnPacket(now, pn, pf.ackEliciting, ackhandler.ECNMark(d.ECN))
	if pf.hasAck {
		s.stats.AcksReceived++
		if err := s.h.OnAckReceived(now, ackhandler.SpaceApplication, &s.ack, ackDelayExponent); err != nil {
			s.err = err
		}
	}
}

// HandleTimeout runs the loss detection timer when it has expired; the
// pacing and start deadlines need nothing but the PollTransmit that
// follows.
func (s *Sender) HandleTimeout(now time.Time) {
	s.now = now
	defer s.reportMetrics(now)
	if dl := s.h.LossDetectionDeadline(); !dl.IsZero() && !dl.After(now) {
		before := s.h.PTOCount()
		s.h.OnLossDetectionTimeout(now)
		if s.h.PTOCount() > before {
			s.stats.PTOs++
		}
	}
}

// reportMetrics calls OnMetrics if the figures changed.
func (s *Sender) reportMetrics(now time.Time) {
	if s.onMetrics == nil {
		return
	}
	m := Metrics{
		MinRTT: s.rtt.Min(), SmoothedRTT: s.rtt.Smoothed(), LatestRTT: s.rtt.Latest(), RTTVariation: s.rtt.MeanDeviation(),
		CongestionWindow: s.cc.CongestionWindow(), BytesInFlight: s.h.BytesInFlight(), PacingRate: s.cc.PacingRate(),
	}
	if m != s.metrics {
		s.metrics = m
		s.onMetrics(now, m)
	}
}

// PollTransmit sends the probes owed and then as many packets as the
// congestion window and the pacer allow.
func (s *Sender) PollTransmit(now time.Time, out *netsim.Outbox) {
	s.now = now
	defer s.reportMetrics(now)
	s.pacingDeadline = time.Time{}
	if now.Before(s.start) || s.err != nil {
		return
	}
	if !s.started {
		s.started = true
		s.h.SetHandshakeConfirmed(now)
	}
	if dl := s.recv.AckDeadline(); !dl.IsZero() && !dl.After(now) {
		s.sendAck(now, out)
	}
	// RFC 9002, Section 7.5: "Probe packets MUST NOT be blocked by the
	// congestion controller."
	for s.h.ProbesToSend() > 0 {
		s.sendPacket(now, out, true)
	}
	for {
		inFlight := s.h.BytesInFlight()
		if !s.hasData() {
			// RFC 9002, Section 7.8: a sender that is not fully using
			// its window is application-limited.
			if inFlight < s.cc.CongestionWindow() {
				s.cc.OnAppLimited(now, inFlight)
			}
			return
		}
		if inFlight+s.mds > s.cc.CongestionWindow() {
			return
		}
		if t := s.pacer.TimeUntilSend(now, s.cc.PacingRate()); t.After(now) {
			s.pacingDeadline = t
			return
		}
		s.sendPacket(now, out, false)
	}
}

// NextDeadline returns the earliest of the loss detection timer, the
// pacer's next send time and the flow's start.
func (s *Sender) NextDeadline() time.Time {
	if s.err != nil {
		return time.Time{}
	}
	if !s.started {
		return s.start
	}
	dl := s.h.LossDetectionDeadline()
	for _, t := range [...]time.Time{s.pacingDeadline, s.recv.AckDeadline()} {
		if !t.IsZero() && (dl.IsZero() || t.Before(dl)) {
			dl = t
		}
	}
	return dl
}

// sendAck sends an ACK-only packet for the receiver's packets. It is
// neither ack-eliciting nor congestion controlled (RFC 9002, Section 7:
// "Packets containing only ACK frames do not count toward bytes in flight
// and are not congestion controlled"), but it is recorded, so that its
// acknowledgment lets the sender forget the ranges it covered.
func (s *Sender) sendAck(now time.Time, out *netsim.Outbox) {
	const space = ackhandler.SpaceApplication
	if !s.recv.AppendAck(now, &s.ackOut, ackDelayExponent) {
		return
	}
	pn, _ := s.h.NextPacketNumber(space)
	b := s.buf[:HeaderLen]
	putHeader(b, pn)
	b = s.ackOut.Append(b)
	s.h.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeAck, Extra: uint64(s.ackOut.Ranges[0].Largest)})
	mark := s.h.ECNMarking()
	s.h.OnPacketSent(now, space, ackhandler.SentPacket{PacketNumber: pn, Size: len(b), ECN: mark})
	out.Send(s.peer, b, netsim.ECN(mark))
	s.recv.OnAckSent()
	s.stats.AcksSent++
}

// hasData reports whether there is stream data to send.
func (s *Sender) hasData() bool {
	return s.retxHead < len(s.retx) || s.hasNewData()
}

func (s *Sender) hasNewData() bool { return s.size == 0 || s.nextOffset < s.size }

// sendPacket builds and sends one packet: lost ranges first, as many as
// fit, else a full chunk of new data, else a PING.
func (s *Sender) sendPacket(now time.Time, out *netsim.Outbox, probe bool) {
	const space = ackhandler.SpaceApplication
	pn, _ := s.h.NextPacketNumber(space)
	b := s.buf
	putHeader(b, pn)
	n := HeaderLen
	frames, retx := 0, false
	for s.retxHead < len(s.retx) {
		r := s.retx[s.retxHead]
		if n+streamFrameOverhead+int(r.length) > s.mds {
			break
		}
		s.retxHead++
		if s.retxHead == len(s.retx) {
			s.retx, s.retxHead = s.retx[:0], 0
		}
		putStreamFrame(b[n:], r.offset, int(r.length))
		n += streamFrameOverhead + int(r.length)
		s.h.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeStream, Offset: r.offset, Length: r.length})
		s.stats.RetransmittedBytes += int64(r.length)
		frames++
		retx = true
	}
	if frames == 0 && s.hasNewData() {
		length := int64(s.chunk)
		if s.size > 0 {
			length = min(length, s.size-s.nextOffset)
		}
		off := uint64(s.nextOffset)
		s.nextOffset += length
		putStreamFrame(b[n:], off, int(length))
		n += streamFrameOverhead + int(length)
		s.h.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeStream, Offset: off, Length: uint64(length)})
		frames++
	}
	if frames == 0 {
		// RFC 9002, Section 6.2.4: "When there is no data to send, the
		// sender SHOULD send a PING or other ack-eliciting frame in a
		// single packet".
		b[n] = pingFrameType
		n++
		s.h.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypePing})
	}
	mark := s.h.ECNMarking()
	s.h.OnPacketSent(now, space, ackhandler.SentPacket{
		PacketNumber: pn,
		Size:         n,
		AckEliciting: true,
		InFlight:     true,
		ECN:          mark,
	})
	s.pacer.OnPacketSent(now, n, s.cc.PacingRate())
	out.Send(s.peer, b[:n], netsim.ECN(mark))

	s.stats.SentPackets++
	s.stats.SentBytes += int64(n)
	if retx {
		s.stats.RetransmittedPackets++
	}
	if probe {
		s.stats.ProbePackets++
	}
}

// senderFrames is the Sender as the handler's FrameHandler.
type senderFrames Sender

// OnFrameAcked counts a newly acknowledged stream range. For an ACK
// frame, "When a packet containing an ACK frame is acknowledged, the
// receiver can stop acknowledging packets less than or equal to the
// Largest Acknowledged field in the sent ACK frame" (RFC 9000, Section
// 13.2.4).
func (f *senderFrames) OnFrameAcked(_ ackhandler.Space, r *ackhandler.FrameRecord) {
	s := (*Sender)(f)
	if r.Type == wire.FrameTypeAck {
		s.recv.IgnoreBelow(wire.PacketNumber(r.Extra) + 1)
		return
	}
	if r.Type != wire.FrameTypeStream {
		return
	}
	// Ranges are never split: each starts on a chunk boundary.
	idx := r.Offset / uint64(s.chunk)
	word, bit := int(idx/64), idx%64
	for len(s.ackedMap) <= word {
		s.ackedMap = append(s.ackedMap, 0)
	}
	if s.ackedMap[word]&(1<<bit) != 0 {
		s.stats.DoubleAcked++
		return
	}
	s.ackedMap[word] |= 1 << bit
	s.stats.AckedBytes += int64(r.Length)
	w := int(s.now.Sub(netsim.Epoch()) / s.interval)
	for len(s.acked) <= w {
		s.acked = append(s.acked, 0)
	}
	s.acked[w] += int64(r.Length)
	if s.size > 0 && s.stats.AckedBytes == s.size {
		s.stats.Done = true
		s.stats.DoneTime = s.now
	}
}

// OnFrameLost queues a lost stream range to be sent again; a lost PING
// or ACK frame needs nothing.
func (f *senderFrames) OnFrameLost(_ ackhandler.Space, r *ackhandler.FrameRecord) {
	if r.Type != wire.FrameTypeStream {
		return
	}
	s := (*Sender)(f)
	if s.retxHead > 0 && s.retxHead >= len(s.retx)/2 {
		// Keep the queue from creeping through memory when it never
		// empties completely.
		n := copy(s.retx, s.retx[s.retxHead:])
		s.retx, s.retxHead = s.retx[:n], 0
	}
	s.retx = append(s.retx, streamRange{offset: r.Offset, length: r.Length})
}

// countingController passes everything to the flow's controller and
// counts the congestion events on the way.
type countingController struct {
	congestion.Controller
	stats *SenderStats
}

func (c *countingController) OnCongestionEvent(now time.Time, ev *congestion.CongestionEvent) {
	c.stats.CongestionEvents++
	c.stats.LostPackets += int64(len(ev.Lost))
	c.stats.LostBytes += int64(ev.LostBytes)
	if ev.ECN {
		c.stats.ECNEvents++
	}
	if ev.PersistentCongestion {
		c.stats.PersistentCongestion++
	}
	c.Controller.OnCongestionEvent(now, ev)
}
