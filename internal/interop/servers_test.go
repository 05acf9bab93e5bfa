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
	accepted := make(chan *quicgo.Conn, acceptedConns)
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			offer(accepted, c)
			go serveEcho(ctx, quicGoConn{c})
		}
	}()
	return l.Addr().String(), accepted
}

// startOurEcho is startQuicGoEcho for our implementation.
func startOurEcho(t *testing.T, ctx context.Context, stls *tls.Config, conf *ours.Config) (string, chan *ours.Conn) {
	t.Helper()
	l, err := ours.ListenAddr("127.0.0.1:0", stls, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted := make(chan *ours.Conn, acceptedConns)
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			offer(accepted, c)
			go serveEcho(ctx, ourConn{c})
		}
	}()
	return l.Addr().String(), accepted
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
	accepted := make(chan *xquic.Conn, acceptedConns)
	go func() {
		for {
			c, err := e.Accept(ctx)
			if err != nil {
				return
			}
			offer(accepted, c)
			go serveEcho(ctx, xConn{c})
		}
	}()
	return e.LocalAddr().String(), accepted
}
