// Package quicexpvar publishes the statistics of a quic.Transport through
// the standard library's expvar package, so that an operator can read
// them over HTTP (expvar serves every published variable as JSON at
// /debug/vars on http.DefaultServeMux, or wherever expvar.Handler is
// mounted) without any dependency beyond the standard library.
//
//	t := &quic.Transport{Conn: udpConn}
//	quicexpvar.Publish("quic", t)
//	// GET /debug/vars -> {"quic": {"HandshakesStarted": 12, ...,
//	//   "Versions": {"v1": 3, "v2": 9}, "CipherSuites": {"TLS_AES_128_GCM_SHA256": 12},
//	//   "KeyExchanges": {"X25519MLKEM768": 12}, ...}, ...}
//
// It is a package of its own so that importing package quic does not
// import expvar, which registers a handler on http.DefaultServeMux.
package quicexpvar

import (
	"crypto/tls"
	"expvar"

	"github.com/quicstack/quic"
)

// Stats is what a published variable holds: a Transport's statistics
// (quic.TransportStats), with the versions, cipher suites and key
// exchange groups named ("v1", "TLS_AES_128_GCM_SHA256", "X25519")
// rather than numbered, for people reading the JSON.
type Stats struct {
	quic.TransportStats
	Versions, CipherSuites, KeyExchanges map[string]uint64
}

// Named returns s with its keyed counts named.
func Named(s quic.TransportStats) Stats {
	n := Stats{TransportStats: s, Versions: map[string]uint64{}, CipherSuites: map[string]uint64{}, KeyExchanges: map[string]uint64{}}
	for v, c := range s.Versions {
		n.Versions[v.String()] += c
	}
	for cs, c := range s.CipherSuites {
		n.CipherSuites[tls.CipherSuiteName(cs)] += c
	}
	for g, c := range s.KeyExchanges {
		n.KeyExchanges[g.String()] += c
	}
	return n
}

// Func returns an expvar.Func whose value is Named(stats()), read each
// time the variable is served. stats is a Transport's Stats method, or
// http3.Server's.
func Func(stats func() quic.TransportStats) expvar.Func {
	return func() any { return Named(stats()) }
}

// Publish publishes t's statistics as the expvar variable name. Like
// expvar.Publish, it panics if name is already published.
func Publish(name string, t *quic.Transport) {
	expvar.Publish(name, Func(t.Stats))
}
