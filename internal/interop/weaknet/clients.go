package main

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"

	qgo "github.com/quic-go/quic-go"
	qgh3 "github.com/quic-go/quic-go/http3"
	ours "github.com/quicstack/quic"
	oursh3 "github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/linkem"
)

func discard(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }

// oursClient is our http3.Transport dialing from a UDP socket in side A.
type oursClient struct {
	b     *bed
	cc    string
	url   string
	reuse bool

	mu sync.Mutex
	rt *oursh3.Transport
	qt *ours.Transport
}

func (b *bed) oursTransport(cc string) (*oursh3.Transport, *ours.Transport, error) {
	pc, err := b.p.ListenPacket(linkem.A, "udp4", net.JoinHostPort(b.p.Addr(linkem.A).String(), "0"))
	if err != nil {
		return nil, nil, err
	}
	qt := &ours.Transport{Conn: pc}
	rt := &oursh3.Transport{
		TLSClientConfig:    b.clientTLS(),
		QUICConfig:         b.opts.quicConf(cc),
		DisableCompression: true,
		Dial: func(ctx context.Context, addr string, tc *tls.Config, conf *ours.Config) (*ours.Conn, error) {
			ua, err := net.ResolveUDPAddr("udp4", addr)
			if err != nil {
				return nil, err
			}
			return qt.Dial(ctx, ua, tc, conf)
		},
	}
	return rt, qt, nil
}

func (c *oursClient) get(ctx context.Context, size int) error {
	c.mu.Lock()
	if c.rt == nil || !c.reuse {
		rt, qt, err := c.b.oursTransport(c.cc)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		c.rt, c.qt = rt, qt
	}
	rt, qt := c.rt, c.qt
	c.mu.Unlock()
	err := fetch(ctx, rt, c.url, size)
	if !c.reuse {
		closeLater(func() { rt.Close(); qt.Close(); qt.Conn.Close() })
	}
	return err
}

func (c *oursClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reuse && c.rt != nil {
		rt, qt := c.rt, c.qt
		closeLater(func() { rt.Close(); qt.Close(); qt.Conn.Close() })
	}
	c.rt = nil
}

// quicGoClient is quic-go's http3.Transport dialing from a UDP socket in
// side A.
type quicGoClient struct {
	b     *bed
	url   string
	reuse bool

	mu sync.Mutex
	rt *qgh3.Transport
	qt *qgo.Transport
}

func (b *bed) quicGoTransport() (*qgh3.Transport, *qgo.Transport, error) {
	pc, err := b.p.ListenPacket(linkem.A, "udp4", net.JoinHostPort(b.p.Addr(linkem.A).String(), "0"))
	if err != nil {
		return nil, nil, err
	}
	qt := &qgo.Transport{Conn: pc}
	rt := &qgh3.Transport{
		TLSClientConfig:    b.clientTLS(),
		QUICConfig:         b.opts.quicGoConf(),
		DisableCompression: true,
		Dial: func(ctx context.Context, addr string, tc *tls.Config, conf *qgo.Config) (*qgo.Conn, error) {
			ua, err := net.ResolveUDPAddr("udp4", addr)
			if err != nil {
				return nil, err
			}
			return qt.DialEarly(ctx, ua, tc, conf)
		},
	}
	return rt, qt, nil
}

func (c *quicGoClient) get(ctx context.Context, size int) error {
	c.mu.Lock()
	if c.rt == nil || !c.reuse {
		rt, qt, err := c.b.quicGoTransport()
		if err != nil {
			c.mu.Unlock()
			return err
		}
		c.rt, c.qt = rt, qt
	}
	rt, qt := c.rt, c.qt
	c.mu.Unlock()
	err := fetch(ctx, rt, c.url, size)
	if !c.reuse {
		closeLater(func() { rt.Close(); qt.Close(); qt.Conn.Close() })
	}
	return err
}

func (c *quicGoClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reuse && c.rt != nil {
		rt, qt := c.rt, c.qt
		closeLater(func() { rt.Close(); qt.Close(); qt.Conn.Close() })
	}
	c.rt = nil
}

// tcpClient is net/http's Transport over TLS 1.3 on kernel TCP, HTTP/1.1
// or HTTP/2 only, dialing from side A.
type tcpClient struct {
	b     *bed
	h2    bool
	url   string
	reuse bool

	mu sync.Mutex
	rt *http.Transport
}

func (b *bed) tcpTransport(h2 bool) *http.Transport {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return b.p.Dial(ctx, linkem.A, &net.Dialer{Control: setCC(b.opts.tcpCC)}, "tcp4", addr)
		},
		TLSClientConfig:    b.clientTLS(),
		DisableCompression: true,
		MaxConnsPerHost:    1,
		Protocols:          new(http.Protocols),
	}
	if h2 {
		tr.Protocols.SetHTTP2(true)
		tr.ForceAttemptHTTP2 = true
	} else {
		tr.Protocols.SetHTTP1(true)
	}
	return tr
}

func (c *tcpClient) get(ctx context.Context, size int) error {
	c.mu.Lock()
	if c.rt == nil || !c.reuse {
		c.rt = c.b.tcpTransport(c.h2)
	}
	rt := c.rt
	c.mu.Unlock()
	err := fetch(ctx, rt, c.url, size)
	if !c.reuse {
		closeLater(rt.CloseIdleConnections)
	}
	return err
}

func (c *tcpClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rt != nil {
		closeLater(c.rt.CloseIdleConnections)
	}
	c.rt = nil
}

// handshake makes one connection of protocol p from side A, completing
// its handshake (for TCP: the connection, then TLS 1.3), and closes it.
func (b *bed) handshake(ctx context.Context, p proto) error {
	switch p.Kind {
	case "ours":
		_, qt, err := b.oursTransport(p.CC)
		if err != nil {
			return err
		}
		defer closeLater(func() { qt.Close(); qt.Conn.Close() })
		ua, _ := net.ResolveUDPAddr("udp4", b.serverAddr(oursPort(p.CC)))
		c, err := qt.Dial(ctx, ua, b.clientTLS("h3"), b.opts.quicConf(p.CC))
		if err != nil {
			return err
		}
		closeLater(func() { c.CloseWithError(0, "") })
		return nil
	case "quic-go":
		_, qt, err := b.quicGoTransport()
		if err != nil {
			return err
		}
		defer closeLater(func() { qt.Close(); qt.Conn.Close() })
		ua, _ := net.ResolveUDPAddr("udp4", b.serverAddr(portQuicGo))
		c, err := qt.Dial(ctx, ua, b.clientTLS("h3"), b.opts.quicGoConf())
		if err != nil {
			return err
		}
		closeLater(func() { c.CloseWithError(0, "") })
		return nil
	default:
		nc, err := b.p.Dial(ctx, linkem.A, &net.Dialer{Control: setCC(b.opts.tcpCC)}, "tcp4", b.serverAddr(portTCP))
		if err != nil {
			return err
		}
		tc := tls.Client(nc, b.clientTLS("h2", "http/1.1"))
		err = tc.HandshakeContext(ctx)
		closeLater(func() { tc.Close() })
		return err
	}
}
