// Package prometheus exports the statistics of quic.Transports to
// Prometheus (github.com/prometheus/client_golang). It is a module of its
// own, so that the quic module does not depend on the Prometheus client.
//
//	t := &quic.Transport{Conn: udpConn}
//	prometheus.MustRegister(quicprom.NewCollector(t.Stats, quicprom.Opts{}))
//	http.Handle("/metrics", promhttp.Handler())
//
// For an http3.Server pass its Stats method, which sums the statistics of
// the Transports it serves. The metrics (with the default namespace
// "quic"):
//
//	quic_handshakes_started_total, _completed_total, _failed_total   counters
//	quic_handshake_duration_seconds                                  histogram
//	quic_handshakes_by_version_total{version}                        counter
//	quic_handshakes_by_cipher_suite_total{cipher_suite}              counter
//	quic_handshakes_by_key_exchange_total{group}                     counter
//	quic_resumptions_offered_total, _accepted_total                  counters
//	quic_zero_rtt_offered_total, _accepted_total, _rejected_total    counters
//	quic_retries_sent_total, quic_stateless_resets_sent_total,
//	quic_version_negotiations_sent_total, quic_migrations_total      counters
//	quic_receive_buffer_drops_total, quic_read_errors_ignored_total,
//	quic_tokens_replayed_total                                       counters
//	quic_lost_packets_total, quic_lost_bytes_total                   counters
//	quic_dropped_packets_total{reason}                               counter
//	quic_anti_replay_checks_total{outcome}                           counter
//	quic_connections_open, quic_streams_open                         gauges
package prometheus

import (
	"crypto/tls"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quicstack/quic"
)

// Opts configures a Collector.
type Opts struct {
	// Namespace prefixes every metric name. Default "quic".
	Namespace string
	// ConstLabels are added to every metric, for example to tell apart
	// the Transports of one process: {"socket": "public"}.
	ConstLabels prometheus.Labels
}

// A Collector is a prometheus.Collector of one source of
// quic.TransportStats. It reads the statistics once per scrape; it is
// safe for concurrent use.
type Collector struct {
	stats    func() quic.TransportStats
	counters []counter
	hist     *prometheus.Desc
	version  *prometheus.Desc
	suite    *prometheus.Desc
	group    *prometheus.Desc
	dropped  *prometheus.Desc
	replay   *prometheus.Desc
	conns    *prometheus.Desc
	streams  *prometheus.Desc
}

// counter is a plain counter of TransportStats.
type counter struct {
	desc  *prometheus.Desc
	value func(*quic.TransportStats) uint64
}

