package quic

import (
	"encoding/binary"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// sendMode says what a packet may carry.
type sendMode uint8

const (
	sendAckOnly sendMode = iota // congestion- or pacing-limited: ACKs only
	sendAny                     // anything the window allows
	sendProbe                   // a PTO probe: ack-eliciting, ignores the window
)

// minPacketRoom is the least space worth starting a packet in: a header,
// a few bytes of frames and the AEAD tag.
const minPacketRoom = 1 + 20 + 4 + 4 + 16

// pollTransmit writes the next datagram to send into buf, which must have a
// capacity of at least the maximum datagram size, and returns it; it
// returns nil when there is nothing to send now. Packets of the Initial,
// Handshake and application spaces are coalesced in that order
// (RFC 9000, Section 12.2).
func (c *connState) pollTransmit(now time.Time, buf []byte) []byte {
	// One ECN codepoint for the whole datagram: the IP header has one.
	// Datagrams that may carry Initial or Handshake packets go unmarked:
	// during the handshake only PTOs fire and no packet is declared
	// lost, so a path that drops ECT(0) packets would fail every
	// handshake before the validation of RFC 9000, Section 13.4.2 ("If
	// all packets marked with non-zero ECN codepoints are subsequently
	// lost, it can disable marking") could notice. Measured on the
	// simulator (TestSimECNHandshakeOnECTDroppingPath), marking them
	// made the handshake take 31 s (client's packets dropped) or 7 s
	// (server's) instead of 41 ms; testing ECN with the first 1-RTT
	// packets costs nothing on such a path beyond their loss, and on
	// others validates ECN about one round trip later.
	c.sendECN = ackhandler.NotECT
	if c.closeState == stateActive && c.spaces[ackhandler.SpaceInitial].discarded && c.spaces[ackhandler.SpaceHandshake].discarded {
		c.sendECN = c.sent.ECNMarking()
	}
	if c.closeState == stateActive {
		c.newTokenAfterMigration()
	}
	switch c.closeState {
	case stateClosed:
		return nil
	case stateDraining:
		c.releaseClosed(now)
		return nil
	case stateClosing:
		if !c.closeToSend {
			return nil
		}
		c.closeToSend = false
		return c.pollClose(now, buf[:0])
	}
	if c.spareConnIDsDue {
		c.issueSpareConnIDs(now)
		if c.closeState != stateActive {
			return c.pollTransmit(now, buf)
		}
	}
	c.streams.processAttention(now)
	c.growWindowForReaders()
	if b, ok := c.pollPathProbe(now, buf); ok {
		return b
	}
	limit := c.maxDatagramSize
	if c.earlyParams != nil && c.earlyParams.MaxUDPPayloadSize < uint64(limit) {
		// While 0-RTT packets may be sent, datagrams stay within the
		// remembered max_udp_payload_size (RFC 9000, Section 7.4.1;
		// conn_early.go).
		limit = int(c.earlyParams.MaxUDPPayloadSize)
	}
	if !c.addressValidated {
		// "Prior to validating the client address, servers MUST NOT send
		// more than three times as many bytes as the number of bytes they
		// have received." (RFC 9000, Section 8.1)
		allowance := 3*c.bytesReceived - min(c.bytesSent, 3*c.bytesReceived)
		if allowance < minPacketRoom+16 {
			c.sent.SetAmplificationLimited(now, true)
			return nil
		}
		limit = min(limit, int(allowance))
	}
	active := c.activePath()
	if a := c.activeAllowance(); a >= 0 {
		// The same limit on a path the peer moved to, until it is
		// validated (RFC 9000, Section 9.3.1).
		if a < minPacketRoom+16 {
			return nil
		}
		limit = min(limit, a)
	}
	mode := c.sendMode(now)
	if size := c.pmtuProbeSize(now); size > 0 && size <= cap(buf) && mode != sendProbe {
		b := c.appendPMTUProbe(now, buf[:0], size)
		c.bytesSent += uint64(len(b))
		active.sent += uint64(len(b))
		return b
	}
	b := buf[:0]
	// "A client MUST expand the payload of all UDP datagrams carrying
	// Initial packets to at least the smallest allowed maximum datagram
	// size of 1200 bytes ... a server MUST expand the payload of all UDP
	// datagrams carrying ack-eliciting Initial packets" (RFC 9000,
	// Section 14.1). The last packet of such a datagram carries the
	// PADDING.
	padDatagram := false
	for s := c.firstLiveSpace(); s <= ackhandler.SpaceApplication; s++ {
		room := limit - len(b)
		if room < minPacketRoom {
			break
		}
		if s == ackhandler.SpaceInitial && c.wantsToSend(now, s, mode) {
			sp := &c.spaces[s]
			padDatagram = c.role == wire.RoleClient || (mode != sendAckOnly && sp.cryptoToSend()) || mode == sendProbe
		}
		padTo := 0
		if padDatagram && c.isLastSpaceToSend(now, s, mode) {
			padTo = min(minInitialPacketSize, limit)
		}
		if s == ackhandler.SpaceApplication && c.has1RTT() && c.activePathFramesPending() {
			// Datagrams with PATH_CHALLENGE or PATH_RESPONSE are expanded
			// to 1200 bytes (RFC 9000, Sections 8.2.1 and 8.2.2).
			padTo = max(padTo, min(minInitialPacketSize, limit))
		}
		start := len(b)
		var pt wire.PacketType
		b, pt, _ = c.appendPacket(now, b, s, room, mode, padTo)
		if len(b) == start {
			continue
		}
		if pt == wire.PacketTypeHandshake && c.role == wire.RoleClient && !c.sentHandshakePacket {
			// "a client MUST discard Initial keys when it first sends a
			// Handshake packet" (RFC 9001, Section 4.9.1).
			c.sentHandshakePacket = true
			c.dropSpace(now, ackhandler.SpaceInitial)
		}
	}
	if len(b) == 0 {
		if mode == sendAny && limit == c.maxDatagramSize && c.earlyParams == nil {
			c.onNothingToSend(now)
		}
		return nil
	}
	if padDatagram && len(b) < min(minInitialPacketSize, limit) {
		// A later space had less to send than it seemed: add a packet
		// made of PADDING.
		b = c.appendPaddingPacket(now, b, min(minInitialPacketSize, limit)-len(b))
	}
	c.bytesSent += uint64(len(b))
	active.sent += uint64(len(b))
	return b
}

// firstLiveSpace returns the first packet number space not discarded:
// once the handshake is over, the application space, so that a packet of
// the steady state does not ask the discarded Initial and Handshake spaces
// whether they want to send (wantsToSend reports false for them).
func (c *connState) firstLiveSpace() ackhandler.Space {
	s := ackhandler.SpaceInitial
	for s < ackhandler.SpaceApplication && c.spaces[s].discarded {
		s++
	}
	return s
}

// wantsToSend reports whether space s has an ACK due or frames to send.
func (c *connState) wantsToSend(now time.Time, s ackhandler.Space, mode sendMode) bool {
	sp := &c.spaces[s]
	pt, ok := c.packetTypeFor(s)
	if !ok || sp.discarded {
		return false
	}
	if mode == sendProbe && c.sent.ProbeSpace() != s {
		mode = sendAckOnly
	}
	if s == ackhandler.SpaceApplication && pt == wire.PacketType1RTT && c.activePathFramesPending() {
		return true
	}
	return ackDue(sp, now) || c.hasDataToSend(s, pt, mode)
}

// ackDue reports whether the space must send an ACK frame now; AckDeadline
// is zero when none is due.
func ackDue(sp *packetSpace, now time.Time) bool {
	d := sp.recv.AckDeadline()
	return !d.IsZero() && !d.After(now)
}

// ackOwed reports whether the application space has an ACK to send, now
// or at its deadline (a timer the goroutine runs for, as nextDeadline
// arms it: not while only 0-RTT packets could carry it, nor while the
// anti-amplification limit blocks the path): "ack-eliciting
// packets MUST be acknowledged at least once within the maximum delay an
// endpoint communicated using the max_ack_delay transport parameter"
// (RFC 9000, Section 13.2.1).
func (c *connState) ackOwed() bool {
	const s = ackhandler.SpaceApplication
	sp := &c.spaces[s]
	if sp.discarded || sp.recv.AckDeadline().IsZero() || c.pathBlocked() {
		return false
	}
	pt, ok := c.packetTypeFor(s)
	return ok && pt != wire.PacketType0RTT
}

// isLastSpaceToSend reports whether no space after s has anything to send.
func (c *connState) isLastSpaceToSend(now time.Time, s ackhandler.Space, mode sendMode) bool {
	for later := s + 1; later <= ackhandler.SpaceApplication; later++ {
		if c.wantsToSend(now, later, mode) {
			return false
		}
	}
	return true
}

// sendMode decides whether congestion control and pacing let data go now.
func (c *connState) sendMode(now time.Time) sendMode {
	if c.sent.ProbesToSend() > 0 {
		return sendProbe
	}
	if c.sent.BytesInFlight() >= c.cc.CongestionWindow() {
		return sendAckOnly
	}
	if t := c.pacer.TimeUntilSend(now, c.cc.PacingRate()); t.After(now) {
		return sendAckOnly
	}
	return sendAny
}

// onNothingToSend tells the congestion controller that the connection is
// application-limited: pollTransmit found nothing to send although the
// window had room and the pacer let packets go. "When bytes in flight is
// smaller than the congestion window and sending is not pacing limited,
// the congestion window is underutilized. This can happen due to
// insufficient application data or flow control limits. When this
// occurs, the congestion window SHOULD NOT be increased in either slow
// start or congestion avoidance." (RFC 9002, Section 7.8; RFC 9438,
// Section 5.8; BBR's MarkConnectionAppLimited). Stream data held back by
// flow control (the peer's MAX_DATA or MAX_STREAM_DATA) or by the peer's
// stream limit sends nothing either and counts the same way. A sender
// only waiting for the pacer is not application-limited: "A sender SHOULD
// NOT consider itself application limited if it would have fully
// utilized the congestion window without pacing delay" (Section 7.8);
// sendMode then returns sendAckOnly and this is not called. The
// controller ends the period itself when a packet sent fills the window.
func (c *connState) onNothingToSend(now time.Time) {
	c.cc.OnAppLimited(now, c.sent.BytesInFlight())
}

// appendPacket appends one packet of space s, of at most room bytes, and
// returns the extended datagram, the packet type, and whether the packet is
// ack-eliciting. It appends nothing if there is nothing to send.
func (c *connState) appendPacket(now time.Time, b []byte, s ackhandler.Space, room int, mode sendMode, padTo int) ([]byte, wire.PacketType, bool) {
	sp := &c.spaces[s]
	if !c.wantsToSend(now, s, mode) {
		return b, 0, false
	}
	pt, _ := c.packetTypeFor(s)
	if mode == sendProbe && c.sent.ProbeSpace() != s {
		mode = sendAckOnly
	}

	if pt == wire.PacketType1RTT {
		// "Endpoints MUST initiate a key update before sending more
		// protected packets than the confidentiality limit for the
		// selected AEAD permits" (RFC 9001, Section 6.6).
		c.oneRTT.MaybeUpdate(now)
	}
	pn, pnLen := c.sent.NextPacketNumber(s)
	start := len(b)
	pnOff := 0
	b = c.appendHeader(b, pt, pn, pnLen)
	pnOff = len(b) - pnLen
	payloadStart := len(b)
	end := start + room - 16 // leave room for the AEAD tag
	if end-payloadStart < handshake.MinPayloadLen(pnLen)+1 {
		return b[:start], 0, false
	}

	ackEliciting := false
	// ACK first: it is small and always welcome (RFC 9000, Section 13.2).
	if sp.recv.AckPending() {
		if sp.recv.AppendAck(now, &sp.ackFrame, defaultAckDelayExponent) {
			for len(sp.ackFrame.Ranges) > 1 && payloadStart+sp.ackFrame.EncodedLen() > end {
				sp.ackFrame.Ranges = sp.ackFrame.Ranges[:len(sp.ackFrame.Ranges)-1]
			}
			if payloadStart+sp.ackFrame.EncodedLen() <= end {
				b = sp.ackFrame.Append(b)
				sp.recv.OnAckSent()
				c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypeAck, Offset: uint64(sp.ackFrame.LargestAcked())})
				c.obs.acksSent++
			}
		}
	}
	if pt == wire.PacketType1RTT {
		var elicit bool
		b, elicit = c.appendActivePathFrames(now, b, end)
		ackEliciting = ackEliciting || elicit
	}
	if mode != sendAckOnly {
		var elicit bool
		b, elicit = c.appendFrames(now, b, end, s, pt, mode)
		ackEliciting = ackEliciting || elicit
	}
	if mode == sendProbe && pt == wire.PacketType1RTT {
		var elicit bool
		b, elicit = c.appendImmediateAck(b, end)
		ackEliciting = ackEliciting || elicit
	}
	if mode == sendProbe && !ackEliciting && end-len(b) >= 1 {
		// "When there is no data to send, the sender SHOULD send a PING or
		// other ack-eliciting frame in a single packet" (RFC 9002,
		// Section 6.2.4).
		b = append(b, byte(wire.FrameTypePing))
		c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypePing})
		ackEliciting = true
	}
	if len(b) == payloadStart {
		c.sent.DiscardFrames(s)
		return b[:start], 0, false
	}
	// Header protection samples 16 bytes starting 4 bytes after the packet
	// number (RFC 9001, Section 5.4.2); datagrams with Initial packets are
	// padded to 1200 bytes.
	padded := false
	if need := max(padTo-16-len(b), payloadStart+handshake.MinPayloadLen(pnLen)-len(b)); need > 0 {
		b = append(b, make([]byte, min(need, end-len(b)))...)
		padded = padTo > 0
	}
	return c.sealPacket(now, b, start, pnOff, pnLen, pn, s, pt, ackEliciting, padded), pt, ackEliciting
}

