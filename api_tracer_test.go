package quic

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicstack/quic/wire"
)

// Config.Tracer sees every packet, the handshake and the close, on both
// sides.
func TestSynctestTracer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type counts struct {
			sent, received, oneRTTSent, handshakes, closes, done atomic.Int64
			closeErr                                             atomic.Value
		}
		newTracer := func(c *counts) *Tracer {
			return &Tracer{
				PacketSent: func(p PacketInfo) {
					c.sent.Add(1)
					if p.Type == wire.PacketType1RTT {
						c.oneRTTSent.Add(1)
					}
				},
				PacketReceived:    func(p PacketInfo) { c.received.Add(1) },
				HandshakeComplete: func(HandshakeInfo) { c.handshakes.Add(1) },
				ConnectionClosed:  func(err error) { c.closes.Add(1); c.closeErr.Store(err) },
				Done:              func() { c.done.Add(1) },
			}
		}
		var cc, sc counts
		hook := func(c *counts) func(context.Context, bool, ConnectionID) *Tracer {
			return func(context.Context, bool, ConnectionID) *Tracer { return newTracer(c) }
		}
		p := newConnPair(t, connPairOpts{Mem: true, Client: &Config{Tracer: hook(&cc)}, Server: &Config{Tracer: hook(&sc)}})
		s, err := p.client.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			s.Write(make([]byte, 50000))
			s.CloseWrite()
		}()
		ss, err := p.server.AcceptStream(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, ss); err != nil || n != 50000 {
			t.Fatalf("copy: %d, %v", n, err)
		}
		p.client.CloseWithError(7, "done")
		time.Sleep(10 * time.Second)
		for name, c := range map[string]*counts{"client": &cc, "server": &sc} {
			if c.handshakes.Load() != 1 || c.closes.Load() != 1 || c.done.Load() != 1 {
				t.Errorf("%s: %d handshakes, %d closes, %d ends reported; want 1, 1 and 1", name, c.handshakes.Load(), c.closes.Load(), c.done.Load())
			}
			if c.sent.Load() < 10 || c.received.Load() < 10 || c.oneRTTSent.Load() == 0 {
				t.Errorf("%s: %d packets sent (%d 1-RTT), %d received", name, c.sent.Load(), c.oneRTTSent.Load(), c.received.Load())
			}
		}
		var ae *ApplicationError
		if err, _ := sc.closeErr.Load().(error); !errors.As(err, &ae) || ae.Code != 7 || !ae.Remote {
			t.Errorf("server tracer saw close %v", sc.closeErr.Load())
		}
	})
}
