package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// handleFrames processes the frames of a decrypted packet of type pt in
// space and reports whether the packet was ack-eliciting.
func (c *connState) handleFrames(now time.Time, space ackhandler.Space, pt wire.PacketType, payload []byte) (ackEliciting bool, err error) {
	if c.rxFrame == nil {
		c.rxFrame = new(wire.Frame)
	}
	f := c.rxFrame
	c.rxNonProbing = false
	for len(payload) > 0 {
		var n int
		var err error
		if t := wire.FrameType(payload[0]); t.IsStream() {
			// The frame of nearly every packet a receiver gets: parsed
			// without ParseFrame's dispatch. A one-byte type 0x08-0x0f is
			// the shortest encoding of a STREAM type (RFC 9000, Section
			// 12.4), as ParseFrame requires.
			f.Type = t
			f.Stream, n, err = wire.ParseStreamFrame(payload)
		} else {
			n, err = wire.ParseFrame(payload, f, 0)
		}
		if err != nil {
			return false, err
		}
		payload = payload[n:]
		if err := wire.CheckFrameAllowed(f.Type, pt); err != nil {
			return false, err
		}
		if c.onFrame != nil {
			c.onFrame(space, f)
		}
		if f.Type.IsAckEliciting() {
			ackEliciting = true
		}
		if !isProbingFrame(f.Type) {
			c.rxNonProbing = true
		}
		if err := c.handleFrame(now, space, f); err != nil {
			return false, err
		}
		if c.closeState != stateActive {
			return ackEliciting, nil
		}
	}
	return ackEliciting, nil
}

