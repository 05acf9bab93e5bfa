package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// pollTransmitOn is pollTransmit that also returns the path the datagram
// must be sent on: the active path, or another one for probing packets.
func (c *connState) pollTransmitOn(now time.Time, buf []byte) ([]byte, pathAddrs) {
	c.txPath = c.paths.active
	c.paths.txChallenge = nil
	d := c.pollTransmit(now, buf)
	if d != nil {
		c.markActive(now)
	}
	if p := c.paths.txChallenge; p != nil {
		// Remember challenges that could not be expanded to 1200 bytes
		// (the anti-amplification limit): their success validates the
		// address but not the MTU.
		p.small[c.paths.txChallengeIdx] = len(d) < minInitialPacketSize
		c.paths.txChallenge = nil
	}
	return d, c.paths.list[c.txPath].addrs
}

// has1RTT reports whether 1-RTT packets can be sent.
func (c *connState) has1RTT() bool {
	pt, ok := c.packetTypeFor(ackhandler.SpaceApplication)
	return ok && pt == wire.PacketType1RTT && !c.spaces[ackhandler.SpaceApplication].discarded
}

// pathAllowance returns how many bytes the anti-amplification limit of
// path p allows now, or -1 for no limit. Only a server limits itself: it
// sends to a client address it has not validated, while a client probes
// only server addresses it learned from the server.
func (c *connState) pathAllowance(p *netPath) int {
	if c.role != wire.RoleServer {
		return -1
	}
	return p.allowance()
}

// challengeReserve is the part of an unvalidated path's
// anti-amplification allowance that other packets leave for the
// PATH_CHALLENGE still to send on it: a short header, the frame, a PING
// and the AEAD tag.
const challengeReserve = 1 + wire.MaxConnectionIDLen + 4 + 9 + 1 + 16

// activeAllowance is pathAllowance of the active path for the packets
// pollTransmit builds: while a PATH_CHALLENGE may still have to be sent
// on the path, they leave room for it. Otherwise the 3x limit, spent on
// data, would leave nothing for the retransmitted challenge, and a path
// whose first challenge was lost could never be validated: its
// validation would fail with the peer there all along.
func (c *connState) activeAllowance() int {
	p := c.activePath()
	a := c.pathAllowance(p)
	if a < 0 || !p.validating || p.challengeToSend || p.nChallenges >= maxPathChallenges {
		return a
	}
	return max(a-challengeReserve, 0)
}

// pathBlocked reports whether the active path's anti-amplification limit
// leaves no room for a packet: then only more bytes from the peer (or a
// timer other than the ACK and pacing ones) can let something out.
func (c *connState) pathBlocked() bool {
	a := c.activeAllowance()
	return a >= 0 && a < minPacketRoom+16
}

// pollPathProbe builds a probing packet (PATH_CHALLENGE, PATH_RESPONSE and
// PADDING only; RFC 9000, Section 9.1) for a path that is not active, if
// one has something to send, and reports whether it did.
func (c *connState) pollPathProbe(now time.Time, buf []byte) ([]byte, bool) {
	if !c.has1RTT() {
		return nil, false
	}
	for i := range c.paths.list {
		p := &c.paths.list[i]
		if i == c.paths.active || !p.inUse || !(p.challengeToSend || p.responseToSend) {
			continue
		}
		// "An endpoint MUST expand datagrams that contain a
		// PATH_CHALLENGE frame to at least the smallest allowed maximum
		// datagram size of 1200 bytes, unless the anti-amplification
		// limit for the path does not permit sending a datagram of this
		// size." (RFC 9000, Section 8.2.1; the same for PATH_RESPONSE in
		// Section 8.2.2.) The new path's MTU is unknown: 1200 it is.
		size := minInitialPacketSize
		if a := c.pathAllowance(p); a >= 0 {
			size = min(size, a)
		}
		if size < minPacketRoom {
			continue // wait for more bytes from the peer on this path
		}
		b := c.appendProbePacket(now, buf[:0], p, size)
		if len(b) == 0 {
			continue
		}
		p.sent += uint64(len(b))
		c.bytesSent += uint64(len(b))
		c.txPath = i
		return b, true
	}
	return nil, false
}

