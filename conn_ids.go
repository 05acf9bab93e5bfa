package quic

import (
	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// handleNewConnectionID stores a connection ID the peer issued
// (RFC 9000, Section 19.15); peerConnIDs enforces the rules.
func (c *connState) handleNewConnectionID(f wire.NewConnectionIDFrame) error {
	if err := c.peerIDs.onNewConnectionID(f); err != nil {
		return err
	}
	c.releasePathConnIDs()
	return nil
}

// handleRetireConnectionID retires one of our connection IDs and issues a
// replacement (RFC 9000, Section 19.16). The check that the ID retired is
// not the one the packet was sent to needs that packet's Destination
// Connection ID, kept in rxDstConnID while its frames are processed.
func (c *connState) handleRetireConnectionID(f wire.RetireConnectionIDFrame) error {
	return c.localIDs.onRetire(f.SequenceNumber, c.rxDstConnID)
}

// connIDFramesPending reports whether NEW_CONNECTION_ID or
// RETIRE_CONNECTION_ID frames wait to be sent.
func (c *connState) connIDFramesPending() bool {
	return c.localIDs.hasFrames() || c.peerIDs.hasFrames()
}

// appendConnIDFrames appends pending NEW_CONNECTION_ID and
// RETIRE_CONNECTION_ID frames, recording their sequence numbers (Extra) so
// their acknowledgment or loss can be reported back.
func (c *connState) appendConnIDFrames(b []byte, end int) []byte {
	const s = ackhandler.SpaceApplication
	b, c.idSeqs = c.localIDs.appendFrames(b, end, c.idSeqs[:0])
	for _, seq := range c.idSeqs {
		c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypeNewConnectionID, Extra: seq})
	}
	b, c.idSeqs = c.peerIDs.appendFrames(b, end, c.idSeqs[:0])
	for _, seq := range c.idSeqs {
		c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypeRetireConnectionID, Extra: seq})
	}
	return b
}