// handleFrame processes one frame. A packet is acknowledged only once all
// its frames were processed (handlePacket), and nothing a frame carries is
// then dropped silently: data is kept until the application reads it, or
// the connection fails with an error. Each case says where its content
// goes; the frames not commented only change state.
func (c *connState) handleFrame(now time.Time, space ackhandler.Space, f *wire.Frame) error {
	t := f.Type
	switch {
	case t.IsStream():
		// Kept in the stream's receive buffer, or the connection closes
		// (stream.handleStreamFrame). First: the frame of nearly every
		// packet a receiver gets.
		return c.streams.handleStreamFrame(now, f.Stream)
	case t == wire.FrameTypePadding, t == wire.FrameTypePing:
		return nil
	case t == wire.FrameTypeAck || t == wire.FrameTypeAckECN:
		// Ranges beyond the parser's bound are treated as not acknowledged
		// by this frame (wire.AckFrame.IgnoredRanges): our packets in them
		// may be declared lost and their frames sent again, never dropped.
		return c.handleAckFrame(now, space, &f.Ack)
	case t == wire.FrameTypeCrypto:
		// Kept in the level's CRYPTO buffer, or the connection closes.
		return c.handleCryptoFrame(now, space, f.Crypto)
	case t == wire.FrameTypeResetStream:
		return c.streams.handleResetStream(now, f.ResetStream.StreamID, f.ResetStream.ErrorCode, f.ResetStream.FinalSize)
	case t == wire.FrameTypeStopSending:
		return c.streams.handleStopSending(now, f.StopSending)
	case t == wire.FrameTypeMaxData:
		if c.connSend.OnMaxData(f.MaxData.MaximumData) {
			c.streams.onConnCredit()
		}
		return nil
	case t == wire.FrameTypeMaxStreamData:
		return c.streams.handleMaxStreamData(f.MaxStreamData)
	case t == wire.FrameTypeMaxStreamsBidi || t == wire.FrameTypeMaxStreamsUni:
		c.streams.handleMaxStreams(f.MaxStreams)
		c.releaseHeldStreams()
		return nil
	case t == wire.FrameTypeDataBlocked:
		c.connRecv.OnBlockedReceived(f.DataBlocked.MaximumData)
		return nil
	case t == wire.FrameTypeStreamDataBlocked:
		return c.streams.handleStreamDataBlocked(f.StreamDataBlocked)
	case t == wire.FrameTypeStreamsBlockedBidi || t == wire.FrameTypeStreamsBlockedUni:
		c.streams.handleStreamsBlocked(f.StreamsBlocked)
		return nil
	case t == wire.FrameTypeNewToken:
		// "A server MUST treat receipt of a NEW_TOKEN frame as a
		// connection error of type PROTOCOL_VIOLATION." (RFC 9000,
		// Section 19.7)
		if c.role == wire.RoleServer {
			return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: t, Reason: "NEW_TOKEN sent by a client"}
		}
		// Kept in the TokenStore, if any: a token is a hint the client
		// "MAY use" (RFC 9000, Section 8.1.3), which a store may evict.
		if ts := c.config.TokenStore; ts != nil && c.tokenKey != "" {
			// "When a connection includes compatible version
			// negotiation, any issued server tokens are considered to
			// originate from the negotiated version" and are not used to
			// start a connection in another (RFC 9369, Section 5).
			ts.Put(c.tokenKey+"|"+c.version.String(), f.NewToken.Token) // Put copies
		}
		return nil
	case t == wire.FrameTypeNewConnectionID:
		return c.handleNewConnectionID(f.NewConnectionID)
	case t == wire.FrameTypeRetireConnectionID:
		return c.handleRetireConnectionID(f.RetireConnectionID)
	case t == wire.FrameTypePathChallenge:
		// "On receiving a PATH_CHALLENGE frame, an endpoint MUST respond
		// by echoing the data contained in the PATH_CHALLENGE frame in a
		// PATH_RESPONSE frame." (RFC 9000, Section 8.2.2) It goes on
		// the path the challenge came on. A newer challenge replaces an
		// unanswered older one: "Path validation succeeds when a
		// PATH_RESPONSE frame is received that contains the data that
		// was sent in a previous PATH_CHALLENGE frame" (Section 8.2.3),
		// so answering the latest is answering the peer.
		p := c.rxPath()
		p.response, p.responseToSend = f.PathChallenge.Data, true
		return nil
	case t == wire.FrameTypePathResponse:
		c.onPathResponse(now, f.PathResponse.Data)
		return nil
	case t == wire.FrameTypeConnectionClose || t == wire.FrameTypeConnectionCloseApp:
		c.handleConnectionClose(now, f.ConnectionClose)
		return nil
	case t == wire.FrameTypeHandshakeDone:
		// "A server MUST treat receipt of a HANDSHAKE_DONE frame as a
		// connection error of type PROTOCOL_VIOLATION." (Section 19.20)
		if c.role == wire.RoleServer {
			return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: t, Reason: "HANDSHAKE_DONE sent by a client"}
		}
		// "the TLS handshake is considered confirmed at the client when
		// a HANDSHAKE_DONE frame is received" (RFC 9001, Section 4.1.2)
		c.sent.SetPeerCompletedAddressValidation(now)
		c.confirmHandshake(now)
		return nil
	case t == wire.FrameTypeDatagram || t == wire.FrameTypeDatagramWithLength:
		// Queued for the application; a full queue drops its oldest
		// (counted): "since DATAGRAM frames are inherently unreliable,
		// they MAY be dropped by the receiver if the receiver cannot
		// process them" (RFC 9221, Section 5).
		return c.handleDatagramFrame(f.Datagram)
	case t == wire.FrameTypeImmediateAck || t == wire.FrameTypeAckFrequency:
		return c.handleAckFrequencyFrame(now, space, f)
	case t == wire.FrameTypeResetStreamAt:
		if !c.config.EnableResetStreamAt {
			// Not advertised (reset_stream_at), so the peer must not send it.
			return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: t, Reason: "RESET_STREAM_AT not negotiated"}
		}
		return c.streams.handleResetStreamAt(now, f.ResetStreamAt)
	}
	return &wire.TransportError{Code: wire.FrameEncodingError, FrameType: t, Reason: "unhandled frame"}
}

// handleAckFrequencyFrame handles ACK_FREQUENCY and IMMEDIATE_ACK
// (draft-ietf-quic-ack-frequency). "Endpoints advertise their support for
// receiving ACK_FREQUENCY and IMMEDIATE_ACK frames ... by sending the
// following transport parameter ... min_ack_delay" (Section 3): with
// Config.DisableAckFrequency this endpoint sends none, and a peer that
// sends either frame uses an extension that was not negotiated, a
// PROTOCOL_VIOLATION as for RESET_STREAM_AT and DATAGRAM frames.
// Otherwise "A receiving endpoint MUST ignore a received ACK_FREQUENCY
// frame unless the Sequence Number value in the frame is greater than the
// largest processed value" (Section 4; ackhandler.ReceivedPackets.
// OnAckFrequency).
func (c *connState) handleAckFrequencyFrame(now time.Time, space ackhandler.Space, f *wire.Frame) error {
	if !c.ackFrequencyNegotiated() {
		return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: f.Type, Reason: "ACK frequency extension not negotiated (no min_ack_delay sent)"}
	}
	if f.Type == wire.FrameTypeImmediateAck {
		c.spaces[space].recv.OnImmediateAck(now)
		return nil
	}
	af := f.AckFrequency
	// "A value smaller than the min_ack_delay advertised by the peer is
	// also invalid. Receipt of an invalid value MUST be treated as a
	// connection error of type PROTOCOL_VIOLATION." (Section 4; values
	// of 2^14 ms or more were refused by the parser.)
	delay := time.Duration(af.RequestedMaxAckDelay) * time.Microsecond
	if delay < localMinAckDelay {
		return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: f.Type, Reason: "requested max ack delay below min_ack_delay"}
	}
	c.spaces[space].recv.OnAckFrequency(af.SequenceNumber, af.AckElicitingThreshold, delay, af.ReorderingThreshold)
	return nil
}

