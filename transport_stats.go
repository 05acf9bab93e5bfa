package quic

import (
	"crypto/tls"
	"sync/atomic"

	"github.com/quicstack/quic/wire"
)

// TransportStats are a Transport's counters since it started, for
// operators: how many handshakes succeed, how often 0-RTT works, how much
// the server defends itself (Retry, stateless resets, version
// negotiation) and why datagrams are dropped.
type TransportStats struct {
	// HandshakesStarted counts connections started, dialed or accepted;
	// HandshakesCompleted those whose handshake completed and
	// HandshakesFailed those that ended before it did.
	HandshakesStarted, HandshakesCompleted, HandshakesFailed uint64
	// ZeroRTTOffered counts completed handshakes in which 0-RTT was
	// offered: on a client, 0-RTT keys were installed; on a server, the
	// ClientHello carried the early_data extension or 0-RTT packets
	// arrived. ZeroRTTAccepted counts those in which it was accepted and
	// ZeroRTTRejected those in which it was declined, by the server's
	// configuration, changed transport parameters, or the anti-replay
	// store (Listener.AntiReplay).
	ZeroRTTOffered, ZeroRTTAccepted, ZeroRTTRejected uint64
	// AntiReplayAdmitted, AntiReplayReplayed, AntiReplayTooOld and
	// AntiReplayFailures count the outcomes of the anti-replay check of
	// 0-RTT (Config.AntiReplay), whether or not the handshake then
	// completed: the store admitted the ticket; it had seen the ticket (a
	// replay, or a client reusing a ticket); the ticket was older than
	// Config.AntiReplayWindow; the store failed or timed out. All but
	// the first declined 0-RTT.
	AntiReplayAdmitted, AntiReplayReplayed, AntiReplayTooOld, AntiReplayFailures uint64
	// ResumptionOffered counts completed handshakes in which the client
	// tried to resume a TLS session (a client had a session; a server
	// saw the pre_shared_key extension), ResumptionAccepted those that
	// did resume (tls.ConnectionState.DidResume).
	ResumptionOffered, ResumptionAccepted uint64
	// HandshakeDuration is the distribution of the durations of the
	// handshakes completed, from the connection's start (Dial, or the
	// server receiving the first Initial) to completion.
	HandshakeDuration DurationHistogram
	// Versions, CipherSuites and KeyExchanges count the completed
	// handshakes by QUIC version, TLS cipher suite (tls.CipherSuiteName
	// names them) and key exchange group (tls.ConnectionState.CurveID;
	// 0 for a resumption without a key exchange). Only values seen are
	// present.
	Versions     map[wire.Version]uint64
	CipherSuites map[uint16]uint64
	KeyExchanges map[tls.CurveID]uint64
	// RetriesSent counts Retry packets sent (RFC 9000, Section 8.1.2).
	RetriesSent uint64
	// StatelessResetsSent counts stateless resets sent (RFC 9000,
	// Section 10.3).
	StatelessResetsSent uint64
	// VersionNegotiationsSent counts Version Negotiation packets sent
	// (RFC 9000, Section 6).
	VersionNegotiationsSent uint64
	// ReceiveBufferDrops counts the datagrams the kernel dropped because
	// the socket's receive buffer was full (on Linux, SO_RXQ_OVFL: the
	// count arrives with the next datagram read; 0 elsewhere). If it
	// grows, the buffer (SocketInfo.ReceiveBuffer, set by
	// SocketBufferSize within the kernel's limit) is too small for the
	// bursts the socket receives.
	ReceiveBufferDrops uint64
	// ReadErrorsIgnored counts errors the socket reported on reads that
	// concern a datagram, not the socket, and that the Transport went on
	// after: on a connected UDP socket, ICMP port or host unreachable
	// errors for datagrams sent earlier (ECONNREFUSED, EHOSTUNREACH).
	ReadErrorsIgnored uint64
	// TokensReplayed counts Initial packets starting a connection whose
	// NEW_TOKEN token was refused as used before
	// (Transport.TokenReplayGuard).
	TokensReplayed uint64
	// PacketsDropped counts datagrams the Transport dropped before any
	// connection processed them, and packets connections discarded, by
	// reason. Only reasons seen are present.
	PacketsDropped map[PacketDropReason]uint64
	// ConnectionsOpen is the number of connections that have not ended,
	// including those in the closing or draining state (RFC 9000,
	// Section 10.2), which keep only their connection IDs and
	// CONNECTION_CLOSE datagram.
	ConnectionsOpen int64
	// StreamsOpen is the number of streams of these connections not yet
	// finished in both directions.
	StreamsOpen int64
	// Migrations counts the moves of connections to another network path
	// (RFC 9000, Section 9): a server following a client's new address or
	// a client moving.
	Migrations uint64
	// PacketsLost counts the packets connections declared lost
	// (RFC 9002, Section 6) and BytesLost their sizes.
	PacketsLost, BytesLost uint64
}

// transportCounters are the atomic counters behind TransportStats.
type transportCounters struct {
	handshakesStarted, handshakesCompleted, handshakesFailed atomic.Uint64
	zeroRTTAccepted, zeroRTTRejected                         atomic.Uint64
	retriesSent, resetsSent, versionNegotiationsSent         atomic.Uint64
	tokensReplayed, readErrors, receiveDrops                 atomic.Uint64
	dropped                                                  [len(dropReasons)]atomic.Uint64
	fleetCounters                                            // stats_fleet.go
}

// countDrop counts a dropped datagram or packet.
func (t *transportCounters) countDrop(r PacketDropReason) {
	t.dropped[dropIndex(r)].Add(1)
}

// dropIndex returns the index of r in dropReasons.
func dropIndex(r PacketDropReason) int {
	for i, d := range dropReasons {
		if d == r {
			return i
		}
	}
	return dropIndex(DropInvalid)
}

// Stats returns the Transport's counters. It is safe to call from any
// goroutine at any time.
func (t *Transport) Stats() TransportStats {
	s := &t.stats
	ts := TransportStats{
		HandshakesStarted:       s.handshakesStarted.Load(),
		HandshakesCompleted:     s.handshakesCompleted.Load(),
		HandshakesFailed:        s.handshakesFailed.Load(),
		ZeroRTTAccepted:         s.zeroRTTAccepted.Load(),
		ZeroRTTRejected:         s.zeroRTTRejected.Load(),
		RetriesSent:             s.retriesSent.Load(),
		StatelessResetsSent:     s.resetsSent.Load(),
		VersionNegotiationsSent: s.versionNegotiationsSent.Load(),
		TokensReplayed:          s.tokensReplayed.Load(),
		ReadErrorsIgnored:       s.readErrors.Load(),
		ReceiveBufferDrops:      s.receiveDrops.Load(),
		PacketsDropped:          map[PacketDropReason]uint64{},
		ConnectionsOpen:         t.conns.Load(),
	}
	for i, r := range dropReasons {
		if n := s.dropped[i].Load(); n > 0 {
			ts.PacketsDropped[r] = n
		}
	}
	s.fill(&ts)
	return ts
}

// countHandshake counts a connection's handshake outcome when it completes
// (done) or the connection ends before (!done).
func (t *Transport) countHandshake(done bool, st *connState) {
	if !done {
		t.stats.handshakesFailed.Add(1)
		return
	}
	t.stats.handshakesCompleted.Add(1)
	if offered0RTT(st) {
		t.stats.zeroRTTOffered.Add(1)
		if st.used0RTT {
			t.stats.zeroRTTAccepted.Add(1)
		} else {
			t.stats.zeroRTTRejected.Add(1)
		}
	}
}
