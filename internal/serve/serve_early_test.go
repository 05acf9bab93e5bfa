package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/wire"
)

// handshakeDropRelay relays UDP datagrams between a client and a server.
// With drop set, it drops the client's datagrams that carry a Handshake
// packet (its Finished is in one), so that the server's handshake never
// completes, while Initial, 0-RTT and 1-RTT packets pass. While hold is
// set it also keeps the server's datagrams until release, so that the
// client sends its request in 0-RTT however late its goroutines run: with
// the server's flight in hand it would send it in 1-RTT, which the server
// cannot read before the client's Finished.
type handshakeDropRelay struct {
	pc       net.PacketConn
	drop     atomic.Bool
	mu       sync.Mutex
	client   net.Addr
	hold     bool
	held     [][]byte
	toServer net.PacketConn
}

func newHandshakeDropRelay(t *testing.T, server net.Addr) *handshakeDropRelay {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &handshakeDropRelay{pc: pc, toServer: up}
	t.Cleanup(func() { pc.Close(); up.Close() })
	go func() { // client -> server
		b := make([]byte, 65536)
		for {
			n, addr, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.client = addr
			r.mu.Unlock()
			if r.drop.Load() && hasHandshakePacket(b[:n]) {
				continue
			}
			up.WriteTo(b[:n], server)
		}
	}()
	go func() { // server -> client
		b := make([]byte, 65536)
		for {
			n, _, err := up.ReadFrom(b)
			if err != nil {
				return
			}
			r.mu.Lock()
			if r.hold {
				r.held = append(r.held, bytes.Clone(b[:n]))
				r.mu.Unlock()
				continue
			}
			c := r.client
			r.mu.Unlock()
			pc.WriteTo(b[:n], c)
		}
	}()
	return r
}

// holdServer makes the relay keep the server's datagrams until release.
func (r *handshakeDropRelay) holdServer() {
	r.mu.Lock()
	r.hold = true
	r.mu.Unlock()
}

// release sends the held datagrams to the client, and those after them
// at once.
func (r *handshakeDropRelay) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.held {
		r.pc.WriteTo(d, r.client)
	}
	r.held, r.hold = nil, false
}

// hasHandshakePacket reports whether datagram d holds a Handshake packet
// among its coalesced long-header packets (RFC 9000, Section 12.2).
func hasHandshakePacket(d []byte) bool {
	for len(d) > 0 && wire.IsLongHeader(d[0]) {
		h, n, err := wire.ParseLongHeader(d)
		if err != nil {
			return false
		}
		if h.Type == wire.PacketTypeHandshake {
			return true
		}
		d = d[n+int(h.Length):]
	}
	return false
}

// requestIn0RTT returns a quic.Config whose connections close ch when
// they receive a 0-RTT packet with data of stream 0, the client's first
// request stream.
func requestIn0RTT(ch chan struct{}) *quic.Config {
	var once sync.Once
	return &quic.Config{
		HandshakeIdleTimeout: 30 * time.Second,
		Tracer: func(context.Context, bool, quic.ConnectionID) *quic.Tracer {
			return &quic.Tracer{PacketReceived: func(p quic.PacketInfo) {
				if p.Type != wire.PacketType0RTT {
					return
				}
				for b := p.Payload; len(b) > 0; {
					var f wire.Frame
					n, err := wire.ParseFrame(b, &f, 0)
					if err != nil || n == 0 {
						return
					}
					if f.Type.IsStream() && f.Stream.StreamID == 0 {
						once.Do(func() { close(ch) })
					}
					b = b[n:]
				}
			}}
		},
	}
}

// A GET sent in 0-RTT is answered before the client's handshake
// completes: the server accepts connections early (ListenEarly). Through
// a relay that keeps the client's Finished from the server, the response
// still arrives; a server that waited for the handshake would never
// answer.
func TestZeroRTTServedBeforeHandshake(t *testing.T) {
	cert, pool, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	requested := make(chan struct{})
	s, err := Start(Options{Addr: "127.0.0.1:0", Cert: cert, Config: requestIn0RTT(requested)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cache := &notifyingCache{ClientSessionCache: tls.NewLRUClientSessionCache(4), put: make(chan struct{}, 1)}
	ctls := &tls.Config{RootCAs: pool, ServerName: "localhost", ClientSessionCache: cache}
	relay := newHandshakeDropRelay(t, s.Addr)
	get := func(tr *http3.Transport) (string, error) {
		defer tr.Close()
		c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		resp, err := c.Get("https://" + relay.pc.LocalAddr().String() + "/bytes/5")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if tr.Allow0RTT {
			return string(b), err
		}
		// The session ticket may come after the response: closing the
		// connection before it did would leave nothing to resume.
		select {
		case <-cache.put:
		case <-time.After(20 * time.Second):
			t.Fatal("no session ticket")
		}
		return string(b), err
	}
	quicConf := &quic.Config{HandshakeIdleTimeout: 30 * time.Second}
	if body, err := get(&http3.Transport{TLSClientConfig: ctls, QUICConfig: quicConf}); err != nil || body != "abcde" {
		t.Fatalf("first request: %q, %v", body, err)
	}
	relay.drop.Store(true)
	relay.holdServer()
	go func() {
		<-requested
		relay.release()
	}()
	body, err := get(&http3.Transport{TLSClientConfig: ctls, QUICConfig: quicConf, Allow0RTT: true})
	if err != nil || body != "abcde" {
		t.Fatalf("0-RTT request whose handshake cannot complete: %q, %v", body, err)
	}
}

// notifyingCache signals each session stored.
type notifyingCache struct {
	tls.ClientSessionCache
	put chan struct{}
}

func (c *notifyingCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.put <- struct{}{}:
		default:
		}
	}
}
