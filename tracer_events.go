package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// connObs is what a connection keeps for statistics and its Tracer. With
// no Tracer every hook is one nil check.
type connObs struct {
	t *Tracer // nil: not traced

	// Statistics, kept with or without a Tracer.
	bytesLost          uint64                   // sizes of packets declared lost
	bytesRetransmitted uint64                   // STREAM and CRYPTO bytes of those packets
	drops              [len(dropReasons)]uint64 // packets dropped, by reason
	dropped            uint64                   // packets dropped, in all
	offered0RTT        bool                     // client: 0-RTT keys were installed
	rx0RTT             bool                     // server: a 0-RTT packet arrived
	antiReplay         antiReplayOutcome        // server: the anti-replay check (conn_antireplay.go)
	dropsPending       bool                     // drops has counts to flush
	acksSent           uint64                   // packets sent with an ACK frame
	acksReceived       uint64                   // ACK frames received

	rxSize int // size of the packet being processed

	traced *tracedState // made when first needed
}

// tracedState returns what the connection remembers of what it reported
// to its Tracer.
func (o *connObs) tracedState() *tracedState {
	if o.traced == nil {
		o.traced = new(tracedState)
	}
	return o.traced
}

// tracedState is what a connection with a Tracer remembers of what it
// reported.
type tracedState struct {
	keyUpdates int // 1-RTT key updates reported
	metrics    RecoveryMetrics
	peerParams bool // the peer's transport parameters were reported
}

// newTracer calls the Config's Tracer hook, if any.
func (c *Config) newTracer(conn *Conn, isClient bool, odcid ConnectionID) *Tracer {
	if c.Tracer == nil {
		return nil
	}
	t := c.Tracer(conn.ctx, isClient, odcid)
	if t != nil {
		conn.appTracer = t.Application
	}
	return t
}

// traceStart reports the connection's start, its transport parameters
// and its Initial keys.
func (c *connState) traceStart(conn *Conn) {
	tr := c.obs.t
	if tr == nil {
		return
	}
	if tr.ConnectionStarted != nil {
		tr.ConnectionStarted(conn.LocalAddr(), conn.remote, c.version, c.localConnID, c.peerIDs.active())
	}
	if tr.ParametersSet != nil && c.params != nil {
		tr.ParametersSet(true, c.params)
	}
	if tr.KeyUpdated != nil {
		tr.KeyUpdated(KeyUpdate{Type: wire.PacketTypeInitial, Local: true})
		tr.KeyUpdated(KeyUpdate{Type: wire.PacketTypeInitial})
	}
}

// traceKeyInstalled reports keys the TLS handshake installed.
func (c *connState) traceKeyInstalled(level handshake.EncryptionLevel, write bool) {
	tr := c.obs.t
	if tr == nil || tr.KeyUpdated == nil {
		return
	}
	pt := wire.PacketTypeHandshake
	switch level {
	case handshake.LevelEarlyData:
		pt = wire.PacketType0RTT
	case handshake.LevelApplication:
		pt = wire.PacketType1RTT
	}
	tr.KeyUpdated(KeyUpdate{Type: pt, Local: write})
}

// traceKeyPhase reports 1-RTT key updates not reported yet.
func (c *connState) traceKeyPhase(tr *Tracer) {
	if c.oneRTT == nil || tr.KeyUpdated == nil {
		return
	}
	ts := c.obs.tracedState()
	for n := c.oneRTT.Updates(); ts.keyUpdates < n; {
		ts.keyUpdates++
		tr.KeyUpdated(KeyUpdate{Type: wire.PacketType1RTT, Local: true, Phase: uint64(ts.keyUpdates),
			Remote: c.oneRTT.RemoteUpdates() >= ts.keyUpdates})
	}
}

// traceSent reports a packet about to be sealed and sent, with its
// plaintext payload.
func (c *connState) traceSent(now time.Time, pt wire.PacketType, pn wire.PacketNumber, size int, ackEliciting bool, payload []byte) {
	tr := c.obs.t
	if tr == nil || tr.PacketSent == nil {
		return
	}
	c.traceKeyPhase(tr)
	p := PacketInfo{Time: now, Type: pt, Number: pn, Size: size, AckEliciting: ackEliciting, Payload: payload}
	if pt == wire.PacketType1RTT {
		p.KeyPhase = c.oneRTT.KeyPhase() == 1
	}
	tr.PacketSent(p)
}