// sealPacket fills in the Length field of a long header, protects the
// packet that starts at start, and records it as sent.
func (c *connState) sealPacket(now time.Time, b []byte, start, pnOff, pnLen int, pn wire.PacketNumber, s ackhandler.Space, pt wire.PacketType, ackEliciting, padded bool) []byte {
	sp := &c.spaces[s]
	if pt != wire.PacketType1RTT {
		length := uint64(len(b) - pnOff + 16)
		wire.PutVarintWithLen(b[pnOff-2:], length, 2)
	}
	pkt := b[start:]
	// Traced before sealing, which encrypts the payload in place; every
	// QUIC AEAD adds a 16-byte tag (RFC 9001, Section 5.3).
	c.traceSent(now, pt, pn, len(pkt)+16, ackEliciting, b[pnOff+pnLen:])
	var sealed []byte
	switch pt {
	case wire.PacketType1RTT:
		var err error
		sealed, err = c.oneRTT.Seal(pkt, pnOff-start, pnLen, pn)
		if err != nil {
			c.sent.DiscardFrames(s)
			c.closeWithError(now, err)
			return b[:start]
		}
	case wire.PacketType0RTT:
		sealed = c.zeroRTTSeal.Seal(pkt, pnOff-start, pnLen, pn)
	default:
		sealed = sp.seal.Seal(pkt, pnOff-start, pnLen, pn)
		if c.offeredVersion != 0 {
			// Bytes 1 to 4 of a long header are the Version
			// (RFC 9000, Section 17.2); see connState.offeredVersion.
			binary.BigEndian.PutUint32(sealed[1:5], uint32(c.offeredVersion))
		}
	}
	inFlight := ackEliciting || padded
	c.packetsSent++
	c.sent.OnPacketSent(now, s, ackhandler.SentPacket{
		PacketNumber: pn, Size: len(sealed), AckEliciting: ackEliciting, InFlight: inFlight, ECN: c.sendECN,
	})
	if inFlight {
		c.pacer.OnPacketSent(now, len(sealed), c.cc.PacingRate())
	}
	if ackEliciting {
		c.lastAckEliciting = now
		if c.idleRestartOnSend {
			// "An endpoint also restarts its idle timer when sending an
			// ack-eliciting packet if no other ack-eliciting packets
			// have been sent since last receiving and processing a
			// packet." (RFC 9000, Section 10.1)
			c.idleRestartOnSend = false
			c.resetIdleTimer(now)
		}
	}
	return b[:start+len(sealed)]
}

