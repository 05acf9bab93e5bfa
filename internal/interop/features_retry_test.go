package interop

// Retry (address validation) against quic-go and golang.org/x/net/quic,
// both roles, and key updates initiated by quic-go.

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"

	quicgo "github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	ours "github.com/quicstack/quic"
	xquic "golang.org/x/net/quic"
)

// oursRetryServer starts our echo server validating every client address
// with Retry; it returns its address, its socket wrapper (counting Retry
// packets) and how often RequireAddressValidation was asked.
func oursRetryServer(t *testing.T, ctx context.Context, stls *tls.Config) (net.Addr, *sniffConn, *atomic.Int32) {
	t.Helper()
	sc := &sniffConn{PacketConn: loopbackUDP(t)}
	asked := new(atomic.Int32)
	tr := &ours.Transport{Conn: sc, RequireAddressValidation: func(net.Addr) bool { asked.Add(1); return true }}
	t.Cleanup(func() { tr.Close() })
	l, err := tr.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go serveEcho(ctx, ourConn{c})
		}
	}()
	return l.Addr(), sc, asked
}

// checkRetried checks the server sent a Retry. Expect 2: the client's
// first flight is 2 Initial datagrams (Go's ClientHello with its ML-KEM
// key share exceeds one packet) and a stateless server answers each; the
// client accepts only the first (RFC 9000, Section 17.2.5.2).
func checkRetried(t *testing.T, who string, sc *sniffConn) {
	t.Helper()
	if n := sc.retries.Load(); n == 0 {
		t.Errorf("%s sent no Retry packet", who)
	} else {
		t.Logf("%s sent %d Retry packet(s)", who, n)
	}
}

// TestFeaturesRetryQuicGoClientOurServer: our server validates quic-go's
// address with a Retry; the connection then works.
func TestFeaturesRetryQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	addr, sc, asked := oursRetryServer(t, ctx, stls)
	rec := &qlogRecorder{}
	c, err := quicgo.DialAddr(ctx, addr.String(), ctls, &quicgo.Config{Tracer: rec.tracer()})
	if err != nil {
		t.Fatalf("quic-go dial: %v", err)
	}
	defer c.CloseWithError(0, "")
	if err := echoOnce(ctx, quicGoConn{c}, testData(100<<10)); err != nil {
		t.Fatal(err)
	}
	checkRetried(t, "our server", sc)
	if asked.Load() == 0 {
		t.Error("RequireAddressValidation was never asked")
	}
	if _, _, r := rec.snapshot(); r == 0 {
		t.Error("quic-go client saw no Retry")
	}
}

// TestFeaturesRetryOurClientQuicGoServer: quic-go's server validates our
// address with a Retry (Transport.VerifySourceAddress).
func TestFeaturesRetryOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	// quic-go warns that a wrapped socket's buffers cannot be set.
	t.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	sc := &sniffConn{PacketConn: loopbackUDP(t)}
	var asked atomic.Int32
	qtr := &quicgo.Transport{Conn: sc, VerifySourceAddress: func(net.Addr) bool { asked.Add(1); return true }}
	defer qtr.Close()
	l, err := qtr.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go serveEcho(ctx, quicGoConn{c})
		}
	}()
	c, err := ours.DialAddr(ctx, l.Addr().String(), ctls, nil)
	if err != nil {
		t.Fatalf("dial quic-go: %v", err)
	}
	defer c.CloseWithError(0, "")
	if err := echoOnce(ctx, ourConn{c}, testData(100<<10)); err != nil {
		t.Fatal(err)
	}
	checkRetried(t, "quic-go server", sc)
	if asked.Load() == 0 {
		t.Error("VerifySourceAddress was never asked")
	}
}

// TestFeaturesRetryOurClientXNetServer: x/net/quic's server with
// RequireAddressValidation sends us a Retry.
func TestFeaturesRetryOurClientXNetServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	sc := &sniffConn{PacketConn: loopbackUDP(t)}
	e, err := xquic.NewEndpoint(sc, &xquic.Config{TLSConfig: stls, RequireAddressValidation: true})
	if err != nil {
		t.Fatal(err)
	}
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
	c, err := ours.DialAddr(ctx, sc.LocalAddr().String(), ctls, nil)
	if err != nil {
		t.Fatalf("dial x/net/quic: %v", err)
	}
	defer c.CloseWithError(0, "")
	if err := echoOnce(ctx, ourConn{c}, testData(100<<10)); err != nil {
		t.Fatal(err)
	}
	checkRetried(t, "x/net/quic server", sc)
}

