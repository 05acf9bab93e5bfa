package http3

import (
	"net/http"
	"sync/atomic"
)

// AutoStats are an AutoTransport's counters since it was made.
type AutoStats struct {
	// HTTP3Responses, HTTP2Responses and HTTP1Responses count the
	// responses by the protocol that carried them (Response.Proto).
	HTTP3Responses, HTTP2Responses, HTTP1Responses uint64

	// QUICAttempts counts the QUIC connections dialed, QUICFailures
	// those whose handshake failed or timed out.
	QUICAttempts, QUICFailures uint64
	// TCPDials counts the TCP+TLS connections dialed.
	TCPDials uint64
	// TCPPredialsStale counts the connections dialed ahead for a race
	// that the server had closed before a request took them: they were
	// dropped, and the request got a connection of its own.
	TCPPredialsStale uint64
	// TCPPredialRetries counts the requests sent again because they
	// failed as the first on a connection dialed ahead (see
	// AutoTransport, Racing).
	TCPPredialRetries uint64

	// Races counts the requests that connected over TCP because the QUIC
	// handshake had not completed after RaceDelay (or at once, after a
	// failure); QUICWins and TCPWins count who completed first.
	Races, QUICWins, TCPWins uint64

	// Fallbacks counts the requests that went over TCP after their QUIC
	// connection failed or stopped answering.
	Fallbacks uint64
	// Stalls counts the HTTP/3 connections closed because nothing came
	// back after a request (the path died).
	Stalls uint64
	// BrokenMarks counts the alternatives marked broken; BrokenSkips the
	// requests that went over TCP at once because the origin's
	// alternatives were marked broken.
	BrokenMarks, BrokenSkips uint64

	// AltSvcUpdates counts the Alt-Svc fields applied ("clear"
	// included); AltSvcIgnored those ignored: malformed, oversized, or
	// received over a connection whose server was not authenticated.
	AltSvcUpdates, AltSvcIgnored uint64
	// HTTPSLookups counts the DNS HTTPS record lookups, and
	// HTTPSLookupErrors those that failed.
	HTTPSLookups, HTTPSLookupErrors uint64

	// AltSvcOrigins is the number of origins in the alternative-service
	// cache now.
	AltSvcOrigins int
}

// autoCounters are the counters behind AutoStats.
type autoCounters struct {
	h3, h2, h1                      atomic.Uint64
	quicAttempts, quicFailures      atomic.Uint64
	tcpDials, tcpPredialsStale      atomic.Uint64
	tcpPredialRetries               atomic.Uint64
	races, quicWins, tcpWins        atomic.Uint64
	fallbacks, stalls               atomic.Uint64
	brokenMarks, brokenSkips        atomic.Uint64
	altSvcUpdates, altSvcIgnored    atomic.Uint64
	httpsLookups, httpsLookupErrors atomic.Uint64
}

func (c *autoCounters) countResponse(resp *http.Response) {
	switch resp.ProtoMajor {
	case 3:
		c.h3.Add(1)
	case 2:
		c.h2.Add(1)
	default:
		c.h1.Add(1)
	}
}

// Stats returns the transport's counters. It may be called at any time
// from any goroutine.
func (t *AutoTransport) Stats() AutoStats {
	if t.init() != nil {
		return AutoStats{}
	}
	c := &t.stats
	return AutoStats{
		HTTP3Responses: c.h3.Load(), HTTP2Responses: c.h2.Load(), HTTP1Responses: c.h1.Load(),
		QUICAttempts: c.quicAttempts.Load(), QUICFailures: c.quicFailures.Load(), TCPDials: c.tcpDials.Load(),
		TCPPredialsStale: c.tcpPredialsStale.Load(), TCPPredialRetries: c.tcpPredialRetries.Load(),
		Races: c.races.Load(), QUICWins: c.quicWins.Load(), TCPWins: c.tcpWins.Load(),
		Fallbacks: c.fallbacks.Load(), Stalls: c.stalls.Load(),
		BrokenMarks: c.brokenMarks.Load(), BrokenSkips: c.brokenSkips.Load(),
		AltSvcUpdates: c.altSvcUpdates.Load(), AltSvcIgnored: c.altSvcIgnored.Load(),
		HTTPSLookups: c.httpsLookups.Load(), HTTPSLookupErrors: c.httpsLookupErrors.Load(),
		AltSvcOrigins: t.cache.len(),
	}
}