// appendPaddingPacket appends a packet made of PADDING, in the latest
// space with keys, growing the datagram by about need bytes.
func (c *connState) appendPaddingPacket(now time.Time, b []byte, need int) []byte {
	s := ackhandler.SpaceApplication
	pt, ok := c.packetTypeFor(s)
	for !ok || c.spaces[s].discarded {
		if s == ackhandler.SpaceInitial {
			return b
		}
		s--
		pt, ok = c.packetTypeFor(s)
	}
	pn, pnLen := c.sent.NextPacketNumber(s)
	start := len(b)
	b = c.appendHeader(b, pt, pn, pnLen)
	pnOff := len(b) - pnLen
	payload := max(need-(len(b)-start)-16, handshake.MinPayloadLen(pnLen), 1)
	b = append(b, make([]byte, payload)...)
	return c.sealPacket(now, b, start, pnOff, pnLen, pn, s, pt, false, true)
}

// appendHeader appends the header of a packet of type pt with packet
// number pn in pnLen bytes. A long header's Length field is written as 0
// in 2 bytes, for sealPacket to fill in.
func (c *connState) appendHeader(b []byte, pt wire.PacketType, pn wire.PacketNumber, pnLen int) []byte {
	if pt == wire.PacketType1RTT {
		h := wire.ShortHeader{DstConnID: c.peerIDs.active(), KeyPhase: c.oneRTT.KeyPhase() == 1}
		return h.Append(b, pn, pnLen)
	}
	h := wire.LongHeader{Type: pt, Version: c.version, DstConnID: c.peerIDs.active(), SrcConnID: c.localConnID}
	if pt == wire.PacketType0RTT {
		h.Version = c.firstVersion // RFC 9369, Section 4.1
	}
	if pt == wire.PacketTypeInitial && c.role == wire.RoleClient {
		// "the client MUST include the token in all Initial packets it
		// sends" after a Retry (RFC 9000, Section 8.1.2)
		h.Token = c.retryToken
	}
	return h.Append(b, pn, pnLen)
}

