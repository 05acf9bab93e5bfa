package ccsim

import (
	"encoding/binary"

	"github.com/quicstack/quic/wire"
)

// The test packet format. It has no encryption, no connection IDs and one
// packet number space (application data) in each direction:
//
//	packet      = packet number (8 bytes, big endian) frame...
//	STREAM      = 0x0e offset (8 bytes) length (2 bytes) data (length bytes)
//	PING        = 0x01
//	PADDING     = 0x00, and everything after it
//	ACK         = a wire.AckFrame (types 0x02 and 0x03)
//
// A packet is ack-eliciting when it holds a STREAM or PING frame
// (RFC 9002, Section 2).
const (
	// HeaderLen is the length of the packet header: the packet number.
	HeaderLen = 8
	// streamFrameOverhead is the length of a STREAM frame without its
	// data: type, offset, length.
	streamFrameOverhead = 1 + 8 + 2
	// streamFrameType is the STREAM frame type with the OFF and LEN bits
	// (RFC 9000, Section 19.8), stream 0 implied.
	streamFrameType = byte(wire.FrameTypeStream | 0x04 | 0x02)
	pingFrameType   = byte(wire.FrameTypePing)
	paddingType     = byte(wire.FrameTypePadding)
	ackFrameType    = byte(wire.FrameTypeAck)
	ackECNFrameType = byte(wire.FrameTypeAckECN)
	// ackDelayExponent is the ack_delay_exponent both ends use: the
	// default of RFC 9000, Section 18.2.
	ackDelayExponent = 3
	// ipUDPOverhead is what the links add to each datagram: 20 bytes of
	// IPv4 header and 8 of UDP.
	ipUDPOverhead = 28
)

// putHeader writes the packet header for pn into b, which has room.
func putHeader(b []byte, pn wire.PacketNumber) {
	binary.BigEndian.PutUint64(b, uint64(pn))
}

// readHeader returns the packet number of packet b, or false if b is too
// short.
func readHeader(b []byte) (wire.PacketNumber, bool) {
	if len(b) < HeaderLen {
		return 0, false
	}
	pn := binary.BigEndian.Uint64(b)
	if pn > uint64(wire.MaxPacketNumber) {
		return 0, false
	}
	return wire.PacketNumber(pn), true
}

// putStreamFrame writes a STREAM frame header for offset and length at
// b[0:streamFrameOverhead]; the data bytes follow it.
func putStreamFrame(b []byte, offset uint64, length int) {
	b[0] = streamFrameType
	binary.BigEndian.PutUint64(b[1:], offset)
	binary.BigEndian.PutUint16(b[9:], uint16(length))
}

// streamFrameLen returns the length of the STREAM frame at the start of b,
// or 0 if it is truncated.
func streamFrameLen(b []byte) int {
	if len(b) < streamFrameOverhead {
		return 0
	}
	n := streamFrameOverhead + int(binary.BigEndian.Uint16(b[9:]))
	if n > len(b) {
		return 0
	}
	return n
}

// packetFrames is what parseFrames found in a packet.
type packetFrames struct {
	ackEliciting bool
	hasAck       bool
}

// parseFrames walks the frames of a packet's payload (after the header),
// parsing an ACK frame into ack, which it reuses. It reports false for a
// malformed payload; at most one ACK frame is accepted.
func parseFrames(p []byte, ack *wire.AckFrame, maxRanges int) (packetFrames, bool) {
	var pf packetFrames
	for len(p) > 0 {
		switch p[0] {
		case streamFrameType:
			n := streamFrameLen(p)
			if n == 0 {
				return pf, false
			}
			pf.ackEliciting = true
			p = p[n:]
		case pingFrameType:
			pf.ackEliciting = true
			p = p[1:]
		case paddingType:
			p = nil
		case ackFrameType, ackECNFrameType:
			if pf.hasAck {
				return pf, false
			}
			n, err := wire.ParseAckFrame(p, ack, maxRanges)
			if err != nil {
				return pf, false
			}
			pf.hasAck = true
			p = p[n:]
		default:
			return pf, false
		}
	}
	return pf, true
}