// pathDCID returns the connection ID to send to on path p (RFC 9000,
// Section 9.5), assigning an unused one of the peer's if it has none. It
// reports false if the peer provided no unused ID: "An endpoint that
// exhausts available connection IDs cannot probe new paths or initiate
// migration, nor can it respond to probes or attempts by its peer to
// migrate." (Section 9.5) The frames wait for a NEW_CONNECTION_ID.
func (c *connState) pathDCID(p *netPath) (ConnectionID, bool) {
	if p == c.activePath() {
		return c.peerIDs.active(), true
	}
	if p.hasDCID {
		if cid, ok := c.peerIDs.bySeq(p.dcidSeq); ok {
			return cid, true
		}
	}
	if seq, cid, ok := c.peerIDs.reserve(); ok {
		p.dcidSeq, p.hasDCID = seq, true
		return cid, true
	}
	return ConnectionID{}, false
}

// appendProbePacket appends a 1-RTT packet of size bytes for path p
// carrying its pending PATH_CHALLENGE and PATH_RESPONSE, padded. Its loss
// says nothing about congestion on the active path: "A sender can make
// exceptions for probe packets so that their loss detection is independent
// and does not unduly cause the congestion controller to reduce its
// sending rate." (RFC 9000, Section 9.4)
func (c *connState) appendProbePacket(now time.Time, b []byte, p *netPath, size int) []byte {
	const s = ackhandler.SpaceApplication
	dcid, ok := c.pathDCID(p)
	if !ok {
		return b[:0]
	}
	pn, pnLen := c.sent.NextPacketNumber(s)
	h := wire.ShortHeader{DstConnID: dcid, KeyPhase: c.oneRTT.KeyPhase() == 1}
	b = h.Append(b, pn, pnLen)
	pnOff := len(b) - pnLen
	end := size - 16
	if end-len(b) < 2*9 {
		return b[:0]
	}
	if p.challengeToSend {
		b = wire.PathChallengeFrame{Data: c.newChallenge(now, p)}.Append(b)
	}
	if p.responseToSend {
		// "An endpoint MUST NOT send more than one PATH_RESPONSE frame in
		// response to one PATH_CHALLENGE frame" (RFC 9000, Section 8.2.2)
		b = wire.PathResponseFrame{Data: p.response}.Append(b)
		p.responseToSend = false
	}
	if need := max(end-len(b), pnOff+pnLen+handshake.MinPayloadLen(pnLen)-len(b)); need > 0 {
		b = append(b, make([]byte, need)...)
	}
	c.ccw.ignorePacket(int64(pn))
	return c.sealPacket(now, b, 0, pnOff, pnLen, pn, s, wire.PacketType1RTT, true, true)
}

// activePathFramesPending reports whether the active path owes a
// PATH_CHALLENGE or PATH_RESPONSE.
func (c *connState) activePathFramesPending() bool {
	p := c.activePath()
	return p.challengeToSend || p.responseToSend
}

// appendActivePathFrames appends the active path's PATH_CHALLENGE and
// PATH_RESPONSE frames, whatever congestion control says: after a peer
// migrated, the first packet on the new path carries the challenge. A
// response gets a PING beside it: "An endpoint that receives a
// PATH_CHALLENGE on an active path SHOULD send a non-probing packet in
// response." (RFC 9000, Section 9.3.3)
func (c *connState) appendActivePathFrames(now time.Time, b []byte, end int) ([]byte, bool) {
	p := c.activePath()
	start := len(b)
	if p.challengeToSend && end-len(b) >= 9 {
		b = wire.PathChallengeFrame{Data: c.newChallenge(now, p)}.Append(b)
	}
	if p.responseToSend && end-len(b) >= 10 {
		b = wire.PathResponseFrame{Data: p.response}.Append(b)
		b = append(b, byte(wire.FrameTypePing))
		p.responseToSend = false
	}
	return b, len(b) > start
}
