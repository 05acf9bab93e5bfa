package quic

import (
	"errors"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// handleDatagram processes one received UDP datagram on the active path;
// handleDatagramOn is the same for a datagram whose addresses are known.
func (c *connState) handleDatagram(now time.Time, d []byte, ecn ackhandler.ECNMark) {
	c.handleDatagramOn(now, pathAddrs{}, d, ecn)
}

// processDatagram processes one received UDP datagram: each coalesced
// packet in turn (RFC 9000, Section 12.2). The datagram's memory is only
// borrowed for the call; packets are decrypted in place.
func (c *connState) processDatagram(now time.Time, d []byte, ecn ackhandler.ECNMark) {
	if c.closeState == stateClosed || c.closeState == stateDraining {
		return
	}
	c.bytesReceived += uint64(len(d))
	if !c.addressValidated {
		// More bytes from the client raise the server's 3x allowance: "If
		// no additional data can be sent, the server's PTO timer MUST NOT
		// be armed until datagrams have been received from the client"
		// (RFC 9002, Section 6.2.2.1), and then it may be.
		c.sent.SetAmplificationLimited(now, false)
	}
	if c.closeState == stateClosing {
		// "An endpoint in the closing state sends a packet containing a
		// CONNECTION_CLOSE frame in response to any incoming packet that
		// it attributes to the connection", but "SHOULD limit the rate at
		// which it generates packets in the closing state ... an endpoint
		// could wait for a progressively increasing number of received
		// packets" (RFC 9000, Section 10.2.1): answer the 1st, 2nd, 4th,
		// 8th ... datagram.
		c.closing.datagrams++
		c.closing.rxBytes += uint64(len(d))
		if n := c.closing.datagrams; n&(n-1) == 0 {
			c.closeToSend = true
		}
		return
	}
	// "A server MUST discard an Initial packet that is carried in a UDP
	// datagram with a payload that is smaller than the smallest allowed
	// maximum datagram size of 1200 bytes." (RFC 9000, Section 14.1) Once
	// the Initial space is gone its packets are dropped anyway, and small
	// datagrams (acknowledgments, most of all) take no extra look.
	small := c.role == wire.RoleServer && len(d) < minInitialPacketSize && !c.spaces[ackhandler.SpaceInitial].discarded
	var firstDstConnID wire.ConnectionID
	for i := 0; len(d) > 0; i++ {
		pkt, rest, err := wire.NextPacket(d, c.localConnID.Len())
		if err != nil {
			return
		}
		if i > 0 || len(rest) > 0 {
			// "Receivers SHOULD ignore any subsequent packets with a
			// different Destination Connection ID than the first packet
			// in the datagram." (RFC 9000, Section 12.2) A datagram of
			// one packet, as nearly all are, needs no look.
			dcid, err := wire.ParseDestConnectionID(pkt, c.localConnID.Len())
			if err != nil {
				return
			}
			if i == 0 {
				firstDstConnID = dcid
			} else if dcid != firstDstConnID {
				c.traceDrop(packetTypeOf(pkt), len(pkt), DropUnknownConnection)
				d = rest
				continue
			}
		}
		if small {
			if pt, err := wire.PacketTypeOf(pkt); err == nil && pt == wire.PacketTypeInitial {
				c.traceDrop(pt, len(pkt), DropInvalid)
				d = rest
				continue
			}
		}
		c.handlePacket(now, pkt, ecn, true)
		if c.closeState != stateActive {
			return
		}
		d = rest
	}
}

// handlePacket removes protection from one packet and processes its
// frames. Packets whose keys are not there yet are kept (a few, copied)
// when buffer is set. Packets that fail are dropped silently, as RFC 9000,
// Section 12.2 and RFC 9001, Section 5.5 ask; protocol errors close the
// connection.
func (c *connState) handlePacket(now time.Time, pkt []byte, ecn ackhandler.ECNMark, buffer bool) {
	c.obs.rxSize = len(pkt)
	if !wire.FixedBitSet(pkt[0]) && !isVersionNegotiation(pkt) {
		// "Fixed Bit: The next bit (0x40) of byte 0 is set to 1. Packets
		// containing a zero value for this bit are not valid packets in
		// this version and MUST be discarded." (RFC 9000, Sections
		// 17.2 and 17.3.1) This endpoint does not send grease_quic_bit,
		// which alone would allow a zero (RFC 9287, Section 3).
		c.traceDrop(packetTypeOf(pkt), len(pkt), DropInvalid)
		return
	}
	if wire.IsLongHeader(pkt[0]) {
		c.handleLongHeaderPacket(now, pkt, ecn, buffer)
		return
	}
	if c.oneRTT == nil || !c.oneRTT.CanOpen() {
		c.bufferUndecryptable(pkt, buffer)
		return
	}
	pnOff := 1 + c.localConnID.Len()
	if len(pkt) < pnOff {
		return
	}
	sp := &c.spaces[ackhandler.SpaceApplication]
	pn, payload, err := c.oneRTT.Open(now, pkt, pnOff, sp.recv.LargestReceived())
	if err != nil {
		var te *wire.TransportError
		if errors.As(err, &te) {
			c.closeWithError(now, err)
			return
		}
		if c.isStatelessReset(pkt) {
			c.onStatelessReset(now)
			return
		}
		c.traceDrop(wire.PacketType1RTT, len(pkt), DropDecryptionFailure)
		c.onAuthFailure(now, err, true)
		return
	}
	if err := wire.CheckReservedBits(pkt[0], false); err != nil {
		c.closeWithError(now, err)
		return
	}
	c.rxDstConnID = wire.NewConnectionID(pkt[1:pnOff])
	c.processPayload(now, ackhandler.SpaceApplication, wire.PacketType1RTT, pn, payload, ecn)
	if c.zeroRTTOpen != nil && c.zeroRTTDiscard.IsZero() {
		// "After receiving a 1-RTT packet, servers MUST discard 0-RTT
		// keys within a short time; the RECOMMENDED time period is
		// three times the Probe Timeout (PTO)" (RFC 9001, Section
		// 4.9.3): until then they read 0-RTT packets reordered behind
		// 1-RTT ones.
		c.zeroRTTDiscard = now.Add(3 * c.rtt.PTO(true))
	}
}

func (c *connState) handleLongHeaderPacket(now time.Time, pkt []byte, ecn ackhandler.ECNMark, buffer bool) {
	typ, err := wire.PacketTypeOf(pkt)
	if err != nil {
		return
	}
	switch typ {
	case wire.PacketTypeVersionNegotiation:
		c.handleVersionNegotiation(now, pkt)
		return
	case wire.PacketTypeRetry:
		c.handleRetry(now, pkt)
		return
	}
	hdr, pnOff, err := wire.ParseLongHeader(pkt)
	if err != nil || !hdr.Version.IsSupported() {
		return
	}
	if c.role == wire.RoleClient && !c.acceptsServerLongHeader(typ, len(hdr.Token), hdr.SrcConnID) {
		c.traceDrop(typ, len(pkt), DropInvalid)
		return
	}
	var space ackhandler.Space
	var open *handshake.Opener
	switch typ {
	case wire.PacketTypeInitial:
		space, open = ackhandler.SpaceInitial, c.spaces[ackhandler.SpaceInitial].open
	case wire.PacketTypeHandshake:
		space, open = ackhandler.SpaceHandshake, c.spaces[ackhandler.SpaceHandshake].open
	case wire.PacketType0RTT:
		if c.role != wire.RoleServer {
			return
		}
		space, open = ackhandler.SpaceApplication, c.zeroRTTOpen
		c.obs.rx0RTT = true // for statistics, accepted or not
	default:
		return
	}
	sp := &c.spaces[space]
	if sp.discarded || (typ == wire.PacketType0RTT && c.oneRTT != nil && c.zeroRTTOpen == nil) {
		c.traceDrop(typ, len(pkt), DropKeyUnavailable)
		return
	}
	learnVersion := false
	if hdr.Version != c.version {
		// Compatible version negotiation (conn_version_negotiation.go).
		var keep bool
		if open, learnVersion, keep = c.openerForVersion(typ, hdr.Version); open == nil {
			if keep {
				c.bufferUndecryptable(pkt, buffer)
			}
			return
		}
	} else if typ == wire.PacketType0RTT && c.version != c.firstVersion {
		// "The client MUST NOT send 0-RTT packets using the negotiated
		// version" (RFC 9369, Section 4.1).
		return
	}
	if open == nil {
		c.bufferUndecryptable(pkt, buffer)
		return
	}
	pnLen, err := open.RemoveHeaderProtection(pkt, pnOff)
	if err != nil {
		return
	}
	trunc, _ := wire.ParseTruncatedPacketNumber(pkt[pnOff:], pnLen)
	pn := wire.DecodePacketNumber(sp.recv.LargestReceived(), trunc, pnLen)
	payload, err := open.Open(pkt, pnOff, pnLen, pn)
	if err != nil {
		c.traceDrop(typ, len(pkt), DropDecryptionFailure)
		c.onAuthFailure(now, err, false)
		return
	}
	if err := wire.CheckReservedBits(pkt[0], true); err != nil {
		c.closeWithError(now, err)
		return
	}
	if learnVersion {
		c.switchVersion(hdr.Version, open)
	}
	if typ == wire.PacketTypeInitial && c.role == wire.RoleClient && sp.recv.LargestReceived() == wire.InvalidPacketNumber {
		// "When an Initial packet is sent by a client that has not
		// previously received an Initial or Retry packet from the server,
		// the client populates the Destination Connection ID field with
		// an unpredictable value. ... Upon first receiving an Initial or
		// Retry packet from the server, the client uses the Source
		// Connection ID supplied by the server as the Destination
		// Connection ID for subsequent packets" (RFC 9000, Section 7.2).
		c.peerConnID = hdr.SrcConnID
		c.peerIDs.setInitial(hdr.SrcConnID)
		c.serverConnIDTaken = true
	}
	if typ == wire.PacketTypeHandshake && c.role == wire.RoleServer {
		// "a server MUST discard Initial keys when it first successfully
		// processes a Handshake packet" (RFC 9001, Section 4.9.1), and
		// "receipt of a packet protected with Handshake keys confirms that
		// the peer successfully processed an Initial packet" so the
		// client's address is validated (RFC 9000, Section 8.1).
		if !c.addressValidated {
			c.addressValidated = true
			c.sent.SetAmplificationLimited(now, false)
		}
		c.dropSpace(now, ackhandler.SpaceInitial)
	}
	c.rxDstConnID = hdr.DstConnID
	c.processPayload(now, space, typ, pn, payload, ecn)
}

// acceptsServerLongHeader reports whether a client may process a long
// header packet of type typ from the server, given its Token's length and
// Source Connection ID, before removing its protection:
//
//   - "Initial packets sent by the server MUST set the Token Length field
//     to 0; clients that receive an Initial packet with a non-zero Token
//     Length field MUST either discard the packet or generate a connection
//     error of type PROTOCOL_VIOLATION" (RFC 9000, Section 17.2.2); it is
//     discarded, so that an injected Initial cannot end the connection,
//     and its Source Connection ID is not taken;
//   - "Once a client has received a valid Initial packet from the server,
//     it MUST discard any subsequent packet it receives on that
//     connection with a different Source Connection ID" (RFC 9000,
//     Section 7.2).
func (c *connState) acceptsServerLongHeader(typ wire.PacketType, tokenLen int, srcConnID wire.ConnectionID) bool {
	if typ == wire.PacketTypeInitial && tokenLen > 0 {
		return false
	}
	return !c.serverConnIDTaken || srcConnID == c.peerConnID
}

// processPayload handles the frames of a decrypted packet and records it
// for acknowledgment.
func (c *connState) processPayload(now time.Time, space ackhandler.Space, pt wire.PacketType, pn wire.PacketNumber, payload []byte, ecn ackhandler.ECNMark) {
	sp := &c.spaces[space]
	if sp.recv.IsDuplicate(pn) {
		c.traceDrop(pt, c.obs.rxSize, DropDuplicate)
		return
	}
	c.rxPacketType = pt
	largest := sp.recv.LargestReceived()
	if err := wire.CheckPayloadNotEmpty(payload); err != nil {
		c.closeWithError(now, err)
		return
	}
	c.traceReceived(now, pt, pn, payload)
	// Keys that a CRYPTO frame installs can replay buffered packets
	// (retryUndecryptable) through this function: the flag of the packet
	// being processed is saved around its frames.
	outer := c.rxNewCrypto
	c.rxNewCrypto = false
	ackEliciting, err := c.handleFrames(now, space, pt, payload)
	newCrypto := c.rxNewCrypto
	c.rxNewCrypto = outer
	if err != nil {
		c.closeWithError(now, err)
		return
	}
	if c.closeState != stateActive || sp.discarded {
		return
	}
	if ackEliciting && !newCrypto && space == ackhandler.SpaceInitial && c.role == wire.RoleServer {
		c.probeEarlyForClient()
	}
	sp.recv.OnPacket(now, pn, ackEliciting, ecn)
	c.packetsReceived++
	if pt == wire.PacketType1RTT {
		c.onPathPacket(now, largest == wire.InvalidPacketNumber || pn > largest)
	}
	// "An endpoint restarts its idle timer when a packet from its peer is
	// received and processed successfully." (RFC 9000, Section 10.1)
	c.resetIdleTimer(now)
	c.idleRestartOnSend = true
}

// isVersionNegotiation reports whether pkt is a Version Negotiation
// packet: a long header with version 0, which has no Fixed Bit (RFC 9000,
// Section 17.2.1).
func isVersionNegotiation(pkt []byte) bool {
	return wire.IsLongHeader(pkt[0]) && len(pkt) >= 5 && pkt[1]|pkt[2]|pkt[3]|pkt[4] == 0
}

// bufferUndecryptable keeps a copy of a packet whose keys are not yet
// available, up to a small bound (RFC 9001, Section 5.7: "Endpoints ... can
// choose to buffer ... packets"; the bound keeps memory fixed). A packet is
// acknowledged only once processed, so one dropped here is one the peer
// will send again.
func (c *connState) bufferUndecryptable(pkt []byte, buffer bool) {
	if buffer {
		c.probeEarlyForServer(pkt)
	}
	if !buffer || len(c.undecryptable) >= maxBufferedUndecryptable || c.handshakeConfirmed {
		if buffer {
			c.traceDrop(packetTypeOf(pkt), len(pkt), DropKeyUnavailable)
		}
		return
	}
	c.undecryptable = append(c.undecryptable, append([]byte(nil), pkt...))
}

// isStatelessReset reports whether a packet that failed to decrypt ends
// with a stateless reset token the peer gave us (RFC 9000, Section 10.3.1).
func (c *connState) isStatelessReset(pkt []byte) bool {
	return c.peerIDs.isStatelessReset(pkt)
}

// onStatelessReset ends the connection: "If the last 16 bytes of the
// datagram are identical in value to a stateless reset token, the endpoint
// MUST enter the draining period and not send any further packets on this
// connection." (RFC 9000, Section 10.3.1)
func (c *connState) onStatelessReset(now time.Time) {
	c.enterDraining(now, &StatelessResetError{})
}

// receivedInitial reports whether an Initial packet from the peer was
// processed. A discarded Initial space had one: a client discards its
// Initial keys once it sends Handshake packets, whose keys came in the
// server's Initial (RFC 9001, Section 4.9.1).
func (c *connState) receivedInitial() bool {
	sp := &c.spaces[ackhandler.SpaceInitial]
	return sp.discarded || sp.recv.LargestReceived() != wire.InvalidPacketNumber
}

// handleVersionNegotiation makes a client give up when the server speaks
// none of its versions (RFC 9000, Section 6.2): "A client MUST discard any
// Version Negotiation packet if it has received and successfully processed
// any other packet", and "MUST discard a Version Negotiation packet that
// lists the QUIC version selected by the client."
func (c *connState) handleVersionNegotiation(now time.Time, pkt []byte) {
	// "A client MUST discard any Version Negotiation packet if it has
	// received and successfully processed any other packet, including an
	// earlier Version Negotiation packet." (RFC 9000, Section 6.2) A
	// Retry is such a packet.
	if c.role != wire.RoleClient || c.receivedInitial() || c.hasRetried {
		return
	}
	offered := c.version
	if c.offeredVersion != 0 {
		offered = c.offeredVersion
	}
	vn, err := wire.ParseVersionNegotiation(pkt)
	if err != nil || !c.localConnID.Equal(vn.DstConnID) || !c.origDstConnID.Equal(vn.SrcConnID) || vn.Contains(offered) {
		return
	}
	theirs := make([]wire.Version, vn.NumVersions())
	for i := range theirs {
		theirs[i] = vn.Version(i)
	}
	c.closeErr = &VersionNegotiationError{Ours: c.config.Versions, Theirs: theirs}
	c.closeState = stateClosed
	c.events.closed = true
}

// handleRetry follows one Retry (RFC 9000, Section 17.2.5.2): "A client
// MUST accept and process at most one Retry packet for each connection
// attempt", checking the integrity tag, and restarts the handshake toward
// the new connection ID with the token.
func (c *connState) handleRetry(now time.Time, pkt []byte) {
	if c.role != wire.RoleClient || c.hasRetried || c.receivedInitial() {
		return
	}
	r, err := wire.ParseRetryPacket(pkt)
	if err != nil || r.Version != c.version || !r.DstConnID.Equal(c.localConnID.Bytes()) {
		return
	}
	// "A client MUST discard a Retry packet that contains a Source
	// Connection ID field that is identical to the Destination Connection
	// ID field of its Initial packet." (RFC 9000, Section 17.2.5.2)
	if r.SrcConnID == c.origDstConnID {
		return
	}
	if !handshake.VerifyRetryIntegrity(c.version, c.origDstConnID.Bytes(), pkt) {
		return
	}
	c.hasRetried = true
	c.retrySrcConnID = r.SrcConnID
	c.peerConnID = r.SrcConnID
	c.peerIDs.setInitial(r.SrcConnID)
	c.retryToken = append([]byte(nil), r.Token...)
	// New Initial keys from the Retry's Source Connection ID; everything
	// sent in Initial packets is sent again (RFC 9002, Section 6.3).
	c.initialKeyConnID = r.SrcConnID // also for keys of a negotiated version
	seal, open := handshake.NewInitialKeys(c.version, r.SrcConnID.Bytes(), true)
	sp := &c.spaces[ackhandler.SpaceInitial]
	sp.seal, sp.open = seal, open
	// Packet numbers keep increasing: "the client MUST NOT reset the
	// packet number for any packet number space after processing a Retry
	// packet" (RFC 9000, Section 17.2.5.3); Requeue keeps them.
	c.sent.Requeue(now, ackhandler.SpaceInitial)
	if c.zeroRTTSeal != nil {
		// The server discarded the 0-RTT packets that came with the
		// first Initial; they are sent again (Section 17.2.5.3 allows
		// it).
		c.sent.Requeue(now, ackhandler.SpaceApplication)
	}
}

// probeEarlyForServer is the client's side of probeEarlyForClient: a
// Handshake or 1-RTT packet that arrives before the Handshake keys means
// that the server's Initial packets, whose ServerHello makes those keys,
// were lost. "When a client receives Handshake or 1-RTT packets prior to
// obtaining Handshake keys, it may assume some or all of the server's
// Initial packets were lost. To speed up handshake completion under these
// conditions, an endpoint MAY, for a limited number of times per
// connection, send a packet containing unacknowledged CRYPTO data earlier
// than the PTO expiry" (RFC 9002, Section 6.2.3). The ClientHello goes
// again now, and the server, finding duplicate CRYPTO data in it, sends
// its Initial packets again: the handshake takes a round trip more, not
// the probe timeout (about 1 s before an RTT sample), which under heavy
// loss doubles with every lost flight. SentPacketHandler.ProbeEarly
// bounds how often, per connection.
func (c *connState) probeEarlyForServer(pkt []byte) {
	if c.role != wire.RoleClient || len(pkt) == 0 || c.spaces[ackhandler.SpaceHandshake].open != nil || c.spaces[ackhandler.SpaceHandshake].discarded {
		return
	}
	if wire.IsLongHeader(pkt[0]) {
		if typ, err := wire.PacketTypeOf(pkt); err != nil || typ != wire.PacketTypeHandshake {
			return
		}
	}
	if c.sent.ProbeEarly(ackhandler.SpaceInitial) {
		c.resendCryptoInProbes()
	}
}

// probeEarlyForClient answers a client's ack-eliciting Initial packet that
// brought no new CRYPTO data (its ClientHello again, or a PING: the probe
// a client sends while it has no Handshake keys, RFC 9002,
// Section 6.2.2.1) and did not acknowledge the server's Initial packets
// in flight: the client has not received them, so their CRYPTO data goes
// again now rather than at the probe timeout, a few times per connection
// (RFC 9002, Section 6.2.3; see SentPacketHandler.ProbeEarly).
func (c *connState) probeEarlyForClient() {
	if c.handshakeComplete || !c.sent.ProbeEarly(ackhandler.SpaceInitial) {
		return
	}
	c.resendCryptoInProbes()
}
