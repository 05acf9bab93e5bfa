package quic

import (
	"net"
	"time"

	"github.com/quicstack/quic/wire"
)

// A Tracer receives one connection's events, for logging (see package
// qlog) and metrics. Config.Tracer makes one per connection. Any field may
// be nil. The functions run on the connection's goroutine, one at a time
// (Done, after the connection's closing period, on another), and must not
// block; they get plain values, so that tracing allocates nothing per
// packet, and slices they get are valid only during the call.
type Tracer struct {
	// ConnectionStarted is called first, when the connection starts, with
	// the socket's local address, the peer's address, the version and the
	// connection IDs of the first packet this endpoint sends: its Source
	// and Destination Connection IDs.
	ConnectionStarted func(local, remote net.Addr, version wire.Version, srcConnID, dstConnID ConnectionID)
	// PacketSent is called for every packet sent.
	PacketSent func(p PacketInfo)
	// PacketReceived is called for every packet decrypted, before its
	// frames are processed. Duplicates are reported to PacketDropped
	// instead.
	PacketReceived func(p PacketInfo)
	// PacketDropped is called for a packet the connection discards
	// without processing it: one that cannot be decrypted, a duplicate,
	// one of a packet number space whose keys are gone.
	PacketDropped func(pt wire.PacketType, size int, reason PacketDropReason)
	// PacketLost is called when loss detection declares a packet lost
	// (RFC 9002, Section 6.1), with the packet's size in bytes.
	PacketLost func(pt wire.PacketType, pn wire.PacketNumber, size int)
	// DatagramsDropped is called when DATAGRAM frame payloads (RFC 9221)
	// were dropped: ones the application gave to SendDatagram that will
	// never be sent, or received ones the application did not read in
	// time. Drops are reported in batches, at most one call per
	// direction and reason for each burst of events the connection
	// handles; ConnectionStats counts them too.
	DatagramsDropped func(d DatagramDrop)
	// MetricsUpdated is called when the RTT estimates, the congestion
	// window or the bytes in flight changed, at most once per burst of
	// events the connection handles.
	MetricsUpdated func(m RecoveryMetrics)
	// KeyUpdated is called when packet protection keys are installed:
	// by the TLS handshake (Initial, Handshake, 0-RTT and the first 1-RTT
	// keys) and by each 1-RTT key update (RFC 9001, Section 6).
	KeyUpdated func(k KeyUpdate)
	// ParametersSet is called with this endpoint's transport parameters
	// (local true) when the connection starts and with the peer's when
	// they arrive. p is valid only during the call.
	ParametersSet func(local bool, p *wire.TransportParameters)
	// StreamClosed is called when a stream is finished in both
	// directions (all data sent and acknowledged or reset, all data
	// received and read or reset) and its state is released.
	StreamClosed func(id wire.StreamID)
	// HandshakeComplete is called when the TLS handshake completes, with
	// the negotiated version, cipher suite (a crypto/tls constant) and
	// ALPN protocol, and whether 0-RTT was accepted.
	HandshakeComplete func(h HandshakeInfo)
	// ConnectionClosed is called once, with the reason, when the
	// connection ends (it may still send a CONNECTION_CLOSE or wait in
	// the draining state afterwards). It is called before the call that
	// closed the connection returns (Conn.CloseWithError, or the Close of
	// what owns the connection, such as Transport.Close), and before any
	// of the connection's blocked calls see the close, so that a tracer
	// that writes a file can complete it here, for an application that
	// exits at once; package qlog does.
	ConnectionClosed func(err error)
	// Application is a tracer for the application protocol that runs on
	// the connection, such as an *http3.Tracer, which the protocol's
	// package finds with Conn.ApplicationTracer so that its events go to
	// the same trace. Package quic does not use it; unlike the functions
	// above, the application's tracer is called from the application's
	// goroutines, possibly concurrently.
	Application any
	// Done is called last, when the connection's state is gone, which
	// for a closed connection is at the end of its closing or draining
	// period (three PTOs, RFC 9000, Section 10.2, or when its Transport
	// closes): an application that exits before may never see it. The
	// Tracer gets no more calls.
	Done func()
}

// PacketInfo describes a packet sent or received.
type PacketInfo struct {
	// Time is when the connection sent or processed the packet, by the
	// clock it runs on (the time its state machine was handed), which
	// spares a tracer reading the clock for every packet.
	Time time.Time
	// Type is the packet type; Number its full packet number.
	Type   wire.PacketType
	Number wire.PacketNumber
	// Size is the packet's length on the wire: header, payload and the
	// AEAD tag (within a datagram that may hold several packets).
	Size int
	// KeyPhase is the Key Phase bit of a 1-RTT packet (RFC 9001,
	// Section 6).
	KeyPhase bool
	// AckEliciting reports whether a packet sent has an ack-eliciting
	// frame; it is false for packets received (the frames in Payload
	// tell).
	AckEliciting bool
	// Payload is the decrypted payload: the packet's frames, which
	// wire.ParseFrame reads one by one. Valid only during the call.
	Payload []byte
}

// A PacketDropReason says why a packet was discarded. The values are the
// triggers of the qlog packet_dropped event (draft-ietf-quic-qlog-quic-
// events, Section 5.7), with "queue_full" and "too_large" as details of
// "rejected" and "invalid".
type PacketDropReason string

