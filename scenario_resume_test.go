package quic

import (
	"crypto/tls"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// countingCache is a tls.ClientSessionCache that counts stored sessions.
type countingCache struct {
	tls.ClientSessionCache
	mu   sync.Mutex
	puts int
}

func (c *countingCache) Put(key string, cs *tls.ClientSessionState) {
	c.mu.Lock()
	c.puts++
	c.mu.Unlock()
	c.ClientSessionCache.Put(key, cs)
}

func (c *countingCache) stored() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.puts
}

// resumeTLS returns client and server TLS configurations where the client
// keeps sessions in a cache.
func resumeTLS(t testing.TB) (ctls, stls *tls.Config, cache *countingCache) {
	ctls, stls = testTLS(t)
	cache = &countingCache{ClientSessionCache: tls.NewLRUClientSessionCache(8)}
	ctls.ClientSessionCache = cache
	return ctls, stls, cache
}

// primeSession runs a first connection so that the client's cache holds a
// session ticket from the server.
func primeSession(t testing.TB, ctls, stls *tls.Config, cache *countingCache, serverCfg *Config) {
	t.Helper()
	before := cache.stored()
	p := newSimPairOpts(t, testLink, 40, simPairOpts{server: serverCfg, ctls: ctls, stls: stls})
	p.run(t, 5*time.Second, func() bool { return p.confirmed() && cache.stored() > before })
	if p.client.c.tls.ConnectionState().DidResume {
		t.Fatal("first connection resumed")
	}
}

// RFC 9001, Section 4.5: "QUIC can use the session resumption feature of
// TLS 1.3 ... by carrying NewSessionTicket messages in CRYPTO frames after
// the handshake is complete."
func TestSimResumption(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	primeSession(t, ctls, stls, cache, nil)
	p := newSimPairOpts(t, testLink, 41, simPairOpts{ctls: ctls, stls: stls})
	// A full handshake's server flight carries the certificate chain
	// (several hundred bytes of Handshake CRYPTO data); a resumed one
	// does not.
	hsCrypto := 0
	p.client.c.onFrame = func(space ackhandler.Space, f *wire.Frame) {
		if space == ackhandler.SpaceHandshake && f.Type == wire.FrameTypeCrypto {
			hsCrypto = max(hsCrypto, int(f.Crypto.Offset)+len(f.Crypto.Data))
		}
	}
	p.connect(t)
	if hsCrypto == 0 || hsCrypto > 200 {
		t.Errorf("server sent %d bytes of Handshake CRYPTO data in a resumed handshake", hsCrypto)
	}
	for _, c := range []*connState{p.client.c, p.server.c} {
		st := c.tls.ConnectionState()
		if !st.DidResume {
			t.Errorf("%v: session not resumed", c.role)
		}
		if c.used0RTT {
			t.Errorf("%v used 0-RTT without asking", c.role)
		}
	}
}

// earlyExchange runs a resumed connection whose client writes a request on
// a stream before the handshake, and returns the pair, the server's
// stream and what it read once the handshake is confirmed.
func earlyExchange(t *testing.T, p *simPair, request []byte) (*stream, []byte, int) {
	t.Helper()
	c := p.client.c
	s, _, err := c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream before the handshake: %v %v", s, err)
	}
	if n := simWrite(s, request); n != len(request) {
		t.Fatalf("wrote %d of %d bytes", n, len(request))
	}
	s.closeWrite()
	zeroRTTSent := 0
	p.client.dropOut = func(_ time.Time, d []byte) bool {
		if hasPacketType(d, wire.PacketType0RTT) {
			zeroRTTSent++
		}
		return false
	}
	var srv *stream
	var got []byte
	buf := make([]byte, 64<<10)
	p.run(t, 10*time.Second, func() bool {
		if srv == nil && p.server.c != nil {
			srv, _, _ = p.server.c.streams.acceptStream(true)
		}
		if srv != nil {
			n, _ := simRead(srv, buf)
			got = append(got, buf[:n]...)
		}
		return p.confirmed() && len(got) == len(request)
	})
	return srv, got, zeroRTTSent
}

