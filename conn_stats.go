package quic

import "time"

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
	// share a datagram); PacketsLost counts those declared lost.
	PacketsSent, PacketsReceived, PacketsLost uint64
	// OpenStreams is the number of streams not yet finished in both
	// directions.
	OpenStreams int
	// KeyUpdates counts the 1-RTT key updates this endpoint initiated or
	// followed (RFC 9001, Section 6).
	KeyUpdates int
	// DatagramsDropped counts received datagrams dropped because the
	// connection's queue was full.
	DatagramsDropped uint64
	// MaxDatagramSize is the largest UDP payload the connection sends
	// now, as path MTU discovery found it.
	MaxDatagramSize int
	// Migrations counts the moves to another network path (the client's
	// or the server's view).
	Migrations int
}

func (c *connState) stats() ConnectionStats {
	s := ConnectionStats{
		MinRTT: c.rtt.Min(), SmoothedRTT: c.rtt.Smoothed(), LatestRTT: c.rtt.Latest(), RTTVariation: c.rtt.MeanDeviation(),
		CongestionWindow: c.cc.CongestionWindow(), BytesInFlight: c.sent.BytesInFlight(),
		CongestionState: c.cc.State().Phase,
		BytesSent:       c.bytesSent, BytesReceived: c.bytesReceived,
		PacketsSent: c.packetsSent, PacketsReceived: c.packetsReceived, PacketsLost: c.sent.LostPackets(),
		OpenStreams:     c.streams.openCount(),
		MaxDatagramSize: c.maxDatagramSize, Migrations: c.paths.migrations,
	}
	if c.oneRTT != nil {
		s.KeyUpdates = c.oneRTT.Updates()
	}
	return s
}