// TestFeaturesRetryXNetClientOurServer: our Retry server with x/net/quic's
// client.
func TestFeaturesRetryXNetClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	addr, sc, asked := oursRetryServer(t, ctx, stls)
	e, err := xquic.Listen("udp", "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	c, err := e.Dial(ctx, "udp", addr.String(), &xquic.Config{TLSConfig: ctls})
	if err != nil {
		t.Fatalf("x/net/quic dial: %v", err)
	}
	defer c.Abort(nil)
	if err := echoOnce(ctx, xConn{c}, testData(100<<10)); err != nil {
		t.Fatal(err)
	}
	checkRetried(t, "our server", sc)
	if asked.Load() == 0 {
		t.Error("RequireAddressValidation was never asked")
	}
}

// quic-go starts its first key update after 100 packets sent or received
// with the first 1-RTT keys (internal/handshake.FirstKeyUpdateInterval,
// not configurable from outside), then every 100,000 packets. A 1 MB echo
// (some 800 packets each way) therefore makes quic-go update the keys
// once; the tests check quic-go logged a locally initiated update, that
// it then received our packets in the new key phase (we followed), and
// that the data survived it.
const keyUpdateEchoSize = 1 << 20

func checkQuicGoKeyUpdate(t *testing.T, rec *qlogRecorder) {
	t.Helper()
	updates, _, _ := rec.snapshot()
	local := 0
	for _, u := range updates {
		if u.Trigger == qlog.KeyUpdateLocal {
			local++
		}
	}
	if local == 0 {
		t.Errorf("quic-go initiated no key update (1-RTT key events: %+v)", updates)
		return
	}
	// quic-go logs one event per direction's key for each update.
	t.Logf("quic-go logged %d locally initiated 1-RTT key events", local)
	rec.mu.Lock()
	n := rec.phaseOneRcvd
	rec.mu.Unlock()
	if n == 0 {
		t.Error("quic-go received no packet of ours in key phase 1: we did not follow its key update")
	} else {
		t.Logf("quic-go received %d packets of ours in key phase 1", n)
	}
}

// TestFeaturesKeyUpdateOurClientQuicGoServer: quic-go, as server, updates
// the keys during a transfer; our client follows.
func TestFeaturesKeyUpdateOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	rec := &qlogRecorder{}
	addr, _ := startQuicGoEcho(t, ctx, stls, &quicgo.Config{Tracer: rec.tracer()})
	c, err := ours.DialAddr(ctx, addr, ctls, nil)
	if err != nil {
		t.Fatalf("dial quic-go: %v", err)
	}
	defer c.CloseWithError(0, "")
	for i := 0; i < 2; i++ {
		if err := echoOnce(ctx, ourConn{c}, testData(keyUpdateEchoSize)); err != nil {
			t.Fatalf("echo %d: %v", i+1, err)
		}
	}
	checkQuicGoKeyUpdate(t, rec)
}

// TestFeaturesKeyUpdateQuicGoClientOurServer: quic-go, as client, updates
// the keys during a transfer; our server follows.
func TestFeaturesKeyUpdateQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	addr, _ := startOurEcho(t, ctx, stls, nil)
	rec := &qlogRecorder{}
	c, err := quicgo.DialAddr(ctx, addr, ctls, &quicgo.Config{Tracer: rec.tracer()})
	if err != nil {
		t.Fatalf("quic-go dial: %v", err)
	}
	defer c.CloseWithError(0, "")
	for i := 0; i < 2; i++ {
		if err := echoOnce(ctx, quicGoConn{c}, testData(keyUpdateEchoSize)); err != nil {
			t.Fatalf("echo %d: %v", i+1, err)
		}
	}
	checkQuicGoKeyUpdate(t, rec)
}
