package interop

// Echo servers of each implementation on loopback, for the tests that
// only need "a peer that echoes every stream".

import (
	"context"
	"crypto/tls"
	"testing"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
	xquic "golang.org/x/net/quic"
)

// acceptedConns is how many accepted connections a server's channel
// holds; later ones are not reported (the tests look at the first few).
const acceptedConns = 16

// offer sends c on ch unless ch is full.
func offer[T any](ch chan T, c T) {
	select {
	case ch <- c:
	default:
	}
}

// serveEchoConns accepts connections with accept until it fails, echoes
// every stream of each (wrapped for serveEcho by wrap), and returns the
// channel the accepted connections are offered on.
func serveEchoConns[C any](ctx context.Context, accept func(context.Context) (C, error), wrap func(C) peerConn) chan C {
	accepted := make(chan C, acceptedConns)
	go func() {
		for {
			c, err := accept(ctx)
			if err != nil {
				return
			}
			offer(accepted, c)
			go serveEcho(ctx, wrap(c))
		}
	}()
	return accepted
}

// startQuicGoEcho starts a quic-go server on loopback that echoes every
// stream, and returns its address and the connections it accepts. It stops
// with ctx or the test.
func startQuicGoEcho(t *testing.T, ctx context.Context, stls *tls.Config, conf *quicgo.Config) (string, chan *quicgo.Conn) {
	t.Helper()
	l, err := quicgo.ListenAddr("127.0.0.1:0", stls, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String(), serveEchoConns(ctx, l.Accept, func(c *quicgo.Conn) peerConn { return quicGoConn{c} })
}

// startOurEcho is startQuicGoEcho for our implementation.
func startOurEcho(t *testing.T, ctx context.Context, stls *tls.Config, conf *ours.Config) (string, chan *ours.Conn) {
	t.Helper()
	l, err := ours.ListenAddr("127.0.0.1:0", stls, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String(), serveEchoConns(ctx, l.Accept, func(c *ours.Conn) peerConn { return ourConn{c} })
}

// startXNetEcho is startQuicGoEcho for golang.org/x/net/quic.
func startXNetEcho(t *testing.T, ctx context.Context, stls *tls.Config, conf *xquic.Config) (string, chan *xquic.Conn) {
	t.Helper()
	if conf == nil {
		conf = &xquic.Config{}
	}
	conf.TLSConfig = stls
	e, err := xquic.Listen("udp", "127.0.0.1:0", conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e.LocalAddr().String(), serveEchoConns(ctx, e.Accept, func(c *xquic.Conn) peerConn { return xConn{c} })
}
