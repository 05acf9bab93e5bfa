package interop

import (
	"context"
	"crypto/tls"
	"testing"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
	xquic "golang.org/x/net/quic"
)

// ourKeyUpdateInterval makes our endpoint initiate a key update every 500
// packets (a 10 MB echo is some 8,000 packets each way).
const ourKeyUpdateInterval = 500

// keyUpdateTransfer is the size echoed first while our side updates its
// keys.
const keyUpdateTransfer = 10 << 20

// echoUntilKeyUpdates echoes 10 MB on peer, then 1 MB at a time (at most
// 40 times) until our endpoint c went through three key updates. We
// initiate an update only after the peer acknowledged a packet in the
// current phase, answered the previous update in kind, and three PTOs
// passed (RFC 9001, Sections 6.1 and 6.5); so three updates mean the peer
// followed ours, and on loopback a 10 MB echo alone can be over before
// the third is allowed.
func echoUntilKeyUpdates(t *testing.T, ctx context.Context, peer peerConn, c func() *ours.Conn) {
	t.Helper()
	if err := echoOnce(ctx, peer, testData(keyUpdateTransfer)); err != nil {
		t.Fatal(err)
	}
	for i := 0; c().Stats().KeyUpdates < 3 && i < 40; i++ {
		if err := echoOnce(ctx, peer, testData(1<<20)); err != nil {
			t.Fatal(err)
		}
	}
	if n := c().Stats().KeyUpdates; n < 3 {
		t.Errorf("%d key updates after 50 MB echoed; want at least 3", n)
	} else {
		t.Logf("%d key updates", n)
	}
}

// TestFeaturesOurKeyUpdate: our endpoint initiates key updates during a
// 10 MB transfer, as client and as server, with quic-go and x/net/quic as
// the peer; the data survives and the peer follows each update.
func TestFeaturesOurKeyUpdate(t *testing.T) {
	conf := &ours.Config{KeyUpdateInterval: ourKeyUpdateInterval}
	// ourClient dials addr and echoes through it until enough updates.
	ourClient := func(t *testing.T, ctx context.Context, ctls *tls.Config, addr string) {
		c, err := ours.DialAddr(ctx, addr, ctls, conf)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		echoUntilKeyUpdates(t, ctx, ourConn{c}, func() *ours.Conn { return c })
	}
	t.Run("our client, quic-go server", func(t *testing.T) {
		ctls, stls := testTLS(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*featureTimeout)
		defer cancel()
		addr, _ := startQuicGoEcho(t, ctx, stls, nil)
		ourClient(t, ctx, ctls, addr)
	})
	t.Run("our client, x/net/quic server", func(t *testing.T) {
		ctls, stls := testTLS(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*featureTimeout)
		defer cancel()
		addr, _ := startXNetEcho(t, ctx, stls, nil)
		ourClient(t, ctx, ctls, addr)
	})
	t.Run("quic-go client, our server", func(t *testing.T) {
		ctls, stls := testTLS(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*featureTimeout)
		defer cancel()
		addr, accepted := startOurEcho(t, ctx, stls, conf)
		c, err := quicgo.DialAddr(ctx, addr, ctls, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		echoUntilKeyUpdates(t, ctx, quicGoConn{c}, acceptedConn(accepted))
	})
	t.Run("x/net/quic client, our server", func(t *testing.T) {
		ctls, stls := testTLS(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*featureTimeout)
		defer cancel()
		addr, accepted := startOurEcho(t, ctx, stls, conf)
		e, err := xquic.Listen("udp", "127.0.0.1:0", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close(context.Background())
		c, err := e.Dial(ctx, "udp", addr, &xquic.Config{TLSConfig: ctls})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Abort(nil)
		echoUntilKeyUpdates(t, ctx, xConn{c}, acceptedConn(accepted))
	})
}

// TestFeaturesVersion2 runs QUIC version 2 (RFC 9369) with quic-go in both
// roles. quic-go does not implement compatible version negotiation
// (RFC 9368), so both sides are configured to start in version 2; the
// upgrade from a version 1 first flight is tested between our own
// endpoints (conn_sim_version_test.go and TestVersionUpgradeOverUDP).
func TestFeaturesVersion2(t *testing.T) {
	t.Run("our client, quic-go server", func(t *testing.T) {
		ctls, stls := testTLS(t)
		ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
		defer cancel()
		addr, accepted := startQuicGoEcho(t, ctx, stls, &quicgo.Config{Versions: []quicgo.Version{quicgo.Version2, quicgo.Version1}})
		c, err := ours.DialAddr(ctx, addr, ctls, &ours.Config{Versions: []wire.Version{wire.Version2, wire.Version1}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		if err := echoOnce(ctx, ourConn{c}, testData(1<<20)); err != nil {
			t.Fatal(err)
		}
		if v := c.ConnectionState().Version; v != wire.Version2 {
			t.Errorf("we use %v", v)
		}
		if v := (<-accepted).ConnectionState().Version; v != quicgo.Version2 {
			t.Errorf("quic-go uses %v", v)
		}
	})
	t.Run("quic-go client, our server", func(t *testing.T) {
		ctls, stls := testTLS(t)
		ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
		defer cancel()
		addr, accepted := startOurEcho(t, ctx, stls, nil) // default: versions 1 and 2
		c, err := quicgo.DialAddr(ctx, addr, ctls, &quicgo.Config{Versions: []quicgo.Version{quicgo.Version2}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		if err := echoOnce(ctx, quicGoConn{c}, testData(1<<20)); err != nil {
			t.Fatal(err)
		}
		if v := c.ConnectionState().Version; v != quicgo.Version2 {
			t.Errorf("quic-go uses %v", v)
		}
		if v := (<-accepted).ConnectionState().Version; v != wire.Version2 {
			t.Errorf("we use %v", v)
		}
	})
}

// acceptedConn returns a function that waits for the first connection our
// server accepted, once, and then returns it.
func acceptedConn(accepted chan *ours.Conn) func() *ours.Conn {
	var c *ours.Conn
	return func() *ours.Conn {
		if c == nil {
			c = <-accepted
		}
		return c
	}
}
