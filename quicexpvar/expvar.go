// Package quicexpvar publishes the statistics of a quic.Transport through
// the standard library's expvar package, so that an operator can read
// them over HTTP (expvar serves every published variable as JSON at
// /debug/vars on http.DefaultServeMux, or wherever expvar.Handler is
// mounted) without any dependency beyond the standard library.
//
//	t := &quic.Transport{Conn: udpConn}
//	quicexpvar.Publish("quic", t)
//	// GET /debug/vars -> {"quic": {"HandshakesStarted": 12, ...}, ...}
//
// It is a package of its own so that importing package quic does not
// import expvar, which registers a handler on http.DefaultServeMux.
package quicexpvar

import (
	"expvar"

	"github.com/quicstack/quic"
)

// Func returns an expvar.Func whose value is t.Stats(), read each time
// the variable is served.
func Func(t *quic.Transport) expvar.Func {
	return func() any { return t.Stats() }
}

// Publish publishes t's statistics as the expvar variable name. Like
// expvar.Publish, it panics if name is already published.
func Publish(name string, t *quic.Transport) {
	expvar.Publish(name, Func(t))
}
