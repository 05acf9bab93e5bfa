package masque

import (
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

// A tunnel the proxy closes for idleness frees its place under
// MaxTunnels although the client never closes its side: "UDP proxies MAY
// choose to close sockets due to a period of inactivity, but they MUST
// close the request stream when closing the socket." (RFC 9298,
// Section 3.1)
func TestIdleTunnelFreesItsPlace(t *testing.T) {
	target := udpServer(t, func(q []byte) []byte { return q })
	e := newProxyEnv(t, &Proxy{Policy: allowLoopback, IdleTimeout: 100 * time.Millisecond, MaxTunnels: 1}, nil)
	ctx := testCtx(t)
	idle, err := e.client.DialUDP(ctx, target.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	// Not closed by the client until the end of the test.
	defer idle.Close()
	if _, _, err := idle.ReadFrom(make([]byte, 10)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on an idle tunnel: %v", err)
	}
	for {
		c, err := e.client.DialUDP(ctx, target.LocalAddr().String())
		if err == nil {
			defer c.Close()
			if got := roundTrip(t, ctx, c, []byte("again")); string(got) != "again" {
				t.Fatalf("answer %q", got)
			}
			return
		}
		var pe *ProxyError
		if !errors.As(err, &pe) || pe.StatusCode != http.StatusServiceUnavailable || ctx.Err() != nil {
			t.Fatalf("after the idle tunnel closed: %v (%d tunnels counted)", err, e.proxy.tunnels.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