func (c *connState) handleAckFrame(now time.Time, space ackhandler.Space, f *wire.AckFrame) error {
	exp := uint8(defaultAckDelayExponent)
	if c.peerParams != nil {
		exp = c.peerParams.AckDelayExponent
	}
	c.obs.acksReceived++
	err := c.sent.OnAckReceived(now, space, f, exp)
	c.frames.flushAcks()
	if err != nil {
		return err
	}
	if space == ackhandler.SpaceApplication {
		c.maybeUpdateAckFrequency()
	}
	switch {
	case space == ackhandler.SpaceApplication && c.oneRTT != nil:
		c.oneRTT.SetPTO(c.rtt.PTO(true))
		c.oneRTT.OnAcked(now, f.LargestAcked())
	case space == ackhandler.SpaceHandshake && c.role == wire.RoleClient:
		// A client knows the server validated its address once its
		// Handshake packets are acknowledged (RFC 9002, Section 6.2.2.1).
		c.sent.SetPeerCompletedAddressValidation(now)
	}
	return nil
}

// handleCryptoFrame reassembles CRYPTO data and passes what is contiguous
// to TLS. "Implementations MUST support buffering at least 4096 bytes of
// data received in out-of-order CRYPTO frames. ... If an endpoint does not
// expand its buffer, it MUST close the connection with a
// CRYPTO_BUFFER_EXCEEDED error code." (RFC 9000, Section 7.5)
func (c *connState) handleCryptoFrame(now time.Time, space ackhandler.Space, f wire.CryptoFrame) error {
	cr := &c.spaces[space].cryptoStream().recv
	if f.Offset+uint64(len(f.Data)) > cr.readOffset()+maxCryptoBufferPerLevel {
		return &wire.TransportError{Code: wire.CryptoBufferExceeded, FrameType: wire.FrameTypeCrypto, Reason: "CRYPTO data beyond buffer"}
	}
	level := [...]handshake.EncryptionLevel{handshake.LevelInitial, handshake.LevelHandshake, handshake.LevelApplication}[space]
	if err := c.checkCryptoLevel(level, cr.highest(), f); err != nil {
		return err
	}
	if data, ok := cr.inOrder(f.Offset, f.Data); ok {
		// In order with nothing buffered, as nearly always: TLS takes
		// the data from the packet (it copies what it keeps), and the
		// stream's buffer is never made.
		if len(data) > 0 {
			c.rxNewCrypto = true
			if err := c.handleTLSData(level, data); err != nil {
				return err
			}
			cr.skip(len(data))
		}
		return c.processTLSEvents(now)
	}
	// Acknowledged data is never dropped: the data is kept, or the
	// connection closes. The check above leaves only fragmentation to
	// fail (errRecvFragmented): "An endpoint received more data in CRYPTO
	// frames than it can buffer" (RFC 9000, Section 20.1).
	n, err := cr.push(f.Offset, f.Data)
	if err != nil {
		return &wire.TransportError{Code: wire.CryptoBufferExceeded, FrameType: wire.FrameTypeCrypto,
			Reason: "CRYPTO data fragmented into more than 31 pieces within 3968 bytes (RFC 9000, Section 21.7)"}
	}
	if n > 0 {
		c.rxNewCrypto = true
	}
	for cr.readable() > 0 {
		part := cr.peek()
		if err := c.handleTLSData(level, part); err != nil {
			return err
		}
		cr.consume(len(part))
	}
	cr.shrink() // idle connections keep no CRYPTO buffer
	return c.processTLSEvents(now)
}

func (c *connState) handleConnectionClose(now time.Time, f wire.ConnectionCloseFrame) {
	var err error
	if f.IsApplication {
		err = &ApplicationError{Code: ApplicationErrorCode(f.ErrorCode), Reason: string(f.Reason), Remote: true}
	} else {
		err = &TransportError{Code: wire.TransportErrorCode(f.ErrorCode), FrameType: f.FrameType, Reason: string(f.Reason), Remote: true}
	}
	// "The draining state is entered once an endpoint receives a
	// CONNECTION_CLOSE frame" (RFC 9000, Section 10.2.2).
	c.enterDraining(now, err)
}
