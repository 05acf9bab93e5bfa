package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
)

// 0-RTT on the client (RFC 9000, Section 7.4.1; RFC 9001, Section 4.6).
//
// While the handshake runs, a client resuming a session that allows early
// data sends application data in 0-RTT packets, within the limits the
// server had given in that session: "When 0-RTT is attempted, the client
// remembers ... and uses the remembered values until it receives the
// server's transport parameters" (paraphrasing RFC 9000, Section 7.4.1).
// If the server declines, everything sent in 0-RTT is sent again in 1-RTT
// packets, against the server's real limits, without the application
// noticing: "If the server rejects 0-RTT, the client ... MUST send any
// 0-RTT data again in 1-RTT" (RFC 9001, Section 4.6.2 / RFC 9000,
// Section 7.4.1, "the client ... resets ... the state of all streams").

// onEarlyDataOffered puts the remembered server parameters in force when the
// 0-RTT keys are installed on a client.
func (c *connState) onEarlyDataOffered() {
	rp, ok := c.tls.RememberedParams()
	if !ok || c.peerParams != nil {
		return
	}
	tp := rp.TransportParameters()
	c.earlyParams = &tp
	c.obs.offered0RTT = true
	c.connSend.OnMaxData(tp.InitialMaxData)
	c.streams.onPeerParams(&tp)
}

// onEarlyDataRejected undoes 0-RTT: the server processed none of it. The
// packets are declared lost, streams keep their IDs and data but forget
// what was sent and the credit it used, and the limits are those of the
// server's real transport parameters ("a client MUST ... reset ... flow
// control ... to the values in the new transport parameters", RFC 9000,
// Section 7.4.1).
func (c *connState) onEarlyDataRejected(now time.Time) {
	c.zeroRTTSeal = nil
	if c.earlyParams == nil {
		return
	}
	c.earlyParams = nil
	// The loss callbacks run first; the rewind below then discards what
	// they marked, so that all data counts as never sent.
	c.sent.Requeue(now, ackhandler.SpaceApplication)
	c.connSend.Init(0)
	c.streams.resetForRejected0RTT()
	if p := c.peerParams; p != nil {
		c.connSend.OnMaxData(p.InitialMaxData)
		c.streams.onPeerParams(p)
	}
}

// resetForRejected0RTT rewinds every stream to nothing sent and no credit,
// and the stream-count limits to none, until the real transport parameters
// apply.
func (m *streamsMap) resetForRejected0RTT() {
	m.mu.Lock()
	m.peerParams = nil
	m.peerMaxBidi, m.peerMaxUni = 0, 0
	streams := make([]*stream, 0, len(m.streams))
	for _, s := range m.streams {
		streams = append(streams, s)
	}
	m.mu.Unlock()
	for _, s := range streams {
		s.mu.Lock()
		if s.hasSend {
			s.send.rewind()
			s.sentEnd = 0
			s.sendFC.Init(0)
			s.creditKnown = false
		}
		s.mu.Unlock()
		m.markSendable(s)
	}
}

// rewind forgets that anything was sent: all written data, and the FIN,
// will be sent again as new data. Nothing may have been acknowledged.
func (b *sendBuffer) rewind() {
	if b.isReset {
		return
	}
	b.sent = b.acked
	b.ackedRanges = nil
	b.lost = nil
	b.finSent, b.finLost = false, false
}