// NewCollector returns a Collector of the statistics stats returns: a
// quic.Transport's Stats method, or an http3.Server's.
func NewCollector(stats func() quic.TransportStats, o Opts) *Collector {
	ns := o.Namespace
	if ns == "" {
		ns = "quic"
	}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "", name), help, labels, o.ConstLabels)
	}
	c := &Collector{
		stats:   stats,
		hist:    desc("handshake_duration_seconds", "Duration of the completed handshakes, from the connection's start to the handshake's completion."),
		version: desc("handshakes_by_version_total", "Completed handshakes by QUIC version.", "version"),
		suite:   desc("handshakes_by_cipher_suite_total", "Completed handshakes by TLS cipher suite.", "cipher_suite"),
		group:   desc("handshakes_by_key_exchange_total", "Completed handshakes by TLS key exchange group (none: resumed without a key exchange).", "group"),
		dropped: desc("dropped_packets_total", "Datagrams and packets dropped, by reason.", "reason"),
		replay:  desc("anti_replay_checks_total", "0-RTT anti-replay checks by outcome: admitted, replayed, too_old, failed (store error or timeout).", "outcome"),
		conns:   desc("connections_open", "Connections not ended, those closing or draining included."),
		streams: desc("streams_open", "Streams not finished in both directions."),
	}
	add := func(name, help string, v func(*quic.TransportStats) uint64) {
		c.counters = append(c.counters, counter{desc(name, help), v})
	}
	add("handshakes_started_total", "Connections started, dialed or accepted.", func(s *quic.TransportStats) uint64 { return s.HandshakesStarted })
	add("handshakes_completed_total", "Handshakes completed.", func(s *quic.TransportStats) uint64 { return s.HandshakesCompleted })
	add("handshakes_failed_total", "Connections that ended before their handshake completed.", func(s *quic.TransportStats) uint64 { return s.HandshakesFailed })
	add("resumptions_offered_total", "Completed handshakes in which the client tried to resume a TLS session.", func(s *quic.TransportStats) uint64 { return s.ResumptionOffered })
	add("resumptions_accepted_total", "Completed handshakes that resumed a TLS session.", func(s *quic.TransportStats) uint64 { return s.ResumptionAccepted })
	add("zero_rtt_offered_total", "Completed handshakes in which 0-RTT was offered.", func(s *quic.TransportStats) uint64 { return s.ZeroRTTOffered })
	add("zero_rtt_accepted_total", "Completed handshakes in which 0-RTT was accepted.", func(s *quic.TransportStats) uint64 { return s.ZeroRTTAccepted })
	add("zero_rtt_rejected_total", "Completed handshakes in which 0-RTT was offered and declined.", func(s *quic.TransportStats) uint64 { return s.ZeroRTTRejected })
	add("retries_sent_total", "Retry packets sent.", func(s *quic.TransportStats) uint64 { return s.RetriesSent })
	add("stateless_resets_sent_total", "Stateless resets sent.", func(s *quic.TransportStats) uint64 { return s.StatelessResetsSent })
	add("version_negotiations_sent_total", "Version Negotiation packets sent.", func(s *quic.TransportStats) uint64 { return s.VersionNegotiationsSent })
	add("receive_buffer_drops_total", "Datagrams the kernel dropped for a full socket receive buffer (Linux).", func(s *quic.TransportStats) uint64 { return s.ReceiveBufferDrops })
	add("read_errors_ignored_total", "Socket read errors about one datagram (ICMP unreachable) that the Transport went on after.", func(s *quic.TransportStats) uint64 { return s.ReadErrorsIgnored })
	add("tokens_replayed_total", "Initial packets whose NEW_TOKEN token was refused as used before.", func(s *quic.TransportStats) uint64 { return s.TokensReplayed })
	add("migrations_total", "Moves of connections to another network path.", func(s *quic.TransportStats) uint64 { return s.Migrations })
	add("lost_packets_total", "Packets declared lost.", func(s *quic.TransportStats) uint64 { return s.PacketsLost })
	add("lost_bytes_total", "Bytes of the packets declared lost.", func(s *quic.TransportStats) uint64 { return s.BytesLost })
	return c
}

// Describe sends the descriptors of every metric of c.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, k := range c.counters {
		ch <- k.desc
	}
	for _, d := range []*prometheus.Desc{c.hist, c.version, c.suite, c.group, c.dropped, c.replay, c.conns, c.streams} {
		ch <- d
	}
}

// Collect reads the statistics and sends every metric.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, k := range c.counters {
		ch <- prometheus.MustNewConstMetric(k.desc, prometheus.CounterValue, float64(k.value(&s)))
	}
	h := s.HandshakeDuration
	buckets := make(map[float64]uint64, len(h.Bounds))
	for i, b := range h.Bounds {
		if i < len(h.Cumulative) {
			buckets[b.Seconds()] = h.Cumulative[i]
		}
	}
	ch <- prometheus.MustNewConstHistogram(c.hist, h.Count, h.Sum.Seconds(), buckets)
	for v, n := range s.Versions {
		ch <- prometheus.MustNewConstMetric(c.version, prometheus.CounterValue, float64(n), v.String())
	}
	for cs, n := range s.CipherSuites {
		ch <- prometheus.MustNewConstMetric(c.suite, prometheus.CounterValue, float64(n), tls.CipherSuiteName(cs))
	}
	for g, n := range s.KeyExchanges {
		name := g.String()
		if g == 0 {
			name = "none"
		}
		ch <- prometheus.MustNewConstMetric(c.group, prometheus.CounterValue, float64(n), name)
	}
	for r, n := range s.PacketsDropped {
		ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(n), string(r))
	}
	for outcome, n := range map[string]uint64{"admitted": s.AntiReplayAdmitted, "replayed": s.AntiReplayReplayed,
		"too_old": s.AntiReplayTooOld, "failed": s.AntiReplayFailures} {
		ch <- prometheus.MustNewConstMetric(c.replay, prometheus.CounterValue, float64(n), outcome)
	}
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.ConnectionsOpen))
	ch <- prometheus.MustNewConstMetric(c.streams, prometheus.GaugeValue, float64(s.StreamsOpen))
}
