package interop

import (
	"context"
	"errors"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
	xquic "golang.org/x/net/quic"
)

func TestOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, accepted := startQuicGoEcho(t, ctx, stls, &quicgo.Config{MaxIncomingStreams: 1000})
	c, err := ours.DialAddr(ctx, addr, ctls, nil)
	if err != nil {
		t.Fatalf("dial quic-go: %v", err)
	}
	runEchoMatrix(t, ourConn{c})
	// The close code reaches quic-go.
	c.CloseWithError(0x1234, "bye")
	srv := <-accepted
	select {
	case <-srv.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("quic-go did not see the close")
	}
	var ae *quicgo.ApplicationError
	if err := context.Cause(srv.Context()); !errors.As(err, &ae) || ae.ErrorCode != 0x1234 || !ae.Remote || ae.ErrorMessage != "bye" {
		t.Fatalf("quic-go saw %v", err)
	}
}

func TestQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, accepted := startOurEcho(t, ctx, stls, &ours.Config{MaxIncomingStreams: 1000})
	c, err := quicgo.DialAddr(ctx, addr, ctls, nil)
	if err != nil {
		t.Fatalf("quic-go dial: %v", err)
	}
	runEchoMatrix(t, quicGoConn{c})
	// The close code reaches our server.
	c.CloseWithError(0x4321, "bye")
	srv := <-accepted
	select {
	case <-srv.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server did not see the close")
	}
	var ae *ours.ApplicationError
	if err := context.Cause(srv.Context()); !errors.As(err, &ae) || ae.Code != 0x4321 || !ae.Remote {
		t.Fatalf("server saw %v", err)
	}
}

func TestOurClientXNetServer(t *testing.T) {
	ctls, stls := testTLS(t)
	e, err := xquic.Listen("udp", "127.0.0.1:0", &xquic.Config{TLSConfig: stls, MaxBidiRemoteStreams: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer e.Close(context.Background())
	go func() {
		for {
			c, err := e.Accept(ctx)
			if err != nil {
				return
			}
			go serveEcho(ctx, xConn{c})
		}
	}()
	c, err := ours.DialAddr(ctx, e.LocalAddr().String(), ctls, nil)
	if err != nil {
		t.Fatalf("dial x/net/quic: %v", err)
	}
	runEchoMatrix(t, ourConn{c})
	c.CloseWithError(0, "")
}

func TestXNetClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _ := startOurEcho(t, ctx, stls, &ours.Config{MaxIncomingStreams: 1000})
	e, err := xquic.Listen("udp", "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	c, err := e.Dial(ctx, "udp", addr, &xquic.Config{TLSConfig: ctls})
	if err != nil {
		t.Fatalf("x/net/quic dial: %v", err)
	}
	runEchoMatrix(t, xConn{c})
	c.Close()
}
