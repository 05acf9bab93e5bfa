package interop

// Helpers of the feature tests (features_*_test.go): resumption, 0-RTT,
// Retry and key update against quic-go and golang.org/x/net/quic.

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
)

// featureTimeout bounds each feature test.
const featureTimeout = 10 * time.Second

// notifyCache is a tls.ClientSessionCache that signals every Put, so that
// a test can wait for the session ticket of a first connection before
// starting the second.
type notifyCache struct {
	tls.ClientSessionCache
	puts chan struct{}
}

func newNotifyCache() *notifyCache {
	return &notifyCache{tls.NewLRUClientSessionCache(8), make(chan struct{}, 16)}
}

func (c *notifyCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.puts <- struct{}{}:
		default:
		}
	}
}

// waitTicket waits for a session ticket to be stored.
func (c *notifyCache) waitTicket(t *testing.T) {
	t.Helper()
	select {
	case <-c.puts:
	case <-time.After(3 * time.Second):
		t.Fatal("no session ticket stored after the first connection")
	}
}

// sniffConn counts the Retry packets written through a server's socket.
type sniffConn struct {
	net.PacketConn
	retries atomic.Int32
}

func (s *sniffConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if isRetry(p) {
		s.retries.Add(1)
	}
	return s.PacketConn.WriteTo(p, addr)
}

// isRetry reports whether datagram d is a Retry packet of QUIC v1 or v2
// (a Retry is never coalesced, so the first header tells).
func isRetry(d []byte) bool {
	if len(d) < 5 || d[0]&0x80 == 0 {
		return false
	}
	typ := d[0] >> 4 & 3
	switch binary.BigEndian.Uint32(d[1:5]) {
	case 1:
		return typ == 3
	case 0x6b3343cf:
		return typ == 0
	}
	return false
}

func loopbackUDP(t *testing.T) *net.UDPConn {
	t.Helper()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	return udp
}

// qlogRecorder collects the quic-go qlog events the tests look at. It is
// its own Trace and Recorder, shared by all connections of a Config.
type qlogRecorder struct {
	mu            sync.Mutex
	keyUpdates    []qlog.KeyUpdated // 1-RTT key updates after the first keys
	zeroRTTRcvd   int               // 0-RTT packets received
	retryReceived int               // Retry packets received
	phaseOneRcvd  int               // 1-RTT packets received with key phase 1
}

func (r *qlogRecorder) tracer() func(context.Context, bool, quicgo.ConnectionID) qlogwriter.Trace {
	return func(context.Context, bool, quicgo.ConnectionID) qlogwriter.Trace { return r }
}

func (r *qlogRecorder) AddProducer() qlogwriter.Recorder { return r }
func (r *qlogRecorder) Close() error                     { return nil }

func (r *qlogRecorder) RecordEvent(ev qlogwriter.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := ev.(type) {
	case qlog.KeyUpdated:
		if (e.KeyType == qlog.KeyTypeClient1RTT || e.KeyType == qlog.KeyTypeServer1RTT) && e.Trigger != qlog.KeyUpdateTLS {
			r.keyUpdates = append(r.keyUpdates, e)
		}
	case qlog.PacketReceived:
		switch e.Header.PacketType {
		case qlog.PacketType0RTT:
			r.zeroRTTRcvd++
		case qlog.PacketTypeRetry:
			r.retryReceived++
		case qlog.PacketType1RTT:
			if e.Header.KeyPhaseBit == qlog.KeyPhaseOne {
				r.phaseOneRcvd++
			}
		}
	}
}

func (r *qlogRecorder) snapshot() (keyUpdates []qlog.KeyUpdated, zeroRTT, retries int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]qlog.KeyUpdated(nil), r.keyUpdates...), r.zeroRTTRcvd, r.retryReceived
}

// packetCounter is an ours.Tracer counting packets by type.
type packetCounter struct {
	mu   sync.Mutex
	sent map[string]int // ack-eliciting packets sent
	rcvd map[string]int
}

func newPacketCounter() *packetCounter {
	return &packetCounter{sent: map[string]int{}, rcvd: map[string]int{}}
}

func (p *packetCounter) tracer() func(context.Context, bool, ours.ConnectionID) *ours.Tracer {
	return func(context.Context, bool, ours.ConnectionID) *ours.Tracer {
		return &ours.Tracer{
			PacketSent: func(pk ours.PacketInfo) {
				if pk.AckEliciting {
					p.mu.Lock()
					p.sent[pk.Type.String()]++
					p.mu.Unlock()
				}
			},
			PacketReceived: func(pk ours.PacketInfo) {
				p.mu.Lock()
				p.rcvd[pk.Type.String()]++
				p.mu.Unlock()
			},
		}
	}
}

func (p *packetCounter) counts(pt wire.PacketType) (sent, rcvd int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent[pt.String()], p.rcvd[pt.String()]
}

// readRequest reads a stream to its FIN.
func readRequest(s io.Reader) ([]byte, error) { return io.ReadAll(s) }
