package masque

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/http3"
	"golang.org/x/net/dns/dnsmessage"
)

// A DNS query through the proxy gets the answer of a DNS server on
// 127.0.0.1, which sees the query come from the proxy's socket.
func TestDNSQueryThroughProxy(t *testing.T) {
	var from net.Addr
	var fromMu sync.Mutex
	dns := udpServerFrom(t, func(q []byte, src net.Addr) []byte {
		fromMu.Lock()
		from = src
		fromMu.Unlock()
		var p dnsmessage.Parser
		h, err := p.Start(q)
		if err != nil {
			return nil
		}
		question, err := p.Question()
		if err != nil {
			return nil
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
		b.StartQuestions()
		b.Question(question)
		b.StartAnswers()
		b.AResource(dnsmessage.ResourceHeader{Name: question.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: [4]byte{192, 0, 2, 7}})
		out, _ := b.Finish()
		return out
	})
	e := newProxyEnv(t, &Proxy{Policy: allowLoopback}, nil)
	ctx := testCtx(t)
	conn, err := e.client.DialUDP(ctx, dns.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if ra, ok := conn.RemoteAddr().(*net.UDPAddr); !ok || ra.String() != dns.LocalAddr().String() {
		t.Fatalf("RemoteAddr %v", conn.RemoteAddr())
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 0x4242, RecursionDesired: true})
	b.StartQuestions()
	b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("masque.example."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	q, _ := b.Finish()
	answer := roundTrip(t, ctx, conn, q)
	var p dnsmessage.Parser
	h, err := p.Start(answer)
	if err != nil || h.ID != 0x4242 || !h.Response {
		t.Fatalf("answer header %+v, %v", h, err)
	}
	p.SkipAllQuestions()
	a, err := p.AnswerHeader()
	if err != nil || a.Name.String() != "masque.example." {
		t.Fatalf("answer %v, %v", a, err)
	}
	r, err := p.AResource()
	if err != nil || r.A != [4]byte{192, 0, 2, 7} {
		t.Fatalf("A %v, %v", r, err)
	}
	fromMu.Lock()
	defer fromMu.Unlock()
	if from == nil || from.String() == conn.LocalAddr().String() || from.String() == e.addr {
		t.Fatalf("the DNS server saw the query from %v (client %v, proxy listener %s)", from, conn.LocalAddr(), e.addr)
	}
}

// A payload from the target too large for a QUIC DATAGRAM frame is
// dropped, not sent in a DATAGRAM capsule, and the tunnel goes on: "the
// UDP proxy SHOULD NOT send the UDP payload in a DATAGRAM capsule ... the
// UDP proxy SHOULD drop the UDP payload" (RFC 9298, Section 6.1). A proxy
// that ended the tunnel here would end tunneled QUIC connections at their
// first path MTU probe.
func TestProxyDropsOversizedPayload(t *testing.T) {
	big := bytes.Repeat([]byte("B"), 60000)
	target := udpServerMulti(t, func(q []byte) [][]byte { return [][]byte{big, append([]byte("small:"), q...)} })
	e := newProxyEnv(t, &Proxy{Policy: allowLoopback}, nil)
	ctx := testCtx(t)
	conn, err := e.client.DialUDP(ctx, target.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"one", "two"} {
		if got := roundTrip(t, ctx, conn, []byte(q)); string(got) != "small:"+q {
			t.Fatalf("after the oversized payload: %d bytes %.20q", len(got), got)
		}
	}
}

// The default policy keeps the proxy from being an open relay into its
// own network: loopback, private, link-local and multicast targets are
// refused with 403 and destination_ip_prohibited (RFC 9298, Section 7).
func TestDefaultPolicyRefusesInternalTargets(t *testing.T) {
	e := newProxyEnv(t, &Proxy{}, nil)
	ctx := testCtx(t)
	for _, target := range []string{"127.0.0.1:53", "[::1]:53", "10.1.2.3:53", "192.168.0.1:53", "172.16.0.1:53",
		"169.254.1.1:53", "[fe80::1]:53", "224.0.0.1:53", "[ff02::1]:53", "0.0.0.0:53", "255.255.255.255:53", "100.64.0.1:53", "[::ffff:127.0.0.1]:53"} {
		_, err := e.client.DialUDP(ctx, target)
		var pe *ProxyError
		if !errors.As(err, &pe) || pe.StatusCode != http.StatusForbidden || pe.ProxyStatus != "quicstack; error=destination_ip_prohibited" {
			t.Errorf("%s: %v, want a 403 refusal", target, err)
		}
	}
	for _, a := range []string{"192.0.2.1", "2001:db8::1", "8.8.8.8"} {
		if err := DefaultPolicy(nil, netip.AddrPortFrom(netip.MustParseAddr(a), 53)); err != nil {
			t.Errorf("%s refused: %v", a, err)
		}
	}
}

func TestAuthenticateHook(t *testing.T) {
	target := udpServer(t, func(q []byte) []byte { return q })
	e := newProxyEnv(t, &Proxy{Policy: allowLoopback, Authenticate: func(r *http.Request) error {
		if r.Header.Get("Proxy-Authorization") != "Bearer letmein" {
			return errors.New("no")
		}
		return nil
	}}, nil)
	ctx := testCtx(t)
	_, err := e.client.DialUDP(ctx, target.LocalAddr().String())
	var pe *ProxyError
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusProxyAuthRequired {
		t.Fatalf("without credentials: %v", err)
	}
	e.client.Header = http.Header{"Proxy-Authorization": {"Bearer letmein"}}
	conn, err := e.client.DialUDP(ctx, target.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := roundTrip(t, ctx, conn, []byte("authorized")); string(got) != "authorized" {
		t.Fatalf("echo %q", got)
	}
}

// Without HTTP/3 datagrams (the server does not enable them), payloads
// travel in DATAGRAM capsules both ways (RFC 9297, Section 3.5).
func TestCapsuleFallback(t *testing.T) {
	target := udpServer(t, func(q []byte) []byte { return append([]byte("echo:"), q...) })
	e := newProxyEnv(t, &Proxy{Policy: allowLoopback}, func(s *http3.Server) { s.EnableDatagrams = false })
	ctx := testCtx(t)
	conn, err := e.client.DialUDP(ctx, target.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.str.SendDatagram([]byte{0, 1}); err != http3.ErrDatagramsNotSupported {
		t.Fatalf("datagrams negotiated: %v", err)
	}
	big := bytes.Repeat([]byte("c"), 10000) // more than a QUIC packet: capsules only
	if got := roundTrip(t, ctx, conn, big); !bytes.Equal(got, append([]byte("echo:"), big...)) {
		t.Fatalf("echo of %d bytes: %d bytes", len(big), len(got))
	}
}

// An idle tunnel closes its socket and its request stream: the client's
// reads end (RFC 9298, Section 3.1).
func TestIdleTunnelCloses(t *testing.T) {
	target := udpServer(t, func(q []byte) []byte { return q })
	e := newProxyEnv(t, &Proxy{Policy: allowLoopback, IdleTimeout: 100 * time.Millisecond}, nil)
	ctx := testCtx(t)
	conn, err := e.client.DialUDP(ctx, target.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	roundTrip(t, ctx, conn, []byte("x"))
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, _, err = conn.ReadFrom(make([]byte, 10))
	if !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on an idle tunnel: %v", err)
	}
}

// A request for a target the template does not name, or with an invalid
// port, is refused with 400.
func TestBadTargets(t *testing.T) {
	e := newProxyEnv(t, &Proxy{Policy: allowLoopback}, nil)
	ctx := testCtx(t)
	for _, target := range []string{"127.0.0.1:0", "127.0.0.1:99999", ":53"} {
		if _, err := e.client.DialUDP(ctx, target); err == nil {
			t.Errorf("%s: no error", target)
		}
	}
	// A name that does not resolve: 502 with dns_error.
	e.proxy.Resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		return nil, errors.New("no DNS in tests")
	}}
	_, err := e.client.DialUDP(ctx, "does-not-exist.invalid:53")
	var pe *ProxyError
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusBadGateway || pe.ProxyStatus != "quicstack; error=dns_error" {
		t.Fatalf("unresolvable name: %v", err)
	}
}

// MaxTunnels bounds the sockets a proxy holds: a request beyond it gets
// 503 with connection_limit_reached, and a tunnel that ends frees its
// place.
func TestMaxTunnels(t *testing.T) {
	target := udpServer(t, func(q []byte) []byte { return q })
	e := newProxyEnv(t, &Proxy{Policy: allowLoopback, MaxTunnels: 2}, nil)
	ctx := testCtx(t)
	var open []*Conn
	for range 2 {
		c, err := e.client.DialUDP(ctx, target.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		open = append(open, c)
	}
	_, err := e.client.DialUDP(ctx, target.LocalAddr().String())
	var pe *ProxyError
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusServiceUnavailable || pe.ProxyStatus != "quicstack; error=connection_limit_reached" {
		t.Fatalf("third tunnel: %v", err)
	}
	open[0].Close()
	// The proxy sees the stream end a moment later.
	for {
		c, err := e.client.DialUDP(ctx, target.LocalAddr().String())
		if err == nil {
			defer c.Close()
			if got := roundTrip(t, ctx, c, []byte("again")); string(got) != "again" {
				t.Fatalf("answer %q", got)
			}
			break
		}
		if !errors.As(err, &pe) || pe.StatusCode != http.StatusServiceUnavailable || ctx.Err() != nil {
			t.Fatalf("after a tunnel closed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := e.proxy.tunnels.Load(); n != 2 {
		t.Fatalf("%d tunnels counted, want 2", n)
	}
}
