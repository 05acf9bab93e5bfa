package cli

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
)

// Handshake is what a program learns about one connection's handshake.
type Handshake struct {
	quic.HandshakeInfo
	// Duration is from the connection's start to the handshake's
	// completion.
	Duration time.Duration
}

// String describes the handshake: "QUIC v1, TLS_AES_128_GCM_SHA256,
// ALPN h3, handshake 2.1 ms, resumed: no, 0-RTT: no".
func (h Handshake) String() string {
	return "QUIC " + h.Version.String() + ", " + tls.CipherSuiteName(h.CipherSuite) + ", ALPN " + h.ALPN +
		", handshake " + Ms(h.Duration) + ", resumed: " + YesNo(h.Resumed) + ", 0-RTT: " + YesNo(h.Used0RTT)
}

// Handshakes collects the handshakes of the connections whose Config
// Tracer hook it made; it is how programs learn about connections that a
// library (http3.Transport) dials for them.
type Handshakes struct {
	mu   sync.Mutex
	list []Handshake
	done chan struct{} // closed and replaced at each handshake
}

// Hook returns a Config.Tracer hook that records handshakes and passes
// every event on to the tracer next makes, if next is not nil.
func (h *Handshakes) Hook(next func(context.Context, bool, quic.ConnectionID) *quic.Tracer) func(context.Context, bool, quic.ConnectionID) *quic.Tracer {
	return func(ctx context.Context, isClient bool, odcid quic.ConnectionID) *quic.Tracer {
		var t *quic.Tracer
		if next != nil {
			t = next(ctx, isClient, odcid)
		}
		if t == nil {
			t = &quic.Tracer{}
		}
		var start time.Time
		started, completed := t.ConnectionStarted, t.HandshakeComplete
		t.ConnectionStarted = func(local, remote net.Addr, v wire.Version, src, dst quic.ConnectionID) {
			start = time.Now()
			if started != nil {
				started(local, remote, v, src, dst)
			}
		}
		t.HandshakeComplete = func(info quic.HandshakeInfo) {
			h.add(Handshake{HandshakeInfo: info, Duration: time.Since(start)})
			if completed != nil {
				completed(info)
			}
		}
		return t
	}
}

func (h *Handshakes) add(hs Handshake) {
	h.mu.Lock()
	h.list = append(h.list, hs)
	if h.done != nil {
		close(h.done)
		h.done = nil
	}
	h.mu.Unlock()
}

// List returns the handshakes recorded so far, in completion order.
func (h *Handshakes) List() []Handshake {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Handshake(nil), h.list...)
}

// Wait waits until at least n handshakes completed or ctx is done, and
// returns the list.
func (h *Handshakes) Wait(ctx context.Context, n int) []Handshake {
	for {
		h.mu.Lock()
		if len(h.list) >= n {
			l := append([]Handshake(nil), h.list...)
			h.mu.Unlock()
			return l
		}
		if h.done == nil {
			h.done = make(chan struct{})
		}
		done := h.done
		h.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return h.List()
		}
	}
}

// Ms formats a duration in milliseconds: "12.3 ms".
func Ms(d time.Duration) string {
	return formatFloat(float64(d)/float64(time.Millisecond)) + " ms"
}

// YesNo formats a bool.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