// packetTypeFor returns the packet type this endpoint sends in space s now,
// and whether it has keys for it.
func (c *connState) packetTypeFor(s ackhandler.Space) (wire.PacketType, bool) {
	switch s {
	case ackhandler.SpaceInitial:
		return wire.PacketTypeInitial, c.spaces[s].seal != nil
	case ackhandler.SpaceHandshake:
		return wire.PacketTypeHandshake, c.spaces[s].seal != nil
	}
	if c.oneRTT != nil && (c.role == wire.RoleServer || c.handshakeComplete) {
		return wire.PacketType1RTT, true
	}
	if c.zeroRTTSeal != nil && c.role == wire.RoleClient {
		return wire.PacketType0RTT, true
	}
	return 0, false
}

// hasDataToSend reports whether space s has frames other than ACK to send.
func (c *connState) hasDataToSend(s ackhandler.Space, pt wire.PacketType, mode sendMode) bool {
	if mode == sendProbe {
		return true
	}
	if mode == sendAckOnly {
		return false
	}
	if c.spaces[s].cryptoToSend() {
		return true
	}
	if s != ackhandler.SpaceApplication {
		return false
	}
	// The stream data test first: in a bulk transfer it is the one that
	// holds, and it is cheaper than controlFramesPending.
	return (pt == wire.PacketType1RTT || pt == wire.PacketType0RTT) && c.streams.hasDataToSend() ||
		c.handshakeDoneToSend || c.pingToSend || c.controlFramesPending() || c.datagrams.hasSend()
}

