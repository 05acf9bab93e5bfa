package quic

import (
	"time"

	"github.com/quicstack/quic/wire"
)

// ConnectionStats are a connection's counters and estimates, updated by its
// goroutine after every event.
type ConnectionStats struct {
	// MinRTT, SmoothedRTT, LatestRTT and RTTVariation are the RFC 9002
	// estimates.
	MinRTT, SmoothedRTT, LatestRTT, RTTVariation time.Duration
	// CongestionWindow and BytesInFlight are in bytes.
	CongestionWindow, BytesInFlight int
	// CongestionState names the controller's state ("slow_start", ...).
	CongestionState string
	// BytesSent and BytesReceived count UDP payload bytes.
	BytesSent, BytesReceived uint64
	// PacketsSent and PacketsReceived count QUIC packets (several may
	// share a datagram); PacketsLost counts those declared lost and
	// BytesLost their sizes.
	PacketsSent, PacketsReceived, PacketsLost uint64
	BytesLost                                 uint64
	// BytesRetransmitted counts the STREAM and CRYPTO data of packets
	// declared lost (or sent in 0-RTT and rejected), which is sent again
	// in new packets unless its stream was reset meanwhile: this library
	// retransmits frames, never whole packets.
	BytesRetransmitted uint64
	// AcksSent counts the packets sent with an ACK frame, AcksReceived
	// the ACK frames received (each packet carries at most one): how
	// often the endpoints acknowledge (see Config.DisableAckFrequency).
	AcksSent, AcksReceived uint64
	// PacketsDropped counts received packets the connection discarded
	// without processing (undecryptable, duplicate, keys gone).
	PacketsDropped uint64
	// OpenStreams is the number of streams not yet finished in both
	// directions.
	OpenStreams int
	// KeyUpdates counts the 1-RTT key updates this endpoint initiated or
	// followed (RFC 9001, Section 6).
	KeyUpdates int
	// DatagramsDropped counts received UDP datagrams (packets, not
	// DATAGRAM frames) dropped before the connection read them, because
	// its inbound queue was full.
	DatagramsDropped uint64
	// UnsentDatagramsDropped counts DATAGRAM frame payloads (RFC 9221)
	// given to SendDatagram that were dropped unsent: pushed out of the
	// full send queue by newer ones, too large, or still queued when the
	// connection closed. UnreadDatagramsDropped counts received ones
	// dropped from the full receive queue before ReceiveDatagram read
	// them. Config.DatagramQueueLen bounds both queues; the Tracer's
	// DatagramsDropped tells the reasons.
	UnsentDatagramsDropped, UnreadDatagramsDropped uint64
	// MaxDatagramSize is the largest UDP payload the connection sends
	// now, as path MTU discovery found it.
	MaxDatagramSize int
	// Migrations counts the moves to another network path (the client's
	// or the server's view).
	Migrations int
	// PTOCount is the number of probe timeouts that fired in a row
	// without an acknowledgment since (pto_count, RFC 9002, Section
	// 6.2.1): 2 or more means that the path has not answered for two
	// probe timeouts.
	PTOCount int

	// The fields below are set once the handshake completed.

	// HandshakeComplete reports whether it did.
	HandshakeComplete bool
	// HandshakeDuration is the time from the connection's start (Dial,
	// or the server receiving the first Initial) to the handshake's
	// completion.
	HandshakeDuration time.Duration
	// Version is the QUIC version in use.
	Version wire.Version
	// CipherSuite is the TLS cipher suite (a crypto/tls constant, see
	// tls.CipherSuiteName); ALPN the application protocol.
	CipherSuite uint16
	ALPN        string
	// Resumed reports whether the TLS session was resumed; Used0RTT
	// whether 0-RTT was accepted (see ConnectionState.Used0RTT).
	Resumed, Used0RTT bool
}

func (c *connState) stats() ConnectionStats {
	s := ConnectionStats{
		MinRTT: c.rtt.Min(), SmoothedRTT: c.rtt.Smoothed(), LatestRTT: c.rtt.Latest(), RTTVariation: c.rtt.MeanDeviation(),
		CongestionWindow: c.cc.CongestionWindow(), BytesInFlight: c.sent.BytesInFlight(),
		CongestionState: c.cc.State().Phase,
		BytesSent:       c.bytesSent, BytesReceived: c.bytesReceived,
		PacketsSent: c.packetsSent, PacketsReceived: c.packetsReceived, PacketsLost: c.sent.LostPackets(),
		BytesLost: c.obs.bytesLost, BytesRetransmitted: c.obs.bytesRetransmitted, PacketsDropped: c.obs.dropped,
		AcksSent: c.obs.acksSent, AcksReceived: c.obs.acksReceived,
		OpenStreams:     c.streams.openCount(),
		MaxDatagramSize: c.maxDatagramSize, Migrations: c.paths.migrations,
		PTOCount: c.sent.PTOCount(),
	}
	if c.oneRTT != nil {
		s.KeyUpdates = c.oneRTT.Updates()
	} else if c.closing != nil {
		s.KeyUpdates = c.closing.keyUpdates
	}
	return s
}
