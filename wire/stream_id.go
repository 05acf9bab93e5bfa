package wire

// A StreamID identifies a stream within a connection (RFC 9000, Section 2.1).
// Its two low bits say who opened it and whether it is bidirectional.
type StreamID int64

// MaxStreamID is the largest stream ID, 2^62-1.
const MaxStreamID StreamID = 1<<62 - 1

// InvalidStreamID stands for "no stream".
const InvalidStreamID StreamID = -1

// Initiator returns the role that opened the stream: "The least significant
// bit (0x01) of the stream ID identifies the initiator of the stream.
// Client-initiated streams have even-numbered stream IDs ... and
// server-initiated streams have odd-numbered stream IDs"
// (RFC 9000, Section 2.1).
func (s StreamID) Initiator() Role {
	if s&1 == 0 {
		return RoleClient
	}
	return RoleServer
}

// IsBidi reports whether the stream is bidirectional: "The second least
// significant bit (0x02) of the stream ID distinguishes between
// bidirectional streams (with the bit set to 0) and unidirectional streams"
// (RFC 9000, Section 2.1).
func (s StreamID) IsBidi() bool { return s&2 == 0 }

// Num returns the stream's position among the streams of its type, counting
// from 1, as MAX_STREAMS and STREAMS_BLOCKED count them.
func (s StreamID) Num() uint64 { return uint64(s)/4 + 1 }

// NthStreamID returns the ID of the n-th stream (n >= 1) that role opens in
// the given direction; it is the inverse of Num.
func NthStreamID(role Role, bidi bool, n uint64) StreamID {
	id := StreamID((n - 1) * 4)
	if role == RoleServer {
		id |= 1
	}
	if !bidi {
		id |= 2
	}
	return id
}