// Reasons for dropping packets.
const (
	// DropDecryptionFailure: the packet did not authenticate.
	DropDecryptionFailure PacketDropReason = "decryption_failure"
	// DropKeyUnavailable: the keys to read it are not there yet, beyond
	// the few packets buffered (RFC 9001, Section 5.7), or already
	// discarded.
	DropKeyUnavailable PacketDropReason = "key_unavailable"
	// DropDuplicate: a packet number already received.
	DropDuplicate PacketDropReason = "duplicate"
	// DropInvalid: the datagram or header could not be parsed.
	DropInvalid PacketDropReason = "invalid"
	// DropUnknownConnection: no connection has the Destination
	// Connection ID of a short-header packet.
	DropUnknownConnection PacketDropReason = "connection_unknown"
	// DropUnsupportedVersion: a long header of a version not spoken
	// here.
	DropUnsupportedVersion PacketDropReason = "unsupported"
	// DropRejected: the listener refused a new connection (handshake or
	// accept-queue limit, too small an Initial, closed listener, no
	// listener).
	DropRejected PacketDropReason = "rejected"
	// DropQueueFull: the connection's inbound queue was full.
	DropQueueFull PacketDropReason = "queue_full"
	// DropTooLarge: a datagram larger than the max_udp_payload_size this
	// endpoint advertises.
	DropTooLarge PacketDropReason = "too_large"
)

// dropReasons lists every PacketDropReason, in the order of the
// Transport's counters.
var dropReasons = [...]PacketDropReason{
	DropDecryptionFailure, DropKeyUnavailable, DropDuplicate, DropInvalid, DropUnknownConnection,
	DropUnsupportedVersion, DropRejected, DropQueueFull, DropTooLarge,
}

// DatagramDrop describes DATAGRAM frame payloads (RFC 9221) a connection
// dropped for one reason, in one direction.
type DatagramDrop struct {
	// Sent reports that the payloads were the application's, given to
	// Conn.SendDatagram and never sent; otherwise they were received and
	// not read with Conn.ReceiveDatagram.
	Sent bool
	// Reason says why.
	Reason DatagramDropReason
	// Count is the number of payloads dropped, Bytes their total size.
	Count, Bytes int
}

// A DatagramDropReason says why DATAGRAM frame payloads were dropped.
type DatagramDropReason string

// Reasons for dropping DATAGRAM frame payloads.
const (
	// DatagramDropQueueFull: the queue (Config.DatagramQueueLen) was
	// full, and the oldest payload made room for a new one: a payload
	// Conn.SendDatagram queued faster than the connection could send
	// (congestion control decides), or a received one the application
	// did not read before more arrived.
	DatagramDropQueueFull DatagramDropReason = "queue_full"
	// DatagramDropTooLarge: a payload to send was larger than the peer's
	// max_datagram_frame_size allows or than a packet on the path can
	// carry (RFC 9221, Section 3).
	DatagramDropTooLarge DatagramDropReason = "too_large"
	// DatagramDropConnectionClosed: a payload was still waiting to be
	// sent when the connection closed.
	DatagramDropConnectionClosed DatagramDropReason = "connection_closed"
)

// datagramDropIndex indexes datagramDropReasons; datagramDropNone is no
// drop.
type datagramDropIndex int8

const (
	datagramDropNone       datagramDropIndex = -1
	datagramDropQueueFull  datagramDropIndex = 0
	datagramDropTooLarge   datagramDropIndex = 1
	datagramDropClosed     datagramDropIndex = 2
	numDatagramDropReasons                   = 3
)

var datagramDropReasons = [numDatagramDropReasons]DatagramDropReason{
	DatagramDropQueueFull, DatagramDropTooLarge, DatagramDropConnectionClosed,
}

// RecoveryMetrics are the loss-recovery and congestion-control figures
// of the qlog recovery_metrics_updated event.
type RecoveryMetrics struct {
	// MinRTT, SmoothedRTT, LatestRTT and RTTVariation are the RFC 9002
	// estimates (zero before the first RTT sample).
	MinRTT, SmoothedRTT, LatestRTT, RTTVariation time.Duration
	// CongestionWindow and BytesInFlight are in bytes.
	CongestionWindow, BytesInFlight int
	// PacingRate is in bytes per second; 0 if the controller does not
	// pace.
	PacingRate uint64
}

// KeyUpdate describes newly installed packet protection keys.
type KeyUpdate struct {
	// Type is the packet type the keys protect: Initial, Handshake, 0-RTT
	// or 1-RTT.
	Type wire.PacketType
	// Local reports whether these are this endpoint's write keys (the
	// peer's read keys otherwise). 1-RTT updates change both and report
	// Local true.
	Local bool
	// Phase counts 1-RTT key updates: 0 for the keys the handshake made.
	Phase uint64
	// Remote reports that the peer initiated a 1-RTT key update.
	Remote bool
}

// HandshakeInfo describes a completed handshake.
type HandshakeInfo struct {
	// Version is the QUIC version in use.
	Version wire.Version
	// CipherSuite is the TLS cipher suite, a crypto/tls constant.
	CipherSuite uint16
	// ALPN is the negotiated application protocol.
	ALPN string
	// Used0RTT reports whether 0-RTT was accepted; Resumed whether the
	// TLS session was resumed.
	Used0RTT, Resumed bool
}
