package main

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/quicstack/quic"
)

// stats are the proxy's counters, served as JSON by -stats.
type stats struct {
	mu       sync.Mutex
	requests map[string]uint64 // by protocol ("HTTP/3.0", "HTTP/2.0", "HTTP/1.1")
	statuses map[string]uint64 // by class ("2xx", ...)
	bytesOut atomic.Uint64     // response bodies to clients

	early            atomic.Uint64 // requests received in 0-RTT
	tooEarlyRetried  atomic.Uint64 // 425 from the backend, sent again after the handshake
	tooEarlyReturned atomic.Uint64 // 425 from the backend passed to the client
	backendErrors    atomic.Uint64 // backend unreachable or failing (502)
	badBodies        atomic.Uint64 // bodies not matching their Content-Length (400)

	quic *quic.Transport // the HTTP/3 side's QUIC statistics
}

func newStats() *stats {
	return &stats{requests: map[string]uint64{}, statuses: map[string]uint64{}}
}

func (s *stats) count(proto string, status int, n int64) {
	s.mu.Lock()
	s.requests[proto]++
	s.statuses[string(rune('0'+status/100))+"xx"]++
	s.mu.Unlock()
	s.bytesOut.Add(uint64(n))
}

// statsJSON is what -stats serves.
type statsJSON struct {
	Requests         map[string]uint64 `json:"requests"`
	Statuses         map[string]uint64 `json:"statuses"`
	BytesOut         uint64            `json:"bytes_to_clients"`
	Early            uint64            `json:"early_data_requests"`
	TooEarlyRetried  uint64            `json:"too_early_retried"`
	TooEarlyReturned uint64            `json:"too_early_returned"`
	BackendErrors    uint64            `json:"backend_errors"`
	BadBodies        uint64            `json:"bad_bodies"`
	QUIC             any               `json:"quic,omitempty"`
}

func (s *stats) snapshot() statsJSON {
	s.mu.Lock()
	out := statsJSON{Requests: map[string]uint64{}, Statuses: map[string]uint64{}}
	for k, v := range s.requests {
		out.Requests[k] = v
	}
	for k, v := range s.statuses {
		out.Statuses[k] = v
	}
	s.mu.Unlock()
	out.BytesOut = s.bytesOut.Load()
	out.Early, out.TooEarlyRetried, out.TooEarlyReturned = s.early.Load(), s.tooEarlyRetried.Load(), s.tooEarlyReturned.Load()
	out.BackendErrors, out.BadBodies = s.backendErrors.Load(), s.badBodies.Load()
	if s.quic != nil {
		out.QUIC = s.quic.Stats()
	}
	return out
}

// ServeHTTP serves the statistics as JSON.
func (s *stats) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(s.snapshot())
}