func earlyRequest() []byte {
	b := make([]byte, 5000)
	for i := range b {
		b[i] = byte(i * 31)
	}
	return b
}

// RFC 9001, Section 4.6.1: a client resuming a session that allows it
// sends data in 0-RTT packets; the server accepts and processes it.
func TestSim0RTTAccepted(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	srvCfg := &Config{Allow0RTT: true}
	primeSession(t, ctls, stls, cache, srvCfg)
	p := newSimPairOpts(t, testLink, 42, simPairOpts{server: srvCfg, ctls: ctls, stls: stls, early: true})
	if p.client.c.zeroRTTSeal == nil {
		t.Fatal("client installed no 0-RTT keys")
	}
	req := earlyRequest()
	var firstStreamAt time.Duration
	p.server.dropIn = nil
	srv, got, sent0RTT := func() (*stream, []byte, int) {
		start := p.sim.Now()
		p.server.dropIn = func(now time.Time, d *netsim.Datagram) bool {
			if firstStreamAt == 0 && hasPacketType(d.Payload, wire.PacketType0RTT) {
				firstStreamAt = now.Sub(start) + time.Nanosecond
			}
			return false
		}
		return earlyExchange(t, p, req)
	}()
	if string(got) != string(req) {
		t.Fatal("request corrupted")
	}
	if sent0RTT == 0 || firstStreamAt == 0 {
		t.Fatal("no 0-RTT packet was sent")
	}
	if !srv.receivedEarlyData() {
		t.Error("server stream does not report 0-RTT data")
	}
	if !p.client.c.used0RTT || !p.server.c.used0RTT {
		t.Errorf("used0RTT: client %v, server %v", p.client.c.used0RTT, p.server.c.used0RTT)
	}
	if !p.client.c.tls.ConnectionState().DidResume {
		t.Error("not resumed")
	}
}

// RFC 9001, Section 4.6.2: a server that declines 0-RTT discards it; the
// client sends the data again in 1-RTT packets.
func TestSim0RTTRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second *Config
	}{
		{"Allow0RTT off", &Config{}},
		// RFC 9000, Section 7.4.1: a server whose limits shrank below the
		// remembered ones must reject 0-RTT.
		{"limits shrank", &Config{Allow0RTT: true, InitialStreamReceiveWindow: 64 << 10, InitialConnectionReceiveWindow: 128 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctls, stls, cache := resumeTLS(t)
			primeSession(t, ctls, stls, cache, &Config{Allow0RTT: true})
			p := newSimPairOpts(t, testLink, 43, simPairOpts{server: tc.second, ctls: ctls, stls: stls, early: true})
			if p.client.c.zeroRTTSeal == nil {
				t.Fatal("client installed no 0-RTT keys")
			}
			req := earlyRequest()
			srv, got, sent0RTT := earlyExchange(t, p, req)
			if string(got) != string(req) {
				t.Fatal("request corrupted")
			}
			if sent0RTT == 0 {
				t.Fatal("no 0-RTT packet was sent")
			}
			if srv.receivedEarlyData() {
				t.Error("server stream reports 0-RTT data after rejecting it")
			}
			if p.client.c.used0RTT || p.server.c.used0RTT {
				t.Errorf("used0RTT: client %v, server %v", p.client.c.used0RTT, p.server.c.used0RTT)
			}
			if !p.client.c.tls.ConnectionState().DidResume {
				t.Error("not resumed")
			}
			if c := p.client.c; c.closeState != stateActive {
				t.Fatalf("client closed: %v", c.closeErr)
			}
			// Both ends count the handshake as one whose 0-RTT was
			// rejected (Transport.Stats).
			var tr Transport
			tr.countHandshake(true, p.client.c)
			tr.countHandshake(true, p.server.c)
			if s := tr.Stats(); s.ZeroRTTRejected != 2 || s.ZeroRTTAccepted != 0 || s.HandshakesCompleted != 2 {
				t.Errorf("stats %+v, want 2 handshakes with 0-RTT rejected", s)
			}
		})
	}
}
