package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// Closing a connection (RFC 9000, Section 10): the immediate close that sends
// CONNECTION_CLOSE and the closing state (Section 10.2.1), the draining
// state entered on the peer's CONNECTION_CLOSE (Section 10.2.2), both for
// three PTOs (Section 10.2), and silent closes (idle timeout, stateless
// reset). Conn.WaitAcked, which waits for acknowledgements before a
// graceful close, is conn_driver_wait_acked.go.

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
	if c.closesStatelessly() {
		c.closeState = stateClosed
		c.events.closed = true
		return
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

// pollClose returns the datagram of CONNECTION_CLOSE packets the closing
// state sends: built the first time, then the same bytes again. "An
// endpoint's selected connection ID and the QUIC version are sufficient
// information to identify packets for a closing connection; the endpoint
// MAY discard all other connection state. ... To minimize the state that
// an endpoint maintains for a closing connection, endpoints MAY send the
// exact same packet in response to any received packet." (RFC 9000,
// Section 10.2.1) Once the datagram is built, the rest goes
// (releaseClosed).
func (c *connState) pollClose(now time.Time, b []byte) []byte {
	if cl := c.closing; cl.released {
		// Without keys any datagram counts as the peer's: answers are
		// limited to three times the bytes received (closeAllowance).
		if len(cl.datagram) == 0 || !closeAllowance(cl.rxBytes, cl.txBytes, len(cl.datagram)) || !c.closeFitsPath(len(cl.datagram)) {
			return nil
		}
		cl.txBytes += uint64(len(cl.datagram))
		c.bytesSent += uint64(len(cl.datagram))
		c.packetsSent += cl.packets
		return append(b, cl.datagram...)
	}
	sent := c.packetsSent
	b = c.appendClosePackets(now, b)
	if c.closesStatelessly() {
		return c.closeStateless(b)
	}
	c.closing.datagram = append([]byte(nil), b...)
	c.closing.packets = c.packetsSent - sent
	c.releaseClosed(now)
	if len(b) == 0 || !c.closeFitsPath(len(b)) {
		// Built, not sent: a later datagram from the peer's address
		// may allow it.
		c.bytesSent -= uint64(len(b))
		c.packetsSent = sent
		return nil
	}
	return b
}

// closesStatelessly reports whether the connection ends as soon as it
// closes, without a closing or draining period: a server that has not
// validated its client's address. "An endpoint that has not established
// state, such as a server that detects an error in an Initial packet,
// does not enter the closing state. An endpoint that has no state for the
// connection does not enter a closing or draining period on sending a
// CONNECTION_CLOSE frame." (RFC 9000, Section 10.2.3) Before the client
// proved its address, the connection's state is nothing the client
// cannot make a server create again with one more Initial; keeping it for
// three PTOs would let a flood of Initials that fail at once, from
// spoofed addresses, fill the server's memory with closed connections.
// A client that retransmits its Initial after the CONNECTION_CLOSE was
// lost reaches no connection and is answered the same way by a new one,
// unless the server then answers it with Retry.
func (c *connState) closesStatelessly() bool {
	return c.role == wire.RoleServer && !c.addressValidated
}

// closeStateless ends a connection that closesStatelessly, whose
// CONNECTION_CLOSE datagram b was just built: it is sent once, within
// the anti-amplification limit ("Prior to validating the client address,
// servers MUST NOT send more than three times as many bytes as the number
// of bytes they have received", RFC 9000, Section 8.1), and the
// connection is closed at once.
func (c *connState) closeStateless(b []byte) []byte {
	c.closeState = stateClosed
	if c.bytesSent > 3*c.bytesReceived {
		c.bytesSent -= uint64(len(b))
		return nil
	}
	if len(b) == 0 {
		return nil
	}
	return b
}

// releaseClosed lets go, once, of what a connection in the closing state
// (after its CONNECTION_CLOSE datagram is built) or in the draining state
// no longer uses: TLS, the packet protection keys, the records of sent
// and received packets and the CRYPTO streams. The connection lingers in
// these states for three PTOs (RFC 9000, Section 10.2), and a server that
// ends connections at a high rate would otherwise keep the whole state of
// each for that long. What the application can still ask of the
// connection (its TLS state, statistics, streams) stays.
func (c *connState) releaseClosed(now time.Time) {
	if c.closing == nil || c.closing.released {
		return
	}
	c.closing.released = true
	if c.oneRTT != nil {
		c.closing.keyUpdates = c.oneRTT.Updates()
	}
	if c.tls != nil {
		c.tls.Release()
	}
	for s := range c.spaces {
		c.dropSpace(now, ackhandler.Space(s))
	}
	c.oneRTT, c.appWrite = nil, nil
	c.zeroRTTSeal, c.zeroRTTOpen = nil, nil
	c.undecryptable, c.rxFrame = nil, nil
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
