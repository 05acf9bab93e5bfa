package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic/wire"
)

// A Listener accepts QUIC connections on a Transport.
type Listener struct {
	t            *Transport
	tls          *tls.Config
	config       *Config
	accept       chan *Conn
	closed       chan struct{}
	closeOnce    sync.Once
	handshakes   atomic.Int64
	ownTransport bool
}

// acceptQueueLen bounds connections whose handshake completed but that
// Accept has not returned yet; beyond it new handshakes are refused.
const acceptQueueLen = 256

func newListener(t *Transport, tc *tls.Config, cfg *Config) *Listener {
	return &Listener{t: t, tls: tc, config: cfg, accept: make(chan *Conn, acceptQueueLen), closed: make(chan struct{})}
}

// Accept returns the next connection whose handshake completed.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	select {
	case c := <-l.accept:
		return c, nil
	case <-l.closed:
		return nil, errListenerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errListenerClosed = errors.New("quic: listener closed")

// Addr returns the local address.
func (l *Listener) Addr() net.Addr { return l.t.Conn.LocalAddr() }

// Close stops accepting connections; connections already accepted stay
// open, unless the Listener was made by ListenAddr, whose Transport it
// then closes too.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.t.listener.CompareAndSwap(l, nil)
		if l.ownTransport {
			go l.t.Close()
		}
	})
	return nil
}

// handleNewConnection starts a server connection for a client's first
// Initial packet. "A server MUST discard an Initial packet that is carried
// in a UDP datagram with a payload that is smaller than the smallest
// allowed maximum datagram size of 1200 bytes" (RFC 9000, Section 14.1),
// and the client's Destination Connection ID must be at least 8 bytes
// (Section 7.2).
func (l *Listener) handleNewConnection(d []byte, bp *[]byte, addr net.Addr) bool {
	select {
	case <-l.closed:
		return false
	default:
	}
	if len(d) < minInitialPacketSize {
		return false
	}
	hdr, _, err := wire.ParseLongHeader(d)
	if err != nil || hdr.Type != wire.PacketTypeInitial || hdr.DstConnID.Len() < 8 {
		return false
	}
	if l.handshakes.Load() >= int64(l.t.MaxHandshakes) || len(l.accept) >= acceptQueueLen {
		return false
	}
	c := newConn(l.t, addr, l.config)
	// Packets the client sends to its original destination ID until it
	// learns ours must reach this connection too.
	if !l.t.handlers.add(hdr.DstConnID, c) {
		return false // a retransmitted Initial raced with the first
	}
	st, err := newConnState(time.Now(), wire.RoleServer, l.config, connParams{
		tls: l.tls, connIDGen: l.t.ConnectionIDGenerator, routes: connRoutes{&l.t.handlers, c},
		peerConnID: hdr.SrcConnID, origDstConnID: hdr.DstConnID, version: hdr.Version,
		statelessReset: l.t.resetter, seed: randomSeed(),
	})
	if err != nil {
		l.t.handlers.remove(hdr.DstConnID, c)
		return false
	}
	l.handshakes.Add(1)
	c.start(st)
	go l.waitHandshake(c)
	return c.enqueue(inboundDatagram{data: d, buf: bp})
}

// waitHandshake queues c for Accept once its handshake completes.
func (l *Listener) waitHandshake(c *Conn) {
	defer l.handshakes.Add(-1)
	select {
	case <-c.handshakeDone:
		select {
		case l.accept <- c:
		case <-l.closed:
			c.CloseWithError(0, "listener closed")
		}
	case <-c.ctx.Done():
	case <-l.closed:
	}
}