// appendFrames appends everything but ACK that space s has to send, up to
// end, and reports whether it added an ack-eliciting frame.
func (c *connState) appendFrames(now time.Time, b []byte, end int, s ackhandler.Space, pt wire.PacketType, mode sendMode) ([]byte, bool) {
	start := len(b)
	if s == ackhandler.SpaceApplication && pt == wire.PacketType1RTT {
		if c.handshakeDoneToSend && end-len(b) >= 1 {
			b = append(b, byte(wire.FrameTypeHandshakeDone))
			c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypeHandshakeDone})
			c.handshakeDoneToSend = false
		}
		b = c.appendControlFrames(now, b, end)
	}
	// CRYPTO data (RFC 9000, Section 19.6).
	sp := &c.spaces[s]
	for pt != wire.PacketType0RTT && sp.cryptoToSend() {
		avail := end - len(b) - (1 + 8 + 2)
		if avail <= 0 {
			break
		}
		off, n, _, ok := sp.crypto.send.nextFrame(avail)
		if !ok {
			break
		}
		b = wire.CryptoFrame{Offset: off}.AppendHeader(b, n)
		b = sp.crypto.send.appendData(b, off, n)
		c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypeCrypto, Offset: off, Length: uint64(n)})
	}
	if s == ackhandler.SpaceApplication {
		b = c.appendDatagramFrames(b, end)
		b = c.streams.appendStreamFrames(now, b, end)
		if c.pingToSend && len(b) == start && end-len(b) >= 1 {
			b = append(b, byte(wire.FrameTypePing))
			c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypePing})
		}
		if len(b) > start {
			c.pingToSend = false
		}
	}
	return b, len(b) > start
}