// traceReceived reports a packet decrypted, before its frames are
// handled.
func (c *connState) traceReceived(now time.Time, pt wire.PacketType, pn wire.PacketNumber, payload []byte) {
	tr := c.obs.t
	if tr == nil || tr.PacketReceived == nil {
		return
	}
	c.traceKeyPhase(tr)
	p := PacketInfo{Time: now, Type: pt, Number: pn, Size: c.obs.rxSize, Payload: payload}
	if pt == wire.PacketType1RTT {
		p.KeyPhase = c.oneRTT.KeyPhase() == 1
	}
	tr.PacketReceived(p)
}

// traceDrop counts a packet discarded without processing and reports it
// to the Tracer.
func (c *connState) traceDrop(pt wire.PacketType, size int, reason PacketDropReason) {
	c.obs.drops[dropIndex(reason)]++
	c.obs.dropped++
	c.obs.dropsPending = true
	if tr := c.obs.t; tr != nil && tr.PacketDropped != nil {
		tr.PacketDropped(pt, size, reason)
	}
}

// flushDrops adds the packets the connection dropped since the last call
// to the Transport's counters.
func (c *connState) flushDrops(t *transportCounters) {
	if !c.obs.dropsPending {
		return
	}
	c.obs.dropsPending = false
	for i, n := range c.obs.drops {
		if n > 0 {
			t.dropped[i].Add(n)
			c.obs.drops[i] = 0
		}
	}
}

// tracePoll reports what changed in the connection's figures since the
// last call: recovery metrics and the peer's transport parameters. The
// Conn goroutine calls it after each burst of events.
func (c *connState) tracePoll() {
	tr := c.obs.t
	if tr == nil {
		return
	}
	ts := c.obs.tracedState()
	if !ts.peerParams && c.peerParams != nil {
		ts.peerParams = true
		if tr.ParametersSet != nil {
			tr.ParametersSet(false, c.peerParams)
		}
	}
	if tr.MetricsUpdated == nil {
		return
	}
	m := RecoveryMetrics{
		MinRTT: c.rtt.Min(), SmoothedRTT: c.rtt.Smoothed(), LatestRTT: c.rtt.Latest(), RTTVariation: c.rtt.MeanDeviation(),
		CongestionWindow: c.cc.CongestionWindow(), BytesInFlight: c.sent.BytesInFlight(), PacingRate: c.cc.PacingRate(),
	}
	if m != ts.metrics {
		ts.metrics = m
		tr.MetricsUpdated(m)
	}
}

// OnPacketLost counts a lost packet and reports it to the Tracer
// (ackhandler.PacketLossObserver).
func (h *connFrameHandler) OnPacketLost(space ackhandler.Space, pn wire.PacketNumber, size int) {
	c := h.c
	c.obs.bytesLost += uint64(size)
	tr := c.obs.t
	if tr == nil || tr.PacketLost == nil {
		return
	}
	pt := wire.PacketTypeInitial
	switch space {
	case ackhandler.SpaceHandshake:
		pt = wire.PacketTypeHandshake
	case ackhandler.SpaceApplication:
		pt = wire.PacketType1RTT
		if c.role == wire.RoleClient && !c.handshakeComplete {
			pt = wire.PacketType0RTT
		}
	}
	tr.PacketLost(pt, pn, size)
}

// countRetransmission counts the data of a lost STREAM or CRYPTO frame,
// which is sent again.
func (c *connState) countRetransmission(f *ackhandler.FrameRecord) {
	if f.Type == wire.FrameTypeCrypto || f.Type.IsStream() {
		c.obs.bytesRetransmitted += f.Length
	}
}

// packetTypeOf returns the type of a packet, for tracing: a short header
// is 1-RTT.
func packetTypeOf(pkt []byte) wire.PacketType {
	if len(pkt) == 0 || !wire.IsLongHeader(pkt[0]) {
		return wire.PacketType1RTT
	}
	pt, _ := wire.PacketTypeOf(pkt)
	return pt
}

// tracerDone ends a Tracer whose connection failed to start.
func tracerDone(tr *Tracer) {
	if tr != nil && tr.Done != nil {
		tr.Done()
	}
}

// traceStreamClosed reports a stream whose state is released.
func (c *connState) traceStreamClosed(id wire.StreamID) {
	if tr := c.obs.t; tr != nil && tr.StreamClosed != nil {
		tr.StreamClosed(id)
	}
}
