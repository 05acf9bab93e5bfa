package masque

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
)

// allowLoopback is a policy for tests, whose targets are on 127.0.0.1,
// which DefaultPolicy refuses.
func allowLoopback(r *http.Request, target netip.AddrPort) error {
	if target.Addr().IsLoopback() {
		return nil
	}
	return ErrTargetProhibited
}

type proxyEnv struct {
	proxy  *Proxy
	srv    *http3.Server
	addr   string // the proxy's UDP address
	client *Client
}

// newProxyEnv runs proxy on 127.0.0.1 and a Client for it; setup, if not
// nil, changes the server before it serves.
func newProxyEnv(t *testing.T, proxy *Proxy, setup func(*http3.Server)) *proxyEnv {
	t.Helper()
	cert, pool, err := certs.SelfSigned("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{Handler: proxy, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	ConfigureServer(srv)
	if setup != nil {
		setup(srv)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(pc)
	e := &proxyEnv{proxy: proxy, srv: srv, addr: pc.LocalAddr().String()}
	e.client = &Client{
		Template:        "https://" + e.addr + DefaultTemplate,
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"},
	}
	t.Cleanup(func() {
		e.client.Close()
		srv.Close()
		pc.Close()
	})
	return e
}

// udpServer answers each datagram on 127.0.0.1 with answer(datagram) until
// the test ends.
func udpServer(t *testing.T, answer func([]byte) []byte) *net.UDPConn {
	t.Helper()
	return udpServerFrom(t, func(q []byte, _ net.Addr) []byte { return answer(q) })
}

// udpServerFrom is udpServer with the sender's address.
func udpServerFrom(t *testing.T, answer func([]byte, net.Addr) []byte) *net.UDPConn {
	t.Helper()
	return udpServerMulti2(t, func(q []byte, from net.Addr) [][]byte {
		if a := answer(q, from); a != nil {
			return [][]byte{a}
		}
		return nil
	})
}

// udpServerMulti answers each datagram with several.
func udpServerMulti(t *testing.T, answer func([]byte) [][]byte) *net.UDPConn {
	t.Helper()
	return udpServerMulti2(t, func(q []byte, _ net.Addr) [][]byte { return answer(q) })
}

func udpServerMulti2(t *testing.T, answer func([]byte, net.Addr) [][]byte) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			for _, a := range answer(buf[:n], from) {
				c.WriteToUDP(a, from)
			}
		}
	}()
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// roundTrip writes q and reads an answer, sending q again (UDP is
// unreliable, even on loopback) until one comes or ctx ends.
func roundTrip(t *testing.T, ctx context.Context, c net.PacketConn, q []byte) []byte {
	t.Helper()
	buf := make([]byte, 65536)
	for ctx.Err() == nil {
		if _, err := c.WriteTo(q, nil); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, _, err := c.ReadFrom(buf)
		if err == nil {
			c.SetReadDeadline(time.Time{})
			return buf[:n]
		}
		if !strings.Contains(err.Error(), "deadline") {
			t.Fatal(err)
		}
	}
	t.Fatal("no answer")
	return nil
}
