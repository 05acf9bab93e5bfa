package quic

import (
	"net/netip"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// controlFramesPending reports whether connection-level control frames
// wait to be sent.
func (c *connState) controlFramesPending() bool {
	if c.connRecv.ShouldSendUpdate() || c.newTokenToSend {
		return true
	}
	if _, ok := c.connSend.Blocked(); ok && c.streams.hasDataToSend() {
		return true
	}
	return c.ackFreq.toSend || c.streams.controlFramesPending() || c.connIDFramesPending()
}

// growWindowForReaders grows the connection's receive window while it is
// starved and an application goroutine waits for the peer's stream data,
// in a Read or an Accept: credit is granted as data is consumed, and an
// application that reads streams one after another (the responses of
// several requests, say), or accepts streams before it reads them, leaves
// data unread while it waits for something the peer cannot send, a
// deadlock. RFC 9000, Section 4.2: "A receiver can use an autotuning
// mechanism to tune the frequency and amount of advertised additional
// credit"; MaxConnectionReceiveWindow still bounds what is buffered.
//
// The rule is that the connection's window bounds memory and does not
// decide what the application gets: while the application waits for the
// peer, the peer may have up to MaxConnectionReceiveWindow unread.
// net/http2's client reaches the same end by granting a 1 GiB connection
// window and letting its 4 MiB stream windows bound memory, which gives
// up a bound per connection (here 100 streams of up to 16 MiB). An
// application that always waits in Accept (an HTTP/3 server) thus grows
// its window whenever the peer uses it up, up to the maximum.
func (c *connState) growWindowForReaders() {
	if c.streams.readersWaiting {
		c.connRecv.GrowForWaitingReader()
	}
}

// appendControlFrames appends the connection's and streams' flow-control
// and stream-control frames that fit before end.
func (c *connState) appendControlFrames(now time.Time, b []byte, end int) []byte {
	const s = ackhandler.SpaceApplication
	if c.newTokenToSend {
		// "A server MAY ... send a NEW_TOKEN frame ... after the handshake"
		// (RFC 9000, Section 8.1.3); sent again if lost, with the same
		// token.
		if c.newToken == nil {
			c.newToken = c.newTokenFor.mint(now)
		}
		f := wire.NewTokenFrame{Token: c.newToken}
		if end-len(b) >= f.EncodedLen() {
			b = f.Append(b)
			c.newTokenToSend = false
			c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypeNewToken})
		}
	}
	if c.connRecv.ShouldSendUpdate() {
		// "A receiver MUST ... send MAX_DATA ... frames as it consumes
		// data" (RFC 9000, Section 4.2).
		limit := c.connRecv.NextLimit(now, c.rtt.Smoothed())
		f := wire.MaxDataFrame{MaximumData: limit}
		if end-len(b) >= f.EncodedLen() {
			b = f.Append(b)
			c.connRecv.OnUpdateSent(limit)
			c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypeMaxData, Offset: limit})
		}
	}
	if limit, ok := c.connSend.Blocked(); ok && c.streams.hasDataToSend() {
		// "A sender SHOULD send a STREAM_DATA_BLOCKED or DATA_BLOCKED frame
		// to indicate to the receiver that it has data to write but is
		// blocked by flow control limits." (RFC 9000, Section 4.1)
		f := wire.DataBlockedFrame{MaximumData: limit}
		if end-len(b) >= f.EncodedLen() {
			b = f.Append(b)
			c.connSend.OnBlockedSent(limit)
			c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypeDataBlocked, Offset: limit})
		}
	}
	// Each kind is asked whether it has frames before it builds them: a
	// packet of a bulk transfer usually has none, and the tests cost a
	// fraction of the appends.
	if c.connIDFramesPending() {
		b = c.appendConnIDFrames(b, end)
	}
	if c.ackFreq.toSend {
		b = c.appendAckFrequencyFrame(b, end)
	}
	return c.streams.appendControlFrames(now, b, end)
}

// datagramQueueLen is the default of Config.DatagramQueueLen, which
// bounds the DATAGRAM frames waiting in each direction; beyond it the
// oldest are dropped ("DATAGRAM frames ... are not retransmitted",
// RFC 9221, Section 5, so dropping is within the contract), and counted.
// maxDatagramQueueLen bounds the setting.
const (
	datagramQueueLen    = 32
	maxDatagramQueueLen = 1 << 16
)

func (c *connState) handleDatagramFrame(f wire.DatagramFrame) error {
	// "An endpoint that receives a DATAGRAM frame when it has not
	// indicated support via the transport parameter MUST terminate the
	// connection with an error of type PROTOCOL_VIOLATION. Similarly, an
	// endpoint that receives a DATAGRAM frame that is larger than the value
	// it sent in its max_datagram_frame_size transport parameter MUST
	// terminate the connection with an error of type PROTOCOL_VIOLATION."
	// (RFC 9221, Section 3)
	if c.maxDatagramFrameSize == 0 || uint64(f.EncodedLen()) > c.maxDatagramFrameSize {
		return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeDatagram, Reason: "unexpected DATAGRAM frame"}
	}
	c.datagrams.pushReceived(f.Data)
	return nil
}

// appendDatagramFrames appends queued datagrams that fit in this packet.
// A datagram too large for any packet, or for the peer, is dropped: "An
// endpoint MUST NOT send DATAGRAM frames until it has received the
// max_datagram_frame_size transport parameter with a non-zero value ...
// An endpoint MUST NOT send DATAGRAM frames that are larger than the
// max_datagram_frame_size value it has received from its peer."
// (RFC 9221, Section 3)
func (c *connState) appendDatagramFrames(b []byte, end int) []byte {
	if c.peerParams == nil {
		return b // not yet known whether the peer takes datagrams
	}
	for {
		d, ok := c.datagrams.peekSend()
		if !ok {
			return b
		}
		f := wire.DatagramFrame{Data: d, HasLength: true}
		if uint64(f.EncodedLen()) > c.peerParams.MaxDatagramFrameSize {
			c.datagrams.popSend(datagramDropTooLarge)
			continue
		}
		if f.EncodedLen() > end-len(b) {
			if f.EncodedLen() > c.maxDatagramSize-64 {
				c.datagrams.popSend(datagramDropTooLarge) // can never fit
				continue
			}
			return b
		}
		b = f.Append(b)
		c.sent.AddFrame(ackhandler.SpaceApplication, ackhandler.FrameRecord{Type: wire.FrameTypeDatagramWithLength})
		c.datagrams.popSend(datagramDropNone)
	}
}

// A tokenMint makes the address validation token of a NEW_TOKEN frame
// (RFC 9000, Section 8.1.3) for a client address.
type tokenMint struct {
	tokens *handshake.TokenProtector
	addr   netip.Addr
}

func (m tokenMint) valid() bool { return m.tokens != nil && m.addr.IsValid() }

// mint seals a token issued at now.
func (m tokenMint) mint(now time.Time) []byte {
	return m.tokens.AppendNewToken(nil, now, m.addr)
}
