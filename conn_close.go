package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// closeWithError closes the connection because of a protocol error found
// locally: it sends CONNECTION_CLOSE with the error's transport code.
func (c *connState) closeWithError(now time.Time, err error) {
	te := transportErrorFrom(err)
	c.startClosing(now, te, wire.ConnectionCloseFrame{
		ErrorCode: uint64(te.Code), FrameType: te.FrameType, Reason: []byte(te.Reason),
	})
}

// closeApplication closes the connection at the application's request
// with an application error code (RFC 9000, Section 10.2).
func (c *connState) closeApplication(now time.Time, code ApplicationErrorCode, reason string) {
	c.startClosing(now, &ApplicationError{Code: code, Reason: reason}, wire.ConnectionCloseFrame{
		IsApplication: true, ErrorCode: uint64(code), Reason: []byte(reason),
	})
}

// startClosing enters the closing state (RFC 9000, Section 10.2.1): send
// CONNECTION_CLOSE now, answer further packets with it, and go after 3 PTO.
func (c *connState) startClosing(now time.Time, err error, f wire.ConnectionCloseFrame) {
	if c.closeState != stateActive {
		return
	}
	if c.bytesReceived == 0 {
		// The peer never answered: there is nobody to tell, and no
		// packets of it can still arrive to be answered.
		c.closeSilently(err)
		return
	}
	c.closeErr = err
	if len(f.Reason) > 256 {
		f.Reason = f.Reason[:256]
	}
	c.closeState = stateClosing
	c.closeToSend = true
	// "the closing and draining states SHOULD exist for at least three
	// times the current PTO interval" (RFC 9000, Section 10.2).
	c.closing = &closingState{frame: f, deadline: now.Add(3 * c.rtt.PTO(true))}
	c.events.closed = true
}

// enterDraining enters the draining state (RFC 9000, Section 10.2.2):
// nothing more is sent.
func (c *connState) enterDraining(now time.Time, err error) {
	if c.closeState == stateDraining || c.closeState == stateClosed {
		return
	}
	if c.closeState == stateActive {
		c.closeErr = err
	}
	c.closeState = stateDraining
	if c.closing == nil {
		c.closing = &closingState{}
	}
	c.closing.deadline = now.Add(3 * c.rtt.PTO(true))
	c.events.closed = true
}

// closeSilently ends the connection without sending anything, as on idle
// timeout: "the connection is silently closed and its state is discarded"
// (RFC 9000, Section 10.1).
func (c *connState) closeSilently(err error) {
	if c.closeState == stateActive {
		c.closeErr = err
	}
	c.closeState = stateClosed
	c.events.closed = true
}

// appendClosePackets appends CONNECTION_CLOSE in every space the peer may
// be reading: "When sending CONNECTION_CLOSE, the goal is to ensure that
// the peer will process the frame. ... a client might send the frame in
// both Initial and Handshake packets" (RFC 9000, Section 10.2.3). In
// Initial and Handshake packets an application close becomes a transport
// APPLICATION_ERROR without reason, since "a CONNECTION_CLOSE of type 0x1d
// MUST be replaced by a CONNECTION_CLOSE of type 0x1c when sending the
// frame in Initial or Handshake packets".
func (c *connState) appendClosePackets(now time.Time, b []byte) []byte {
	for s := ackhandler.SpaceInitial; s <= ackhandler.SpaceApplication; s++ {
		pt, ok := c.packetTypeFor(s)
		if !ok || c.spaces[s].discarded || pt == wire.PacketType0RTT {
			continue
		}
		if s != ackhandler.SpaceApplication && c.handshakeConfirmed {
			continue
		}
		f := c.closing.frame
		if f.IsApplication && pt != wire.PacketType1RTT {
			f = wire.ConnectionCloseFrame{ErrorCode: uint64(wire.ApplicationError)}
		}
		room := c.maxDatagramSize - len(b)
		if room < minPacketRoom+f.EncodedLen() {
			break
		}
		pn, pnLen := c.sent.NextPacketNumber(s)
		start := len(b)
		b = c.appendHeader(b, pt, pn, pnLen)
		pnOff := len(b) - pnLen
		b = f.Append(b)
		for len(b)-pnOff-pnLen < 4 {
			b = append(b, 0)
		}
		if pt == wire.PacketTypeInitial && c.role == wire.RoleClient {
			b = append(b, make([]byte, max(0, minInitialPacketSize-16-len(b)))...)
		}
		b = c.sealPacket(now, b, start, pnOff, pnLen, pn, s, pt, false, false)
	}
	c.bytesSent += uint64(len(b))
	return b
}
